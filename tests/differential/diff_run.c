/* Running one differential case: build it, save its graph, make its inputs,
 * compile it in each mode on 1 and 2 workers, call each function three
 * times (weft allocating the outputs, then into caller-supplied contiguous
 * and reversed outputs), check what weft promises about itself (repeated
 * calls give the same bits, unmutable inputs are never written, fresh
 * outputs share no memory), run the gradient check for gradient cases, and
 * write everything to the stream. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

/* The modes a case is compiled in: their names in the stream, the rewrite
 * mode and the tag excluded from it. The last runs only where the rewrite
 * database knows the tag (diff_env_t.fast_math_tag). */
static const struct {
    const char *name, *mode;
    bool no_fast_math;
} modes[] = {
    { "none", "none", false },
    { "fast_compile", "fast_compile", false },
    { "fast_run", "fast_run", false },
    { "fast_run-fast_math", "fast_run", true },
};
#define N_MODES 4
#define N_CALLS 3

typedef struct case_run {
    diff_env_t *env;
    diff_case_t c;
    weft_graph_t *g;
    diff_array_t arrays[DIFF_MAX_INPUTS];
    weft_tensor_t *inputs[DIFF_MAX_INPUTS];
    bool is_mutable[DIFF_MAX_INPUTS];
    diff_record_t rec;
} case_run_t;

static void head_double(diff_buf_t *b, const char *key, double v)
{
    if (isfinite(v)) diff_buf_printf(b, ",\"%s\":%.17g", key, v);
    else diff_buf_printf(b, ",\"%s\":null", key);
}

static void head_error(diff_buf_t *b, const char *key, weft_status_t st, const char *msg)
{
    diff_buf_printf(b, ",\"%s\":\"%s\",\"%s_message\":", key, weft_status_name(st), key);
    diff_buf_json_string(b, msg);
}

/* ---- inputs ---------------------------------------------------------------------------- */

static void head_layout(diff_buf_t *b, const diff_input_t *in)
{
    diff_buf_printf(b, ",\"mutable\":%s,\"null_data\":%s,\"layout\":\"",
                    in->is_mutable ? "true" : "false", in->null_data ? "true" : "false");
    for (int d = 0; d < in->nd; d++)
        diff_buf_printf(b, "%s%d%s%s%s", d ? " " : "", in->perm[d], in->rev[d] ? "r" : "",
                        in->gap[d] > 1 ? "g" : "", in->bcast[d] ? "b" : "");
    diff_buf_printf(b, "\"}");
}

static bool make_inputs(case_run_t *cr)
{
    diff_rng_t vr;
    diff_rng_seed(&vr, cr->c.seed ^ 0x696e70757473u);
    diff_buf_printf(&cr->rec.head, ",\"inputs\":[");
    for (int i = 0; i < cr->c.n_in; i++) {
        const diff_input_t *in = &cr->c.in[i];
        weft_status_t st = diff_array_create(in, &vr, &cr->arrays[i]);
        if (st != WEFT_OK) {
            diff_buf_printf(&cr->rec.head, "]");
            head_error(&cr->rec.head, "setup_error", st, weft_tensor_last_error());
            return false;
        }
        cr->inputs[i] = cr->arrays[i].view;
        cr->is_mutable[i] = in->is_mutable;
        diff_buf_printf(&cr->rec.head, "%s{", i ? "," : "");
        diff_record_array(&cr->rec, in->dt, in->nd, in->shape, cr->arrays[i].logical);
        head_layout(&cr->rec.head, in);
    }
    diff_buf_printf(&cr->rec.head, "]");
    return true;
}

/* ---- calls ----------------------------------------------------------------------------- */

/* A caller-supplied output like `like`: contiguous, or walking a new buffer
 * backwards on every axis. */
static weft_tensor_t *supplied_output(const weft_tensor_t *like, bool reversed)
{
    weft_tensor_t *base = NULL, *view = NULL;
    int nd = weft_tensor_ndim(like);
    const int64_t *shape = weft_tensor_shape(like);
    if (weft_tensor_empty(weft_tensor_dtype(like), nd, shape, &base) != WEFT_OK) return NULL;
    if (!reversed || weft_tensor_size(like) == 0) return base;
    int64_t strides[WEFT_MAX_NDIM], offset = 0;
    for (int d = 0; d < nd; d++) {
        strides[d] = -weft_tensor_stride(base, d);
        offset -= (shape[d] - 1) * strides[d];
    }
    weft_tensor_view(base, nd, shape, strides, offset, &view);
    weft_tensor_release(base);
    return view;
}

typedef struct call_result {
    weft_status_t st;
    void *bytes[DIFF_MAX_OUTPUTS];
    size_t nbytes[DIFF_MAX_OUTPUTS];
} call_result_t;

static void call_result_free(call_result_t *r)
{
    for (int k = 0; k < DIFF_MAX_OUTPUTS; k++) free(r->bytes[k]);
}

/* Whether a fresh output shares memory with an input or an earlier output. */
static int aliased_output(const case_run_t *cr, weft_tensor_t *const *outs)
{
    for (int k = 0; k < cr->c.n_out; k++) {
        for (int i = 0; i < cr->c.n_in; i++)
            if (weft_tensor_shares_buffer(outs[k], cr->inputs[i])) return k;
        for (int j = 0; j < k; j++)
            if (weft_tensor_shares_buffer(outs[k], outs[j])) return k;
    }
    return -1;
}

static void gather_outputs(const case_run_t *cr, weft_tensor_t *const *outs, call_result_t *r)
{
    for (int k = 0; k < cr->c.n_out; k++) {
        r->nbytes[k] = weft_tensor_size(outs[k]) * weft_dtype_size(weft_tensor_dtype(outs[k]));
        r->bytes[k] = malloc(r->nbytes[k] + 1);
        if (r->bytes[k]) diff_gather(outs[k], r->bytes[k]);
    }
}

/* Notes what call `call` broke of weft's promises about itself. */
static void check_call(case_run_t *cr, int call, const call_result_t *first,
                       const call_result_t *now, weft_tensor_t *const *outs, diff_buf_t *notes)
{
    for (int i = 0; i < cr->c.n_in; i++)
        if (!cr->is_mutable[i] && !diff_array_untouched(&cr->arrays[i]))
            diff_buf_printf(notes, "%s\"call %d wrote input %d, not declared mutable\"",
                            notes->len ? "," : "", call, i);
    if (call == 0) {
        int k = now->st == WEFT_OK ? aliased_output(cr, outs) : -1;
        if (k >= 0)
            diff_buf_printf(notes, "%s\"fresh output %d shares memory with an input or output\"",
                            notes->len ? "," : "", k);
        return;
    }
    if (now->st != first->st) {
        diff_buf_printf(notes, "%s\"call %d returned %s, call 0 %s\"", notes->len ? "," : "",
                        call, weft_status_name(now->st), weft_status_name(first->st));
        return;
    }
    for (int k = 0; now->st == WEFT_OK && k < cr->c.n_out; k++)
        if (now->nbytes[k] != first->nbytes[k] || !now->bytes[k] || !first->bytes[k] ||
            memcmp(now->bytes[k], first->bytes[k], now->nbytes[k]) != 0)
            diff_buf_printf(notes, "%s\"call %d (%s outputs): output %d differs from call 0\"",
                            notes->len ? "," : "", call, call == 1 ? "contiguous" : "reversed", k);
}

static void restore_inputs(case_run_t *cr)
{
    for (int i = 0; i < cr->c.n_in; i++) diff_array_restore(&cr->arrays[i]);
}

/* Call `call` of f; outputs are weft's (call 0) or supplied like call 0's. */
static void one_call(case_run_t *cr, weft_function_t *f, int call, weft_tensor_t **first_outs,
                     call_result_t *res)
{
    weft_tensor_t *outs[DIFF_MAX_OUTPUTS] = { NULL };
    for (int k = 0; call > 0 && k < cr->c.n_out; k++)
        if (first_outs[k]) outs[k] = supplied_output(first_outs[k], call == 2);
    restore_inputs(cr);
    res->st = weft_function_call(f, (size_t)cr->c.n_in, cr->inputs, (size_t)cr->c.n_out, outs);
    if (res->st == WEFT_OK) gather_outputs(cr, outs, res);
    for (int k = 0; k < cr->c.n_out; k++) {
        if (call == 0) first_outs[k] = outs[k];
        else weft_tensor_release(outs[k]);
    }
}

static void record_outputs(case_run_t *cr, weft_tensor_t *const *outs, const call_result_t *r)
{
    diff_buf_printf(&cr->rec.head, ",\"outputs\":[");
    for (int k = 0; k < cr->c.n_out; k++) {
        diff_buf_printf(&cr->rec.head, "%s{", k ? "," : "");
        diff_record_array(&cr->rec, weft_tensor_dtype(outs[k]), weft_tensor_ndim(outs[k]),
                          weft_tensor_shape(outs[k]), r->bytes[k]);
        diff_buf_printf(&cr->rec.head, "}");
    }
    diff_buf_printf(&cr->rec.head, "]");
}

static void run_calls(case_run_t *cr, weft_function_t *f)
{
    weft_tensor_t *first_outs[DIFF_MAX_OUTPUTS] = { NULL };
    call_result_t res[N_CALLS];
    diff_buf_t notes = { 0 };
    memset(res, 0, sizeof res);
    for (int call = 0; call < N_CALLS; call++) {
        one_call(cr, f, call, first_outs, &res[call]);
        if (call == 0 && res[0].st != WEFT_OK)
            head_error(&cr->rec.head, "status", res[0].st, weft_function_last_error(f));
        else if (call == 0)
            diff_buf_printf(&cr->rec.head, ",\"status\":\"WEFT_OK\"");
        check_call(cr, call, &res[0], &res[call], first_outs, &notes);
    }
    if (res[0].st == WEFT_OK) record_outputs(cr, first_outs, &res[0]);
    diff_buf_printf(&cr->rec.head, ",\"self_checks\":[%s]", notes.data ? notes.data : "");
    for (int call = 0; call < N_CALLS; call++) call_result_free(&res[call]);
    for (int k = 0; k < cr->c.n_out; k++) weft_tensor_release(first_outs[k]);
    diff_buf_free(&notes);
}

static void run_mode(case_run_t *cr, int mode, int pool)
{
    weft_function_options_t opts = WEFT_FUNCTION_OPTIONS_INIT;
    opts.mode = modes[mode].mode;
    if (modes[mode].no_fast_math) {
        opts.n_exclude = 1;
        opts.exclude = &cr->env->fast_math_tag;
    }
    opts.pool = cr->env->pools[pool];
    opts.input_mutable = cr->is_mutable;
    opts.name = "diff";
    weft_function_t *f = NULL;
    weft_status_t st = weft_function_compile((size_t)cr->c.n_in, cr->c.in_vars,
                                             (size_t)cr->c.n_out, cr->c.out_vars, 0, NULL, &opts,
                                             &f);
    diff_buf_printf(&cr->rec.head, "%s{\"mode\":\"%s\",\"threads\":%d", mode + pool ? "," : "",
                    modes[mode].name, weft_pool_thread_count(cr->env->pools[pool]));
    if (st != WEFT_OK) head_error(&cr->rec.head, "compile", st, weft_function_last_error(NULL));
    else run_calls(cr, f);
    if (f && cr->env->print_functions) {
        fprintf(stderr, "case %llu, mode %s, %d workers:\n", (unsigned long long)cr->c.index,
                modes[mode].name, pool + 1);
        weft_function_print(f, stderr);
    }
    diff_buf_printf(&cr->rec.head, "}");
    weft_function_destroy(f);
}

/* ---- gradients ---------------------------------------------------------------------------- */

static weft_var_t *grad_build(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs, void *user)
{
    diff_case_t c = *(const diff_case_t *)user;
    return diff_gen_case(g, &c, inputs, n_in) == WEFT_OK ? c.out_vars[0] : NULL;
}

static void run_grad(case_run_t *cr)
{
    weft_tensor_t *points[DIFF_MAX_INPUTS] = { NULL };
    weft_status_t st = WEFT_OK;
    for (int i = 0; i < cr->c.n_in && st == WEFT_OK; i++)
        st = weft_tensor_from_data(cr->c.in[i].dt, cr->c.in[i].nd, cr->c.in[i].shape, NULL,
                                   cr->arrays[i].logical, &points[i]);
    weft_verify_grad_options_t o = WEFT_VERIFY_GRAD_OPTIONS_INIT;
    o.seed = cr->c.seed;
    weft_verify_grad_result_t res;
    memset(&res, 0, sizeof res);
    if (st == WEFT_OK)
        st = weft_verify_grad(grad_build, &cr->c, (size_t)cr->c.n_in, points, &o, &res);
    diff_buf_printf(&cr->rec.head, ",\"grad\":{\"status\":\"%s\",\"message\":",
                    weft_status_name(st));
    diff_buf_json_string(&cr->rec.head, res.message);
    head_double(&cr->rec.head, "max_abs_err", res.max_abs_err);
    head_double(&cr->rec.head, "max_rel_err", res.max_rel_err);
    diff_buf_printf(&cr->rec.head, "}");
    for (int i = 0; i < cr->c.n_in; i++) weft_tensor_release(points[i]);
}

/* ---- one case ------------------------------------------------------------------------------- */

static bool save_graph(case_run_t *cr)
{
    weft_graph_io_t io = { (size_t)cr->c.n_in, cr->c.in_vars, cr->is_mutable, (size_t)cr->c.n_out,
                           cr->c.out_vars, 0, NULL, NULL };
    char *text = NULL;
    weft_status_t st = weft_graph_io_save(&io, &text);
    if (st != WEFT_OK) {
        head_error(&cr->rec.head, "save_error", st, weft_graph_last_error(cr->g));
        return false;
    }
    size_t len = strlen(text);
    diff_buf_printf(&cr->rec.head, ",\"graph\":{\"off\":%zu,\"nbytes\":%zu}", cr->rec.payload.len,
                    len);
    diff_buf_append(&cr->rec.payload, text, len);
    weft_graph_io_free_text(text);
    return true;
}

static void run_built_case(case_run_t *cr)
{
    for (int i = 0; i < cr->c.n_in; i++) cr->is_mutable[i] = cr->c.in[i].is_mutable;
    if (!save_graph(cr) || !make_inputs(cr)) return;
    diff_buf_printf(&cr->rec.head, ",\"runs\":[");
    for (int mode = 0; mode < N_MODES; mode++)
        for (int pool = 0; pool < 2 && (!modes[mode].no_fast_math || cr->env->fast_math_tag);
             pool++)
            run_mode(cr, mode, pool);
    diff_buf_printf(&cr->rec.head, "]");
    if (cr->c.family == DIFF_FAM_GRAD) run_grad(cr);
}

bool diff_run_case(diff_env_t *env, uint64_t seed, uint64_t index)
{
    case_run_t *cr = calloc(1, sizeof *cr);
    if (!cr) return false;
    cr->env = env;
    cr->c.index = index;
    cr->c.seed = diff_case_seed(seed, index);
    diff_buf_printf(&cr->rec.head, "{\"case\":%llu,\"case_seed\":%llu", (unsigned long long)index,
                    (unsigned long long)cr->c.seed);
    weft_status_t st = weft_graph_create(NULL, &cr->g);
    if (st == WEFT_OK) st = diff_gen_case(cr->g, &cr->c, NULL, 0);
    diff_buf_printf(&cr->rec.head, ",\"family\":\"%s\"", diff_family_name(cr->c.family));
    if (st != WEFT_OK) head_error(&cr->rec.head, "build_error", st, weft_graph_last_error(cr->g));
    else run_built_case(cr);
    bool ok = diff_record_flush(&cr->rec, env->out);
    for (int i = 0; i < cr->c.n_in; i++) diff_array_destroy(&cr->arrays[i]);
    diff_record_free(&cr->rec);
    weft_graph_destroy(cr->g);
    free(cr);
    return ok;
}

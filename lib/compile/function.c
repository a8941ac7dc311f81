/* weft_function_compile / destroy and the function's accessors: options,
 * validation of the arguments, the compile pipeline (copy into the
 * function's context, FunctionGraph with Supervisor, DestroyHandler and
 * update pairs, in-place refusal, rewrite mode, boundary copies, protection
 * check, lowering) and teardown. docs/execution.md §1. */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/vec.h"
#include "compile_int.h"
#include "weft/node_cost.h"
#include "weft/rewrite_db.h"
#include "weft/rewrite.h"

typedef struct compile_args {
    size_t n_in, n_out, n_upd;
    weft_var_t *const *inputs, *const *outputs;
    const weft_update_t *updates;
    weft_function_options_t o;
} compile_args_t;

#define OPT_FIELD_END(f) \
    (offsetof(weft_function_options_t, f) + sizeof(((weft_function_options_t *)0)->f))

/* The fields after size, in order (keep in step with weft/function.h). */
#define OPT_FIELDS(X)                                                                       \
    X(mode) X(n_include) X(include) X(n_exclude) X(exclude) X(pool) X(threads)              \
    X(input_mutable) X(accept_inplace) X(profile) X(nan_check) X(name) X(node_threads)      \
    X(rewrite_log) X(rewrite_hook) X(rewrite_hook_user) X(cost_profile)
#define OPT_CUT(f) \
    (size > offsetof(weft_function_options_t, f) && size < OPT_FIELD_END(f)) ||

/* Whether a caller's size ends inside a field: copying that far would take
 * part of a pointer. */
static bool size_cuts_a_field(size_t size)
{
    return OPT_FIELDS(OPT_CUT) false;
}

/* Copies the caller's options, field by field as far as their size reaches. */
static weft_status_t read_options(const weft_function_options_t *in, weft_function_options_t *o)
{
    weft_function_options_t def = WEFT_FUNCTION_OPTIONS_INIT;
    *o = def;
    if (!in) return WEFT_OK;
    if (in->size < OPT_FIELD_END(mode))
        return weft__fn_error(NULL, WEFT_EINVAL, "options: size %zu too small", in->size);
    if (size_cuts_a_field(in->size))
        return weft__fn_error(NULL, WEFT_EINVAL,
                              "options: size %zu ends inside a field (not the size of any "
                              "version of weft_function_options_t)",
                              in->size);
    memcpy(o, in, in->size < sizeof *o ? in->size : sizeof *o);
    o->size = sizeof *o;
    return WEFT_OK;
}

static weft_status_t check_mode(const weft_function_options_t *o)
{
    if (!o->mode) return WEFT_OK;
    /* Modes are tags of the rewrite database: it, not compile, knows them. */
    if (strcmp(o->mode, "none") && !weft_rewrite_db_has(weft_rewrite_db_default(), o->mode))
        return weft__fn_error(NULL, WEFT_EINVAL,
                              "unknown mode '%s' (none, or a tag of the default rewrite "
                              "database such as fast_run or fast_compile)", o->mode);
    if ((o->n_include && !o->include) || (o->n_exclude && !o->exclude))
        return weft__fn_error(NULL, WEFT_EINVAL, "NULL include/exclude array with a count");
    for (size_t i = 0; i < o->n_include; i++)
        if (!o->include[i]) return weft__fn_error(NULL, WEFT_EINVAL, "include[%zu] is NULL", i);
    for (size_t i = 0; i < o->n_exclude; i++)
        if (!o->exclude[i]) return weft__fn_error(NULL, WEFT_EINVAL, "exclude[%zu] is NULL", i);
    return WEFT_OK;
}

static weft_status_t check_arrays(const compile_args_t *a)
{
    if ((a->n_in && !a->inputs) || (a->n_out && !a->outputs) || (a->n_upd && !a->updates))
        return weft__fn_error(NULL, WEFT_EINVAL, "NULL inputs/outputs/updates with a count > 0");
    if (a->n_out + a->n_upd == 0)
        return weft__fn_error(NULL, WEFT_EINVAL, "a function needs an output or an update");
    for (size_t k = 0; k < a->n_in; k++)
        if (!a->inputs[k]) return weft__fn_error(NULL, WEFT_EINVAL, "input %zu is NULL", k);
    for (size_t k = 0; k < a->n_out; k++)
        if (!a->outputs[k]) return weft__fn_error(NULL, WEFT_EINVAL, "output %zu is NULL", k);
    for (size_t u = 0; u < a->n_upd; u++)
        if (!a->updates[u].var || !a->updates[u].value)
            return weft__fn_error(NULL, WEFT_EINVAL, "update %zu has a NULL variable or value", u);
    if (a->o.threads < 0)
        return weft__fn_error(NULL, WEFT_EINVAL, "threads %d < 0", a->o.threads);
    if (a->o.node_threads < 0)
        return weft__fn_error(NULL, WEFT_EINVAL, "node_threads %d < 0", a->o.node_threads);
    if (a->o.pool && a->o.threads && a->o.threads != weft_pool_thread_count(a->o.pool))
        return weft__fn_error(NULL, WEFT_EINVAL, "threads %d does not match the pool's %d",
                              a->o.threads, weft_pool_thread_count(a->o.pool));
    return check_mode(&a->o);
}

/* A constructor error kept on the variables' graph (weft/graph.h "Errors")
 * fails the compile with its status and text, before the NULL variables it
 * may have produced are reported as bare WEFT_EINVAL. */
static weft_status_t check_kept_error(const compile_args_t *a)
{
    const weft_graph_t *g = NULL;
    for (size_t k = 0; !g && a->inputs && k < a->n_in; k++) g = weft_var_graph(a->inputs[k]);
    for (size_t k = 0; !g && a->outputs && k < a->n_out; k++) g = weft_var_graph(a->outputs[k]);
    for (size_t u = 0; !g && a->updates && u < a->n_upd; u++)
        g = weft_var_graph(a->updates[u].value ? a->updates[u].value : a->updates[u].var);
    if (weft_graph_error(g) == WEFT_OK) return WEFT_OK;
    return weft__fn_error(NULL, weft_graph_error(g), "the graph has an error: %s",
                          weft_graph_error_message(g));
}

/* Which input each update writes; each input updated at most once. */
static weft_status_t resolve_updates(weft_function_t *f, const compile_args_t *a)
{
    for (size_t u = 0; u < a->n_upd; u++) {
        size_t k = 0;
        while (k < a->n_in && a->inputs[k] != a->updates[u].var) k++;
        char name[128];
        weft_var_print(a->updates[u].var, name, sizeof name);
        if (k == a->n_in)
            return weft__fn_error(NULL, WEFT_EINVAL, "update %zu: %s is not an input", u, name);
        for (size_t v = 0; v < u; v++)
            if (f->upd_input[v] == k)
                return weft__fn_error(NULL, WEFT_EINVAL, "update %zu: %s is updated twice", u,
                                      name);
        if (!weft_type_equal(weft_var_type(a->updates[u].var),
                             weft_var_type(a->updates[u].value))) {
            char t1[96], t2[96];
            weft_type_print(weft_var_type(a->updates[u].var), t1, sizeof t1);
            weft_type_print(weft_var_type(a->updates[u].value), t2, sizeof t2);
            return weft__fn_error(NULL, WEFT_ETYPE, "update %zu: %s is %s but its value is %s", u,
                                  name, t1, t2);
        }
        f->upd_input[u] = (uint32_t)k;
    }
    return WEFT_OK;
}

/* Shared variables: a's arrays become the expanded ones (*ex, freed by the
 * caller), input_mutable is extended with false for the extra inputs. */
static weft_status_t expand_shared(compile_args_t *a, weft__compile_in_t *ex,
                                   weft__fn_shared_t **sh, bool **mutable_ex)
{
    weft__compile_in_t in = {a->n_in, a->n_out, a->n_upd, a->inputs, a->outputs, a->updates};
    weft_status_t st = weft__shared_expand(&in, ex, sh);
    if (st != WEFT_OK || !*sh) return st;
    if (a->o.input_mutable) {
        *mutable_ex = calloc(ex->n_in + 1, sizeof **mutable_ex);
        if (!*mutable_ex) {
            weft__fn_shared_free(*sh);
            *sh = NULL;
            weft__compile_in_free(ex);
            return weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
        }
        memcpy(*mutable_ex, a->o.input_mutable, a->n_in * sizeof **mutable_ex);
        a->o.input_mutable = *mutable_ex;
    }
    a->n_in = ex->n_in;
    a->n_out = ex->n_out;
    a->n_upd = ex->n_upd;
    a->inputs = ex->inputs;
    a->outputs = ex->outputs;
    a->updates = ex->updates;
    return WEFT_OK;
}

static weft_status_t function_alloc(const compile_args_t *a, weft_function_t **out)
{
    weft_function_t *f = calloc(1, sizeof *f);
    if (!f) return weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
    *out = f;
    size_t no = a->n_out + a->n_upd;
    f->n_in = a->n_in;
    f->n_out = a->n_out;
    f->n_upd = a->n_upd;
    f->name = weft__compile_strdup(a->o.name ? a->o.name : "function");
    f->in_vars = calloc(a->n_in + 1, sizeof *f->in_vars);
    f->out_vars = calloc(no + 1, sizeof *f->out_vars);
    f->upd_input = calloc(a->n_upd + 1, sizeof *f->upd_input);
    f->in_mutable = calloc(a->n_in + 1, sizeof *f->in_mutable);
    f->in_slot = calloc(a->n_in + 1, sizeof *f->in_slot);
    f->out_slot = calloc(no + 1, sizeof *f->out_slot);
    pthread_mutex_init(&f->state_lock, NULL);
    pthread_mutex_init(&f->prof_lock, NULL);
    weft_status_t st = weft__bufpool_init(&f->bufpool);
    if (st != WEFT_OK || !f->name || !f->in_vars || !f->out_vars || !f->upd_input ||
        !f->in_mutable ||
        !f->in_slot || !f->out_slot)
        return weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
    return weft_graph_create(NULL, &f->g) == WEFT_OK
               ? WEFT_OK
               : weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
}

static weft_status_t refuse_inplace(weft_function_t *f)
{
    weft_apply_t *const *nodes;
    size_t n;
    weft_status_t st = weft_fgraph_applies(f->fg, &nodes, &n);
    for (size_t i = 0; st == WEFT_OK && i < n; i++) {
        if (!weft_op_is_destructive(weft_apply_op(nodes[i]))) continue;
        char d[256];
        weft_apply_describe(nodes[i], d, sizeof d);
        return weft__fn_error(NULL, WEFT_EINVAL,
                              "Graph must not contain inplace operations: %s (set "
                              "accept_inplace to allow it)", d);
    }
    return st;
}

/* mutable_in[k]: declared mutable or updated. Unlike PyTensor, an input
 * destroyed by an accepted user in-place op is NOT made mutable implicitly:
 * the caller's buffer is overwritten only when declared (the compile fails
 * with the Supervisor's message otherwise). */
static void compute_mutable(weft_function_t *f, const compile_args_t *a, bool *mutable_in)
{
    for (size_t k = 0; k < f->n_in; k++)
        mutable_in[k] = a->o.input_mutable && a->o.input_mutable[k];
    for (size_t u = 0; u < f->n_upd; u++) mutable_in[f->upd_input[u]] = true;
}

static weft_status_t make_fgraph(weft_function_t *f, const compile_args_t *a, bool destroyers,
                                 const bool *mutable_in)
{
    weft_fgraph_options_t fo = WEFT_FGRAPH_OPTIONS_INIT;
    fo.clone = false;
    fo.input_mutable = mutable_in;
    weft_feature_t *dh = NULL;
    if (destroyers && a->o.accept_inplace) {
        weft_status_t st = weft_dh_create(NULL, &dh);
        if (st != WEFT_OK) return weft__fn_error(NULL, st, "cannot create a DestroyHandler");
        fo.n_features = 1;
        fo.features = &dh;
    }
    weft_status_t st = weft_fgraph_create(f->g, f->n_in, f->in_vars, f->n_out + f->n_upd,
                                          f->out_vars, &fo, NULL, &f->fg);
    if (st != WEFT_OK)
        return weft__fn_error(NULL, st, "building the FunctionGraph: %s",
                              weft_graph_last_error(f->g));
    /* update u is output n_out + u; the rewrites read the pairs (update_inplace) */
    for (size_t u = 0; u < f->n_upd; u++) {
        st = weft_fgraph_set_update(f->fg, f->n_out + u, f->upd_input[u]);
        if (st != WEFT_OK) return weft__fn_error(NULL, st, "%s", weft_fgraph_last_error(f->fg));
    }
    if (destroyers && !a->o.accept_inplace) return refuse_inplace(f);
    if (dh) {
        st = weft_fgraph_validate(f->fg);
        if (st != WEFT_OK) return weft__fn_error(NULL, st, "%s", weft_fgraph_last_error(f->fg));
    }
    return WEFT_OK;
}

static weft_status_t run_rewrites(weft_function_t *f, const weft_function_options_t *o)
{
    const char *mode = o->mode ? o->mode : "fast_run";
    if (!strcmp(mode, "none") && o->n_include == 0) return WEFT_OK;
    uint64_t t0 = weft__now_ns();
    if (o->rewrite_hook)
        weft_fgraph_set_replace_hook(f->fg, o->rewrite_hook, o->rewrite_hook_user);
    else
        weft_fgraph_set_replace_log(f->fg, o->rewrite_log);
    /* profiling also records the rewrite profile (weft_profile_t.rewrites) */
    if (f->profile && weft_rewrite_stats_create(&f->rewrite_stats) != WEFT_OK)
        return weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
    weft_status_t st = o->cost_profile ? weft__cost_profile_apply(f, o->cost_profile) : WEFT_OK;
    if (st == WEFT_OK)
        st = weft_rewrite_mode(f->fg, mode, o->n_include, o->include, o->n_exclude, o->exclude,
                               f->rewrite_stats);
    if (o->cost_profile && st == WEFT_OK) st = weft_fgraph_set_node_costs(f->fg, 0, NULL, NULL);
    weft_fgraph_set_replace_hook(f->fg, NULL, NULL); /* borrowed for the compile only */
    f->rewrite_ns = weft__now_ns() - t0;
    if (st != WEFT_OK && !weft_function_last_error(NULL)[0])
        weft__fn_error(NULL, st, "rewrite mode %s: %s", mode, weft_fgraph_last_error(f->fg));
    return st;
}

static weft_status_t pick_pool(weft_function_t *f, const weft_function_options_t *o)
{
    if (o->pool) {
        f->pool = o->pool;
        return WEFT_OK;
    }
    if (o->threads == 0) {
        weft_status_t st = weft__default_pool(&f->pool);
        return st == WEFT_OK ? st : weft__fn_error(NULL, st, "cannot start the default pool");
    }
    weft_status_t st = weft_pool_create(o->threads, NULL, &f->pool);
    if (st != WEFT_OK) return weft__fn_error(NULL, st, "cannot start a pool of %d", o->threads);
    f->own_pool = true;
    return WEFT_OK;
}

static weft_status_t compile_pipeline(weft_function_t *f, const compile_args_t *a)
{
    bool destroyers = false;
    weft_var_t **srcs = weft__vec_malloc(a->n_out + a->n_upd + 1, sizeof *srcs);
    bool *mutable_in = calloc(a->n_in + 1, sizeof *mutable_in);
    if (!srcs || !mutable_in) {
        free(srcs);
        free(mutable_in);
        return weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
    }
    if (a->n_out) memcpy(srcs, a->outputs, a->n_out * sizeof *srcs);
    for (size_t u = 0; u < a->n_upd; u++) srcs[a->n_out + u] = a->updates[u].value;
    weft_status_t st = weft__compile_copy_graph(f->g, a->n_in, a->inputs, a->n_out + a->n_upd,
                                                srcs, f->in_vars, f->out_vars, &destroyers);
    if (st == WEFT_OK) st = resolve_updates(f, a);
    if (st == WEFT_OK) {
        compute_mutable(f, a, mutable_in);
        memcpy(f->in_mutable, mutable_in, a->n_in * sizeof *mutable_in);
        for (size_t k = 0; k < a->n_in; k++) f->any_mutable |= mutable_in[k];
    }
    if (st == WEFT_OK) st = make_fgraph(f, a, destroyers, mutable_in);
    if (st == WEFT_OK) st = run_rewrites(f, &a->o);
    if (st == WEFT_OK) st = weft__insert_deepcopies(f);
    for (size_t k = 0; st == WEFT_OK && k < f->n_out + f->n_upd; k++)
        f->out_vars[k] = weft_fgraph_output(f->fg, k);
    if (st == WEFT_OK) st = weft__check_protected(f, mutable_in);
    if (st == WEFT_OK) st = pick_pool(f, &a->o);
    if (st == WEFT_OK) st = weft__compile_lower(f);
    if (st == WEFT_OK) st = weft__cancel_plan(f);
    free(srcs);
    free(mutable_in);
    return st;
}

weft_status_t weft_function_compile(size_t n_in, weft_var_t *const *inputs, size_t n_out,
                                    weft_var_t *const *outputs, size_t n_updates,
                                    const weft_update_t *updates,
                                    const weft_function_options_t *opts, weft_function_t **out)
{
    uint64_t t0 = weft__now_ns();
    weft__fn_clear_error(NULL);
    if (!out) return weft__fn_error(NULL, WEFT_EINVAL, "NULL out");
    *out = NULL;
    compile_args_t a = {n_in, n_out, n_updates, inputs, outputs, updates, {0}};
    weft_status_t st = read_options(opts, &a.o);
    if (st == WEFT_OK) st = check_kept_error(&a);
    if (st == WEFT_OK) st = check_arrays(&a);
    if (st == WEFT_OK) st = weft__compile_blas_check();
    if (st != WEFT_OK) return st;
    weft__compile_in_t ex;
    weft__fn_shared_t *sh = NULL;
    bool *mutable_ex = NULL;
    st = expand_shared(&a, &ex, &sh, &mutable_ex);
    if (st != WEFT_OK) return st;
    weft_function_t *f = NULL;
    st = function_alloc(&a, &f);
    if (st == WEFT_OK) {
        f->shared = sh;
        sh = NULL;
        f->serial = weft__next_serial();
        f->nan_check = a.o.nan_check;
        f->env_profile = weft__env_profile();
        f->profile = a.o.profile || f->env_profile;
        f->deferrable = a.o.deferrable_nodes;
        f->critical_path_first = a.o.critical_path_first;
        st = compile_pipeline(f, &a);
    }
    if (st == WEFT_OK) {
        f->workers = (unsigned)weft_pool_thread_count(f->pool);
        unsigned nt = (unsigned)a.o.node_threads;
        f->node_threads = nt == 0 || nt > f->workers ? f->workers : nt;
        st = weft__prof_init(f);
        if (st != WEFT_OK) weft__fn_error(NULL, st, "out of memory");
    }
    weft__fn_shared_free(sh);
    weft__compile_in_free(&ex);
    free(mutable_ex);
    if (st != WEFT_OK) {
        weft_function_destroy(f);
        return st;
    }
    f->compile_ns = weft__now_ns() - t0;
    weft__registry_add(f);
    *out = f;
    return WEFT_OK;
}

weft_status_t weft_function_destroy(weft_function_t *f)
{
    if (!f) return WEFT_OK;
    /* relaxed: see weft_function_call */
    if (atomic_load_explicit(&f->in_flight, memory_order_relaxed) != 0) return WEFT_EBUSY;
    if (f->reg_prev || f->reg_next || f->compile_ns) {
        weft__registry_remove(f);
        if (f->env_profile) weft_function_print_profile(f, stderr);
    }
    weft__states_free(f);
    weft__compile_free_program(f);
    free(f->writes_caller);
    if (f->own_pool) weft_pool_destroy(f->pool);
    weft__prof_fini(f);
    weft__fn_shared_free(f->shared);
    weft__bufpool_fini(&f->bufpool);
    weft_fgraph_destroy(f->fg);
    weft_graph_destroy(f->g);
    pthread_mutex_destroy(&f->state_lock);
    pthread_mutex_destroy(&f->prof_lock);
    free(f->out_slot);
    free(f->in_slot);
    free(f->upd_input);
    free(f->in_mutable);
    free(f->out_vars);
    free(f->in_vars);
    free(f->name);
    free(f);
    return WEFT_OK;
}

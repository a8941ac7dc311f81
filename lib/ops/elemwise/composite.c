/* Composite: a fused elementwise expression (weft/composite.h). The program
 * lives in the props; perform evaluates it block by block with the
 * elementwise row kernels of each step, so results equal the unfused graph's
 * bit for bit. */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "weft/json_props.h"
#include "ops_int.h"
#include "weft/composite.h"
#include "weft/kernel.h"

#define MAX_IN WEFT_COMPOSITE_MAX_INPUTS
#define MAX_STEPS WEFT_COMPOSITE_MAX_STEPS

/* Packed, no padding: compared and hashed bytewise. */
typedef struct composite_props {
    int32_t n_in, n_steps, inplace, unused;
    uint8_t kind[MAX_STEPS], a[MAX_STEPS], b[MAX_STEPS], c[MAX_STEPS];
} composite_props_t;

extern const weft_op_class_t weft__composite_class;

static bool kind_allowed(weft_elemwise_kind_t k)
{
    return (unsigned)k < WEFT_ELEMWISE_KIND_COUNT && k != WEFT_ELEMWISE_CAST &&
           !(k >= WEFT_ELEMWISE_LT && k <= WEFT_ELEMWISE_NE) && !weft__ew_int_is_predicate(k) &&
           k != WEFT_ELEMWISE_SWITCH; /* a bool condition: not one dtype */
}

/* ---- program checks ---------------------------------------------------------------- */

static weft_status_t check_step(weft_graph_t *g, size_t n_in, size_t s,
                                const weft_composite_step_t *st, bool *used)
{
    if (!kind_allowed(st->kind))
        return weft_graph_set_error(g, WEFT_EINVAL, "Composite: step %zu: kind %d is not an "
                                    "arithmetic kind of one dtype", s, (int)st->kind);
    for (size_t j = 0; j < weft_elemwise_arity(st->kind); j++) {
        if (st->arg[j] >= n_in + s)
            return weft_graph_set_error(g, WEFT_EINVAL, "Composite: step %zu (%s): argument %zu "
                                        "is register %u, neither an input nor an earlier step",
                                        s, weft_elemwise_name(st->kind), j, st->arg[j]);
        used[st->arg[j]] = true;
    }
    return WEFT_OK;
}

static weft_status_t check_program(weft_graph_t *g, size_t n_in, size_t n_steps,
                                   const weft_composite_step_t *steps, int inplace)
{
    if (n_in < 1 || n_in > MAX_IN || n_steps < 1 || n_steps > MAX_STEPS)
        return weft_graph_set_error(g, WEFT_EINVAL, "Composite: %zu inputs and %zu steps (1..%d "
                                    "and 1..%d)", n_in, n_steps, MAX_IN, MAX_STEPS);
    if (inplace < -1 || inplace >= (int)n_in)
        return weft_graph_set_error(g, WEFT_EINVAL, "Composite: in-place input %d outside "
                                    "[-1, %zu)", inplace, n_in);
    bool used[MAX_IN + MAX_STEPS] = {false};
    for (size_t s = 0; s < n_steps; s++) {
        weft_status_t st = check_step(g, n_in, s, &steps[s], used);
        if (st != WEFT_OK) return st;
    }
    for (size_t i = 0; i < n_in; i++)
        if (!used[i])
            return weft_graph_set_error(g, WEFT_EINVAL, "Composite: input %zu is never used", i);
    return WEFT_OK;
}

/* ---- op construction and info ------------------------------------------------------ */

weft_status_t weft_composite_op(weft_graph_t *g, size_t n_in, size_t n_steps,
                                const weft_composite_step_t *steps, int inplace_input,
                                const weft_op_t **out)
{
    if (out) *out = NULL;
    if (!g) return WEFT_EINVAL;
    if (!out || !steps) return weft_graph_set_error(g, WEFT_EINVAL, "Composite: NULL argument");
    weft_status_t st = check_program(g, n_in, n_steps, steps, inplace_input);
    if (st != WEFT_OK) return st;
    composite_props_t p;
    memset(&p, 0, sizeof p);
    p.n_in = (int32_t)n_in;
    p.n_steps = (int32_t)n_steps;
    p.inplace = inplace_input;
    for (size_t s = 0; s < n_steps; s++) {
        p.kind[s] = (uint8_t)steps[s].kind;
        p.a[s] = steps[s].arg[0];
        p.b[s] = weft_elemwise_arity(steps[s].kind) >= 2 ? steps[s].arg[1] : 0;
        p.c[s] = weft_elemwise_arity(steps[s].kind) == 3 ? steps[s].arg[2] : 0;
    }
    return weft_op_create(g, &weft__composite_class, &p, out);
}

bool weft_composite_op_info(const weft_op_t *op, size_t *n_in, size_t *n_steps,
                            weft_composite_step_t *steps, int *inplace_input)
{
    if (!op || weft_op_class(op) != &weft__composite_class) return false;
    const composite_props_t *p = weft_op_props(op);
    if (n_in) *n_in = (size_t)p->n_in;
    if (n_steps) *n_steps = (size_t)p->n_steps;
    if (inplace_input) *inplace_input = p->inplace;
    for (int s = 0; steps && s < p->n_steps; s++)
        steps[s] = (weft_composite_step_t){(weft_elemwise_kind_t)p->kind[s],
                                           {p->a[s], p->b[s], p->c[s]}};
    return true;
}

static weft_status_t composite_impl(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs,
                                    size_t n_steps, const weft_composite_step_t *steps,
                                    const char *file, int line, weft_var_t **out)
{
    if (out) *out = NULL;
    if (!g) return WEFT_EINVAL;
    if (!out || !inputs) return weft_graph_set_error(g, WEFT_EINVAL, "Composite: NULL argument");
    const weft_op_t *op;
    weft_status_t st = weft_composite_op(g, n_in, n_steps, steps, -1, &op);
    return st != WEFT_OK ? st
                         : weft__got(g, *out = weft_op_call_at(g, op, n_in, inputs, file, line));
}

/* ---- make_node ----------------------------------------------------------------------- */

static weft_status_t check_dtypes(weft_graph_t *g, const composite_props_t *p,
                                  weft_var_t *const *inputs, weft_dtype_t *dt)
{
    *dt = weft_type_dtype(weft_var_type(inputs[0]));
    for (int i = 1; i < p->n_in; i++)
        if (weft_type_dtype(weft_var_type(inputs[i])) != *dt)
            return weft_graph_set_error(g, WEFT_ETYPE, "Composite: input %d is %s, input 0 %s: "
                                        "every input has the output's dtype", i,
                                        weft_dtype_name(weft_type_dtype(weft_var_type(inputs[i]))),
                                        weft_dtype_name(*dt));
    /* Complex values do not fit its registers (8 bytes an element); the
     * fusion rewrite leaves complex nodes alone (docs/dtypes.md). */
    if (weft_dtype_kind(*dt) == WEFT_KIND_COMPLEX)
        return weft_graph_set_error(g, WEFT_ETYPE, "Composite: inputs are %s; Composite does "
                                    "not compute complex numbers", weft_dtype_name(*dt));
    for (int s = 0; s < p->n_steps; s++)
        if (p->kind[s] == WEFT_ELEMWISE_COMPLEX)
            return weft_graph_set_error(g, WEFT_ETYPE, "Composite: step %d (Complex) makes "
                                        "complex numbers, which Composite does not compute", s);
    for (int s = 0; s < p->n_steps; s++) {
        /* integer Pow checks its exponent before its kernel: not in a program */
        if (p->kind[s] == WEFT_ELEMWISE_POW && !weft__dtype_is_float(*dt))
            return weft_graph_set_error(g, WEFT_ETYPE, "Composite: step %d (Pow) on %s is not "
                                        "fused (integer Pow refuses negative exponents at run "
                                        "time, which a program cannot)", s,
                                        weft_dtype_name(*dt));
        if (*dt == WEFT_BOOL || !weft__elemwise_kernel((weft_elemwise_kind_t)p->kind[s], *dt))
            return weft_graph_set_error(g, WEFT_ETYPE, "Composite: step %d (%s) is not defined "
                                        "for %s", s,
                                        weft_elemwise_name((weft_elemwise_kind_t)p->kind[s]),
                                        weft_dtype_name(*dt));
    }
    return WEFT_OK;
}

static weft_status_t composite_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                         weft_var_t *const *inputs, size_t *n_out,
                                         const weft_type_t **out_types)
{
    const composite_props_t *p = weft_op_props(op);
    if (n_in != (size_t)p->n_in)
        return weft_graph_set_error(g, WEFT_EINVAL, "Composite takes %d inputs, got %zu",
                                    (int)p->n_in, n_in);
    int ndim = 0;
    weft_dtype_t dt = WEFT_FLOAT64;
    int64_t shape[WEFT_MAX_NDIM];
    weft_status_t st = weft__ew_check_inputs(g, "Composite", n_in, inputs, &ndim);
    if (st == WEFT_OK) st = check_dtypes(g, p, inputs, &dt);
    if (st == WEFT_OK) st = weft__ew_infer_shape(g, "Composite", n_in, inputs, ndim, shape);
    if (st == WEFT_OK) st = weft_type_tensor(g, dt, ndim, shape, &out_types[0]);
    if (st != WEFT_OK) return st;
    *n_out = 1;
    if (p->inplace >= 0 && !weft_type_equal(weft_var_type(inputs[p->inplace]), out_types[0]))
        return weft_graph_set_error(g, WEFT_ETYPE, "Composite{inplace=%d}: input %d's type "
                                    "differs from the output type", (int)p->inplace,
                                    (int)p->inplace);
    return WEFT_OK;
}

/* ---- perform ------------------------------------------------------------------------ */

/* Elements per block: a block of every step's register stays in L1 (16
 * steps x 128 x 8 bytes = 16 KB). */
#define BLOCK 128

typedef struct program {
    int n_in, n_steps;
    size_t isz;
    weft__row_fn fn[MAX_STEPS];
    uint8_t arity[MAX_STEPS], arg[MAX_STEPS][3];
} program_t;

/* One row: n elements of the output p[0] and inputs p[1..n_in], strides s. */
static void composite_row(size_t n, char *const *p, const int64_t *s, void *arg)
{
    const program_t *pr = arg;
    _Alignas(64) char reg[MAX_STEPS][BLOCK * sizeof(double)];
    for (size_t off = 0; off < n; off += BLOCK) {
        size_t len = n - off < BLOCK ? n - off : BLOCK;
        for (int k = 0; k < pr->n_steps; k++) {
            char *q[4];
            int64_t qs[4];
            bool last = k == pr->n_steps - 1;
            q[0] = last ? p[0] + (int64_t)off * s[0] * (int64_t)pr->isz : reg[k];
            qs[0] = last ? s[0] : 1;
            for (int j = 0; j < pr->arity[k]; j++) {
                int r = pr->arg[k][j];
                bool input = r < pr->n_in;
                q[1 + j] = input ? p[1 + r] + (int64_t)off * s[1 + r] * (int64_t)pr->isz
                                 : reg[r - pr->n_in];
                qs[1 + j] = input ? s[1 + r] : 1;
            }
            pr->fn[k](len, q, qs, NULL);
        }
    }
}

static int64_t program_split_min(const composite_props_t *p)
{
    int64_t m = WEFT__EW_SPLIT_CHEAP;
    for (int s = 0; s < p->n_steps; s++) {
        int64_t k = weft__ew_split_min((weft_elemwise_kind_t)p->kind[s]);
        if (k < m) m = k;
    }
    m /= p->n_steps; /* several passes' work per element */
    return m < WEFT__EW_SPLIT_COSTLY ? WEFT__EW_SPLIT_COSTLY : m;
}

static void program_load(const composite_props_t *p, weft_dtype_t dt, program_t *pr)
{
    pr->n_in = p->n_in;
    pr->n_steps = p->n_steps;
    pr->isz = weft_dtype_size(dt);
    for (int s = 0; s < p->n_steps; s++) {
        weft_elemwise_kind_t k = (weft_elemwise_kind_t)p->kind[s];
        pr->fn[s] = weft__elemwise_kernel(k, dt);
        pr->arity[s] = (uint8_t)weft_elemwise_arity(k);
        pr->arg[s][0] = p->a[s];
        pr->arg[s][1] = p->b[s];
        pr->arg[s][2] = p->c[s];
    }
}

static weft_status_t prepare_output(const composite_props_t *p, weft_tensor_t *const *in,
                                    weft_tensor_t **cell, weft_dtype_t dt, int ndim,
                                    const int64_t *shape, weft_kernel_ctx_t *ctx)
{
    int ip = weft__ew_inplace_input(p->inplace, in);
    if (ip < 0) return weft_kernel_alloc_output(ctx, cell, dt, ndim, shape);
    weft_tensor_t *t = in[ip];
    for (int d = 0; d < ndim; d++)
        if (weft_tensor_dim(t, d) != shape[d])
            return weft_kernel_error(ctx, WEFT_ESHAPE, "in-place input %d has length %lld in "
                                     "dimension %d, the result %lld", ip,
                                     (long long)weft_tensor_dim(t, d), d, (long long)shape[d]);
    weft_kernel_set_output(ctx, cell, weft_tensor_retain(t));
    return WEFT_OK;
}

/* The first run with an input geometry: every check, then a plan carrying
 * the program as its payload (docs/execution.md §3.7). */
static weft_status_t composite_plan_and_run(const weft_apply_t *node,
                                            weft_tensor_t *const *inputs,
                                            weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const composite_props_t *p = weft_op_props(weft_apply_op(node));
    const weft_type_t *ot = weft_var_type(weft_apply_output(node, 0));
    int ndim = weft_type_ndim(ot);
    weft_dtype_t dt = weft_type_dtype(ot);
    int64_t shape[WEFT_MAX_NDIM];
    size_t n_in = (size_t)p->n_in;
    weft_status_t st = weft__ew_check_input_tensors(node, inputs, n_in, ctx);
    if (st == WEFT_OK) st = weft__ew_runtime_shape(node, inputs, n_in, ndim, shape, ctx);
    if (st == WEFT_OK) st = prepare_output(p, inputs, &outputs[0], dt, ndim, shape, ctx);
    if (st != WEFT_OK) return st;
    program_t pr;
    program_load(p, dt, &pr);
    weft_tensor_t *ops[MAX_IN + 1];
    ops[0] = outputs[0];
    memcpy(ops + 1, inputs, n_in * sizeof *ops);
    weft__ew_plan_t spec = {.node = node, .n_in = (uint8_t)n_in, .ndim = (uint8_t)ndim,
                            .inplace = (int8_t)weft__ew_inplace_input(p->inplace, inputs),
                            .kind = -1, .odt = dt,
                            .compute = dt, .fn = composite_row,
                            .min_split = program_split_min(p)};
    weft__ew_plan_buf_t buf;
    const weft__ew_plan_t *plan =
        weft__ew_plan_build_with(ctx, &spec, ot, shape, inputs, ops, &pr, sizeof pr, &buf);
    st = weft__ew_plan_loop(ctx, plan, ops[0], ops + 1);
    return st == WEFT_OK ? WEFT_OK
                         : weft_kernel_error(ctx, st, "cannot split the loop over workers");
}

_Static_assert(sizeof(program_t) <= WEFT__EW_PLAN_PAYLOAD_MAX, "the program fits a plan");

/* A run whose inputs have the cached plan's geometry skips every decision. */
static weft_status_t composite_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                       weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft__ew_plan_t *plan = weft__ew_plan_cached(ctx, node, inputs);
    if (plan) return weft__ew_plan_run(ctx, plan, inputs, inputs, outputs);
    return composite_plan_and_run(node, inputs, outputs, ctx);
}

/* ---- hooks -------------------------------------------------------------------------- */

static size_t composite_destroy_map(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    const composite_props_t *p = weft_op_props(op);
    if (p->inplace < 0 || cap < 1) return 0;
    out[0] = (weft_op_alias_t){0, (uint32_t)p->inplace};
    return 1;
}

static weft_status_t composite_inplace_variant(weft_graph_t *g, const weft_op_t *op,
                                               size_t input, const weft_op_t **out)
{
    size_t n_in, n_steps;
    weft_composite_step_t steps[MAX_STEPS];
    weft_composite_op_info(op, &n_in, &n_steps, steps, NULL);
    if (input >= n_in)
        return weft_graph_set_error(g, WEFT_ENOTIMPL, "Composite has no input %zu", input);
    return weft_composite_op(g, n_in, n_steps, steps, (int)input, out);
}

static const char *const infix[WEFT_ELEMWISE_KIND_COUNT] = {
    [WEFT_ELEMWISE_ADD] = "+", [WEFT_ELEMWISE_SUB] = "-", [WEFT_ELEMWISE_MUL] = "*",
    [WEFT_ELEMWISE_DIV] = "/"};

/* Appends register r's expression at buf + *n (truncating at cap). */
static void print_reg(const composite_props_t *p, int r, char *buf, size_t cap, size_t *n)
{
#define PUT(...) (*n += (size_t)snprintf(buf + (*n < cap ? *n : cap), *n < cap ? cap - *n : 0, \
                                         __VA_ARGS__))
    if (r < p->n_in) {
        PUT("i%d", r);
        return;
    }
    int s = r - p->n_in;
    weft_elemwise_kind_t k = (weft_elemwise_kind_t)p->kind[s];
    if (infix[k]) {
        PUT("(");
        print_reg(p, p->a[s], buf, cap, n);
        PUT(" %s ", infix[k]);
        print_reg(p, p->b[s], buf, cap, n);
        PUT(")");
        return;
    }
    PUT("%s(", weft_elemwise_name(k));
    const uint8_t args[3] = {p->a[s], p->b[s], p->c[s]};
    for (size_t j = 0; j < weft_elemwise_arity(k); j++) {
        if (j) PUT(", ");
        print_reg(p, args[j], buf, cap, n);
    }
    PUT(")");
#undef PUT
}

static int composite_props_print(const void *props, char *buf, size_t cap)
{
    const composite_props_t *p = props;
    char expr[1024];
    size_t n = 0;
    print_reg(p, p->n_in + p->n_steps - 1, expr, sizeof expr, &n);
    if (p->inplace >= 0) return snprintf(buf, cap, "%s, inplace=%d", expr, (int)p->inplace);
    return snprintf(buf, cap, "%s", expr);
}

/* ---- JSON: {"n_in": 2, "steps": "Add(0,1) Tanh(2)", "inplace": -1} -------------------- */

static weft_status_t composite_to_json(const weft_op_t *op, weft_json_props_t *jp)
{
    const composite_props_t *p = weft_op_props(op);
    char text[MAX_STEPS * 24];
    size_t n = 0;
    for (int s = 0; s < p->n_steps; s++) {
        weft_elemwise_kind_t k = (weft_elemwise_kind_t)p->kind[s];
        static const char *const fmt[4] = {"", "%s%s(%u)", "%s%s(%u,%u)", "%s%s(%u,%u,%u)"};
        n += (size_t)snprintf(text + n, sizeof text - n, fmt[weft_elemwise_arity(k)],
                              s ? " " : "", weft_elemwise_name(k), p->a[s], p->b[s], p->c[s]);
    }
    weft_status_t st = weft_json_props_put_int(jp, "n_in", p->n_in);
    if (st == WEFT_OK) st = weft_json_props_put_string(jp, "steps", text);
    if (st == WEFT_OK) st = weft_json_props_put_int(jp, "inplace", p->inplace);
    return st;
}

static bool kind_by_name(const char *name, size_t len, weft_elemwise_kind_t *k)
{
    for (int i = 0; i < WEFT_ELEMWISE_KIND_COUNT; i++) {
        const char *nm = weft_elemwise_name((weft_elemwise_kind_t)i);
        if (strlen(nm) == len && strncmp(nm, name, len) == 0) {
            *k = (weft_elemwise_kind_t)i;
            return true;
        }
    }
    return false;
}

/* Parses "Name(a)", "Name(a,b)" or "Name(a,b,c)" (the kind's arity) at
 * *pos; false on a malformed step. */
static bool parse_step(const char **pos, weft_composite_step_t *st)
{
    const char *s = *pos, *open = strchr(s, '(');
    unsigned a = 0, b = 0, c = 0;
    int used = 0, got;
    if (!open || !kind_by_name(s, (size_t)(open - s), &st->kind)) return false;
    size_t arity = weft_elemwise_arity(st->kind);
    if (arity == 3) got = sscanf(open, "(%u,%u,%u)%n", &a, &b, &c, &used);
    else if (arity == 2) got = sscanf(open, "(%u,%u)%n", &a, &b, &used);
    else got = sscanf(open, "(%u)%n", &a, &used);
    if (got != (int)arity || used == 0 || a > 255 || b > 255 || c > 255) return false;
    st->arg[0] = (uint8_t)a;
    st->arg[1] = (uint8_t)b;
    st->arg[2] = (uint8_t)c;
    *pos = open + used;
    while (**pos == ' ') (*pos)++;
    return true;
}

static weft_status_t composite_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                         const weft_json_props_t *jp, const weft_op_t **out)
{
    (void)cls;
    int64_t n_in = 0, inplace = -1;
    const char *text = NULL;
    weft_status_t st = weft_json_props_get_int(jp, "n_in", &n_in);
    if (st == WEFT_OK) st = weft_json_props_get_string(jp, "steps", &text);
    if (st == WEFT_OK && weft_json_props_has(jp, "inplace"))
        st = weft_json_props_get_int(jp, "inplace", &inplace);
    if (st != WEFT_OK) return st;
    weft_composite_step_t steps[MAX_STEPS];
    size_t n = 0;
    const char *pos = text;
    while (*pos && n < MAX_STEPS)
        if (!parse_step(&pos, &steps[n++]))
            return weft_json_props_error(jp, WEFT_EPARSE, "steps: step %zu of '%s' is not "
                                            "Kind(a), Kind(a,b) or Kind(a,b,c)", n - 1, text);
    if (*pos || n_in < 1 || n_in > MAX_IN || inplace < -1 || inplace >= n_in)
        return weft_json_props_error(jp, WEFT_EPARSE, "n_in %lld, inplace %lld or steps '%s' "
                                        "out of range", (long long)n_in, (long long)inplace,
                                        text);
    st = weft_composite_op(g, (size_t)n_in, n, steps, (int)inplace, out);
    if (st != WEFT_OK)
        return weft_json_props_error(jp, st, "%s", weft_graph_last_error(g));
    return WEFT_OK;
}

const weft_op_class_t weft__composite_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Composite",
    .props_size = sizeof(composite_props_t),
    .props_print = composite_props_print,
    .make_node = composite_make_node,
    .perform = composite_perform,
    .destroy_map = composite_destroy_map,
    .inplace_variant = composite_inplace_variant,
    .props_to_json = composite_to_json,
    .props_from_json = composite_from_json,
};

weft_var_t *weft_composite_at(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs,
                              size_t n_steps, const weft_composite_step_t *steps, const char *file,
                              int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = composite_impl(g, n_in, inputs, n_steps, steps, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_composite", file, line);
}

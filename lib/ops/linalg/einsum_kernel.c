/* The Einsum op's direct kernel. It follows the node's path: each pair is
 * contracted into an intermediate in kernel scratch (the last into the
 * output), so the work is the path's, not the product of every length; a
 * single operand, or a path whose intermediate would exceed WEFT_MAX_NDIM
 * axes, takes every operand at once. In a step, every output element is
 * the sum, over the summed labels' index combinations in C order, of the
 * product of the operands' elements (each operand's offset per label is
 * the sum of the strides of its axes carrying the label, so a repeated
 * label walks the diagonal; a length-1 axis broadcasts with stride 0).
 * Slow (no blocking, no BLAS) but it serves every dtype and runs in every
 * mode; fast_run lowers float and complex einsums to Dot instead
 * (einsum_lower.c). Output elements are independent, so the split over the
 * pool (fixed ranges of output elements) gives the same bits at any worker
 * count. Sums are taken in the result dtype (integers modulo 2^bits as
 * NumPy, float16 in float32, bool as or of ands). */
#include <string.h>

#include "base/cmplx.h"
#include "base/dtype_list.h"
#include "einsum_int.h"
#include "weft/kernel.h"
#include "weft/tensor.h"

/* Multiply-adds per range at least. */
#define EIN_MIN_WORK ((int64_t)1 << 15)

typedef struct plan {
    int n_ops, n_out, n_sum;
    const char *data[WEFT_EINSUM_MAX_OPERANDS];
    char *out;
    int64_t out_len[WEFT_MAX_NDIM], sum_len[WEFT__EIN_LABELS], sum_total;
    /* element strides per operand of each output / summed label */
    int64_t out_st[WEFT_MAX_NDIM][WEFT_EINSUM_MAX_OPERANDS];
    int64_t sum_st[WEFT__EIN_LABELS][WEFT_EINSUM_MAX_OPERANDS];
} plan_t;

/* Operand offsets of output element o. */
static void out_offsets(const plan_t *p, size_t o, int64_t *off)
{
    memset(off, 0, (size_t)p->n_ops * sizeof *off);
    for (int k = p->n_out - 1; k >= 0; k--) {
        int64_t idx = (int64_t)(o % (size_t)p->out_len[k]);
        o /= (size_t)p->out_len[k];
        for (int i = 0; i < p->n_ops; i++) {
            off[i] += idx * p->out_st[k][i];
        }
    }
}

/* Steps the summed labels' odometer (the last label fastest). */
static void sum_step(const plan_t *p, int64_t *idx, int64_t *off)
{
    for (int k = p->n_sum - 1; k >= 0; k--) {
        idx[k]++;
        for (int i = 0; i < p->n_ops; i++) {
            off[i] += p->sum_st[k][i];
        }
        if (idx[k] < p->sum_len[k]) {
            return;
        }
        for (int i = 0; i < p->n_ops; i++) {
            off[i] -= p->sum_len[k] * p->sum_st[k][i];
        }
        idx[k] = 0;
    }
}

/* One range of output elements for element type T, accumulated in ACC
 * from ZERO with products started at ONE; MUL / ADD combine. */
#define EIN_RANGE(NAME, T, ACC, ZERO, ONE, MUL, ADD)                                \
    static weft_status_t NAME(void *arg, size_t begin, size_t end)                \
    {                                                                             \
        const plan_t *p = arg;                                                    \
        int64_t off[WEFT_EINSUM_MAX_OPERANDS], idx[WEFT__EIN_LABELS];             \
        for (size_t o = begin; o < end; o++) {                                    \
            out_offsets(p, o, off);                                               \
            memset(idx, 0, sizeof idx);                                           \
            ACC acc = ZERO;                                                       \
            for (int64_t s = 0; s < p->sum_total; s++) {                          \
                ACC prod = ONE;                                                   \
                for (int i = 0; i < p->n_ops; i++) {                              \
                    prod = MUL(prod, (ACC)((const T *)p->data[i])[off[i]]);       \
                }                                                                 \
                acc = ADD(acc, prod);                                             \
                sum_step(p, idx, off);                                            \
            }                                                                     \
            ((T *)p->out)[o] = (T)acc;                                            \
        }                                                                         \
        return WEFT_OK;                                                           \
    }

#define EIN_MUL(a, b) ((a) * (b))
#define EIN_ADD(a, b) ((a) + (b))
#define EIN_AND(a, b) ((a) & ((b) != 0))
#define EIN_OR(a, b) ((a) | (b))

/* Integers in uint64 (wrapping, then truncated to the width: NumPy's
 * modular result); floats in their own type, float16 in float. */
#define EIN_INT(A, B, T, U, SN, DT) EIN_RANGE(ein_##SN, T, uint64_t, 0, 1, EIN_MUL, EIN_ADD)
WEFT__SINT_DTYPES(EIN_INT, ~, ~)
WEFT__UINT_DTYPES(EIN_INT, ~, ~)
#define EIN_FLOAT(A, B, T, SN, DT) EIN_RANGE(ein_##SN, T, T, 0, 1, EIN_MUL, EIN_ADD)
WEFT__FLOAT_DTYPES(EIN_FLOAT, ~, ~)
EIN_RANGE(ein_f16, weft__f16, float, 0, 1, EIN_MUL, EIN_ADD)
EIN_RANGE(ein_c64, float _Complex, float _Complex, 0, 1, EIN_MUL, EIN_ADD)
EIN_RANGE(ein_c128, double _Complex, double _Complex, 0, 1, EIN_MUL, EIN_ADD)
EIN_RANGE(ein_bool, weft__bool_el, unsigned, 0, 1, EIN_AND, EIN_OR)

static weft_kernel_range_fn range_fn(weft_dtype_t dt)
{
    switch (dt) {
#define EIN_CASE_I(A, B, T, U, SN, DT) \
    case DT:                           \
        return ein_##SN;
#define EIN_CASE_F(A, B, T, SN, DT) \
    case DT:                        \
        return ein_##SN;
        WEFT__SINT_DTYPES(EIN_CASE_I, ~, ~)
        WEFT__UINT_DTYPES(EIN_CASE_I, ~, ~)
        WEFT__FLOAT_DTYPES(EIN_CASE_F, ~, ~)
    case WEFT_FLOAT16:
        return ein_f16;
    case WEFT_COMPLEX64:
        return ein_c64;
    case WEFT_COMPLEX128:
        return ein_c128;
    case WEFT_BOOL:
        return ein_bool;
    default:
        return NULL;
    }
}

/* Fills the plan's labels and strides from the parsed spec and the run-time
 * lengths. */
static void plan_labels(plan_t *p, const weft__ein_spec_t *spec, const int64_t *len,
                        weft_tensor_t *const *in)
{
    bool in_out[WEFT__EIN_LABELS] = {false}, used[WEFT__EIN_LABELS] = {false};
    int slot[WEFT__EIN_LABELS];
    for (int k = 0; k < spec->n_out; k++) {
        in_out[spec->out[k]] = true;
        slot[spec->out[k]] = k;
        p->out_len[k] = len[spec->out[k]];
    }
    p->n_out = spec->n_out;
    p->n_sum = 0;
    p->sum_total = 1;
    for (int i = 0; i < spec->n; i++) {
        for (int a = 0; a < spec->nd[i]; a++) {
            int l = spec->lab[i][a];
            if (!in_out[l] && !used[l]) {
                used[l] = true;
                slot[l] = p->n_sum;
                p->sum_len[p->n_sum++] = len[l];
                p->sum_total *= len[l];
            }
        }
    }
    memset(p->out_st, 0, sizeof p->out_st);
    memset(p->sum_st, 0, sizeof p->sum_st);
    for (int i = 0; i < spec->n; i++) {
        for (int a = 0; a < spec->nd[i]; a++) {
            int l = spec->lab[i][a];
            int64_t st = weft_tensor_dim(in[i], a) == 1 ? 0 : weft_tensor_stride(in[i], a);
            if (in_out[l]) {
                p->out_st[slot[l]][i] += st;
            } else {
                p->sum_st[slot[l]][i] += st;
            }
        }
    }
}

/* The parsed subscripts and the run-time label lengths. */
static weft_status_t spec_build(const weft__einsum_props_t *props, weft_tensor_t *const *in,
                                weft__ein_spec_t *spec, int64_t *len, weft_kernel_ctx_t *ctx)
{
    int nd[WEFT_EINSUM_MAX_OPERANDS];
    const int64_t *dims[WEFT_EINSUM_MAX_OPERANDS];
    char msg[256];
    for (int i = 0; i < props->n_operands; i++) {
        nd[i] = weft_tensor_ndim(in[i]);
        dims[i] = weft_tensor_shape(in[i]);
    }
    if (weft__ein_parse(props->subscripts, props->n_operands, nd, spec, msg, sizeof msg) !=
        WEFT_OK) {
        return weft_kernel_error(ctx, WEFT_ESHAPE, "Einsum '%s': %s", props->subscripts, msg);
    }
    int bad = 0, axis = 0;
    if (!weft__ein_lengths(spec, dims, len, &bad, &axis)) {
        return weft_kernel_error(ctx, WEFT_ESHAPE, "Einsum '%s': operand %d has length %lld on "
                                 "axis %d, which does not match its subscript's other lengths",
                                 props->subscripts, bad, (long long)dims[bad][axis], axis);
    }
    return WEFT_OK;
}

/* An operand of a step: a tensor (an input, or scratch the kernel owns)
 * and its labels. */
typedef struct kterm {
    weft_tensor_t *t;
    bool scratch;
    int nd;
    int8_t lab[WEFT_MAX_NDIM];
} kterm_t;

/* The einsum of terms t[0..n) into dst, whose axes carry out[0..n_out). */
static weft_status_t run_step(weft_kernel_ctx_t *ctx, weft_kernel_range_fn fn, plan_t *p, int n,
                              const kterm_t *t, int n_out, const int8_t *out, const int64_t *len,
                              weft_tensor_t *dst)
{
    weft__ein_spec_t sub;
    weft_tensor_t *v[WEFT_EINSUM_MAX_OPERANDS];
    sub.n = n;
    sub.n_out = n_out;
    memcpy(sub.out, out, (size_t)n_out);
    for (int i = 0; i < n; i++) {
        sub.nd[i] = t[i].nd;
        memcpy(sub.lab[i], t[i].lab, (size_t)t[i].nd);
        v[i] = t[i].t;
        p->data[i] = weft_tensor_data(t[i].t);
    }
    p->n_ops = n;
    plan_labels(p, &sub, len, v);
    p->out = weft_tensor_data(dst);
    size_t total = weft_tensor_size(dst);
    int64_t per = p->sum_total * n > 0 ? p->sum_total * n : 1;
    size_t grain = (size_t)(EIN_MIN_WORK / per > 0 ? EIN_MIN_WORK / per : 1);
    return total == 0 ? WEFT_OK : weft_kernel_parallel_for(ctx, total, grain, fn, p);
}

/* The labels of the pair (i, j)'s result among n terms: theirs that the
 * output or another term needs, in order; -1 when above WEFT_MAX_NDIM. */
static int pair_labels(const kterm_t *list, int n, int i, int j, const weft__ein_spec_t *spec,
                       int8_t *res)
{
    bool keep[WEFT__EIN_LABELS] = {false}, seen[WEFT__EIN_LABELS] = {false};
    for (int k = 0; k < spec->n_out; k++) {
        keep[spec->out[k]] = true;
    }
    for (int t = 0; t < n; t++) {
        for (int a = 0; t != i && t != j && a < list[t].nd; a++) {
            keep[list[t].lab[a]] = true;
        }
    }
    int m = 0;
    for (int s = 0; s < 2; s++) {
        const kterm_t *t = &list[s ? j : i];
        for (int a = 0; a < t->nd; a++) {
            int l = t->lab[a];
            if (keep[l] && !seen[l]) {
                if (m == WEFT_MAX_NDIM) {
                    return -1;
                }
                seen[l] = true;
                res[m++] = (int8_t)l;
            }
        }
    }
    return m;
}

/* Replaces terms i < j of list by r. */
static void list_pop_pair(kterm_t *list, int n, int i, int j, const kterm_t *r)
{
    memmove(&list[j], &list[j + 1], (size_t)(n - j - 1) * sizeof *list);
    memmove(&list[i], &list[i + 1], (size_t)(n - i - 2) * sizeof *list);
    list[n - 2] = *r;
}

/* Whether every intermediate of the path fits WEFT_MAX_NDIM axes. */
static bool path_fits(const weft__einsum_props_t *props, const weft__ein_spec_t *spec)
{
    kterm_t list[WEFT_EINSUM_MAX_OPERANDS];
    for (int i = 0; i < spec->n; i++) {
        list[i].nd = spec->nd[i];
        memcpy(list[i].lab, spec->lab[i], (size_t)spec->nd[i]);
    }
    for (int k = 0, n = spec->n; n > 2; k++, n--) {
        kterm_t r;
        if ((r.nd = pair_labels(list, n, props->path[2 * k], props->path[2 * k + 1], spec,
                                r.lab)) < 0) {
            return false;
        }
        list_pop_pair(list, n, props->path[2 * k], props->path[2 * k + 1], &r);
    }
    return true;
}

/* The path's pairs in turn, intermediates in kernel scratch, the last pair
 * into the output. */
static weft_status_t run_path(weft_kernel_ctx_t *ctx, weft_kernel_range_fn fn, plan_t *p,
                              const weft__einsum_props_t *props, const weft__ein_spec_t *spec,
                              const int64_t *len, weft_tensor_t *const *in, weft_tensor_t **cell)
{
    kterm_t list[WEFT_EINSUM_MAX_OPERANDS];
    weft_dtype_t dt = weft_tensor_dtype(in[0]);
    int n = spec->n;
    for (int i = 0; i < n; i++) {
        list[i] = (kterm_t){in[i], false, spec->nd[i], {0}};
        memcpy(list[i].lab, spec->lab[i], (size_t)spec->nd[i]);
    }
    weft_status_t st = WEFT_OK;
    for (int k = 0; st == WEFT_OK && n > 1; k++, n--) {
        int i = props->path[2 * k], j = props->path[2 * k + 1];
        kterm_t r = {NULL, n > 2, 0, {0}};
        int64_t shape[WEFT_MAX_NDIM];
        if (n > 2) {
            r.nd = pair_labels(list, n, i, j, spec, r.lab); /* fits: path_fits */
        } else {
            r.nd = spec->n_out;
            memcpy(r.lab, spec->out, (size_t)r.nd);
        }
        for (int a = 0; a < r.nd; a++) {
            shape[a] = len[r.lab[a]];
        }
        if (n > 2) {
            st = weft_kernel_scratch(ctx, dt, r.nd, shape, &r.t);
        } else {
            st = weft_kernel_alloc_output(ctx, cell, dt, r.nd, shape);
            r.t = *cell;
        }
        kterm_t pair[2] = {list[i], list[j]};
        if (st == WEFT_OK) {
            st = run_step(ctx, fn, p, 2, pair, r.nd, r.lab, len, r.t);
        }
        for (int s = 0; s < 2; s++) {
            if (pair[s].scratch) {
                weft_kernel_scratch_done(ctx, pair[s].t);
            }
        }
        list_pop_pair(list, n, i, j, &r);
    }
    for (int i = 0; st != WEFT_OK && i < n; i++) { /* a failed step: the scratch left */
        if (list[i].scratch) {
            weft_kernel_scratch_done(ctx, list[i].t);
        }
    }
    return st;
}

weft_status_t weft__einsum_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                   weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft__einsum_props_t *props = weft_op_props(weft_apply_op(node));
    weft_dtype_t dt = weft_tensor_dtype(inputs[0]);
    weft_kernel_range_fn fn = range_fn(dt);
    if (!fn) {
        return weft_kernel_error(ctx, WEFT_ETYPE, "Einsum: no kernel for dtype %s",
                                 weft_dtype_name(dt));
    }
    plan_t p;
    weft__ein_spec_t spec;
    int64_t len[WEFT__EIN_LABELS];
    weft_status_t st = spec_build(props, inputs, &spec, len, ctx);
    if (st != WEFT_OK) {
        return st;
    }
    if (spec.n > 1 && path_fits(props, &spec)) {
        return run_path(ctx, fn, &p, props, &spec, len, inputs, &outputs[0]);
    }
    /* one operand, or an intermediate too wide: every operand at once */
    kterm_t all[WEFT_EINSUM_MAX_OPERANDS];
    int64_t shape[WEFT_MAX_NDIM];
    for (int i = 0; i < spec.n; i++) {
        all[i] = (kterm_t){inputs[i], false, spec.nd[i], {0}};
        memcpy(all[i].lab, spec.lab[i], (size_t)spec.nd[i]);
    }
    for (int a = 0; a < spec.n_out; a++) {
        shape[a] = len[spec.out[a]];
    }
    st = weft_kernel_alloc_output(ctx, &outputs[0], dt, spec.n_out, shape);
    return st == WEFT_OK ? run_step(ctx, fn, &p, spec.n, all, spec.n_out, spec.out, len,
                                    outputs[0])
                         : st;
}

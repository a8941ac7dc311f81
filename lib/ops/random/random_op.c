/* The random op classes (weft/random.h, docs/random.md): RandomUniform,
 * RandomNormal, RandomBernoulli, RandomCategorical, RandomIntegers and
 * RandomPermutation. Inputs: the key (int64[2]) then the parameters (each
 * of the sample's rank, categorical's p one more: the constructors pad and
 * convert them); outputs: the new key and the sample. They never fold at
 * compile time and write no input. */
#include <stdio.h>
#include <string.h>

#include "graph/site.h"
#include "weft/json_props.h"
#include "random_int.h"

/* Elements per range of the split loop: fixed, so the split never depends
 * on the worker count (each element's bits do not depend on it anyway). */
#define RANDOM_GRAIN 8192

typedef struct kind_info {
    int n_par;
    weft_dtype_t par_dtype; /* -1: the sample's dtype */
    weft_dtype_t out_dtype; /* -1: the props' dtype (float32 or float64) */
} kind_info_t;

static const kind_info_t kinds[WEFT__RANDOM_KIND_COUNT] = {
    [WEFT__RANDOM_UNIFORM] = {2, (weft_dtype_t)-1, (weft_dtype_t)-1},
    [WEFT__RANDOM_NORMAL] = {2, (weft_dtype_t)-1, (weft_dtype_t)-1},
    [WEFT__RANDOM_BERNOULLI] = {1, WEFT_FLOAT64, WEFT_BOOL},
    [WEFT__RANDOM_CATEGORICAL] = {1, WEFT_FLOAT64, WEFT_INT64},
    [WEFT__RANDOM_INTEGERS] = {2, WEFT_INT64, WEFT_INT64},
    [WEFT__RANDOM_PERMUTATION] = {0, WEFT_INT64, WEFT_INT64},
};

static weft__random_kind_t kind_of(const weft_op_t *op)
{
    return (weft__random_kind_t)(weft_op_class(op) - weft__random_classes);
}

weft_dtype_t weft__random_out_dtype(weft__random_kind_t k, weft_dtype_t props_dtype)
{
    return kinds[k].out_dtype == (weft_dtype_t)-1 ? props_dtype : kinds[k].out_dtype;
}

weft_dtype_t weft__random_par_dtype(weft__random_kind_t k, weft_dtype_t props_dtype)
{
    return kinds[k].par_dtype == (weft_dtype_t)-1 ? props_dtype : kinds[k].par_dtype;
}

int weft__random_n_par(weft__random_kind_t k)
{
    return kinds[k].n_par;
}

const char *weft__random_name(weft__random_kind_t k)
{
    return weft__random_classes[k].name;
}

/* ---- make_node ------------------------------------------------------------- */

/* "input 1 ('low', created at f.c:12)" */
static const char *describe_input(char *buf, size_t cap, size_t i, const weft_var_t *v)
{
    const char *file, *name = weft_var_name(v);
    int line;
    char site[WEFT__SITE_CAP];
    weft_var_trace(v, &file, &line);
    snprintf(buf, cap, "input %zu (%s%s%screated at %s)", i, name ? "'" : "", name ? name : "",
             name ? "', " : "", weft__site_str(site, sizeof site, file, line));
    return buf;
}

static weft_status_t check_key_type(weft_graph_t *g, const char *name, weft_var_t *key)
{
    const weft_type_t *t = weft_var_type(key);
    int64_t len = weft_type_dim(t, 0);
    if (weft_type_kind(t) == WEFT_TYPE_TENSOR && weft_type_dtype(t) == WEFT_INT64 &&
        weft_type_ndim(t) == 1 && (len == 2 || len == WEFT_DIM_UNKNOWN))
        return WEFT_OK;
    char d[WEFT__SITE_CAP + 64], tb[128];
    weft_type_print(t, tb, sizeof tb);
    return weft_graph_set_error(g, WEFT_ETYPE, "%s: the key, %s, has type %s (need int64[2])",
                                name, describe_input(d, sizeof d, 0, key), tb);
}

static weft_status_t check_param_type(weft_graph_t *g, const char *name,
                                      const weft__random_props_t *p, weft__random_kind_t k,
                                      size_t i, weft_var_t *v)
{
    const weft_type_t *t = weft_var_type(v);
    int nd = p->ndim + (k == WEFT__RANDOM_CATEGORICAL);
    weft_dtype_t want = weft__random_par_dtype(k, (weft_dtype_t)p->dtype);
    char d[WEFT__SITE_CAP + 64], tb[128];
    describe_input(d, sizeof d, i, v);
    if (weft_type_kind(t) != WEFT_TYPE_TENSOR || weft_type_dtype(t) != want ||
        weft_type_ndim(t) != nd) {
        weft_type_print(t, tb, sizeof tb);
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: %s has type %s (need %s with %d dims)",
                                    name, d, tb, weft_dtype_name(want), nd);
    }
    for (int a = 0; a < p->ndim; a++) {
        int64_t l = weft_type_dim(t, a);
        if (l != 1 && l != WEFT_DIM_UNKNOWN && l != p->shape[a])
            return weft_graph_set_error(g, WEFT_ESHAPE, "%s: %s has length %lld in dimension "
                                        "%d, which does not broadcast to the sample's %lld",
                                        name, d, (long long)l, a, (long long)p->shape[a]);
    }
    return WEFT_OK;
}

static weft_status_t random_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                      weft_var_t *const *inputs, size_t *n_out,
                                      const weft_type_t **out_types)
{
    const weft__random_props_t *p = weft_op_props(op);
    weft__random_kind_t k = kind_of(op);
    const char *name = weft__random_name(k);
    if (n_in != (size_t)kinds[k].n_par + 1)
        return weft_graph_set_error(g, WEFT_EINVAL, "%s takes %d inputs, got %zu", name,
                                    kinds[k].n_par + 1, n_in);
    weft_status_t st = check_key_type(g, name, inputs[0]);
    for (size_t i = 1; st == WEFT_OK && i < n_in; i++)
        st = check_param_type(g, name, p, k, i, inputs[i]);
    const int64_t two = 2;
    if (st == WEFT_OK) st = weft_type_tensor(g, WEFT_INT64, 1, &two, &out_types[0]);
    if (st == WEFT_OK)
        st = weft_type_tensor(g, weft__random_out_dtype(k, (weft_dtype_t)p->dtype), p->ndim,
                              p->shape, &out_types[1]);
    *n_out = 2;
    return st;
}

/* ---- perform ---------------------------------------------------------------- */

/* The key's two words; the new key {key, stream + 1} into output 0. */
static weft_status_t key_step(weft_kernel_ctx_t *ctx, const char *name, const weft_tensor_t *kt,
                              weft_tensor_t **cell, weft__rkey_t *key)
{
    if (weft_tensor_dtype(kt) != WEFT_INT64 || weft_tensor_ndim(kt) != 1 ||
        weft_tensor_dim(kt, 0) != 2)
        return weft_kernel_error(ctx, WEFT_ESHAPE, "%s: the key (input 0) has %lld elements "
                                 "(need 2)", name, (long long)weft_tensor_size(kt));
    const int64_t *kd = weft_tensor_data(kt), two = 2;
    uint64_t k = (uint64_t)kd[0], s = (uint64_t)kd[weft_tensor_stride(kt, 0)];
    weft_status_t st = weft_kernel_alloc_output(ctx, cell, WEFT_INT64, 1, &two);
    if (st != WEFT_OK) return st;
    int64_t *nk = weft_tensor_data(*cell);
    nk[0] = (int64_t)k;
    nk[1] = (int64_t)(s + 1); /* wraps modulo 2^64 (docs/random.md §2) */
    *key = (weft__rkey_t){(uint32_t)k, (uint32_t)(k >> 32), (uint32_t)s, (uint32_t)(s >> 32)};
    return WEFT_OK;
}

/* Parameter j (contiguous c) read through strides over the sample's axes;
 * its lengths must equal the sample's except a static length 1. */
static weft_status_t param_strides(weft_kernel_ctx_t *ctx, const char *name,
                                   const weft__random_props_t *p, const weft_type_t *ty,
                                   size_t j, const weft_tensor_t *c, int64_t *strides)
{
    int nd = weft_tensor_ndim(c);
    if (nd != weft_type_ndim(ty))
        return weft_kernel_error(ctx, WEFT_ESHAPE, "%s: input %zu has %d dims (need %d)", name,
                                 j + 1, nd, weft_type_ndim(ty));
    int64_t run = 1;
    for (int a = nd - 1; a >= 0; a--) {
        int64_t l = weft_tensor_dim(c, a);
        if (a < p->ndim) {
            bool bcast = l == 1 && weft_type_dim(ty, a) == 1;
            if (l != p->shape[a] && !bcast)
                return weft_kernel_error(ctx, WEFT_ESHAPE, "%s: input %zu has length %lld in "
                                         "dimension %d, the sample %lld", name, j + 1,
                                         (long long)l, a, (long long)p->shape[a]);
            strides[a] = l == 1 ? 0 : run;
        }
        run *= l;
    }
    return WEFT_OK;
}

static weft_status_t run_permutation(weft_kernel_ctx_t *ctx, const weft__random_props_t *p,
                                     const weft__rkey_t *key, weft_tensor_t *out)
{
    int64_t n = p->shape[0], len = 2 * n;
    weft_tensor_t *scratch = NULL;
    weft_status_t st = weft_kernel_scratch(ctx, WEFT_INT64, 1, &len, &scratch);
    if (st != WEFT_OK) return st;
    weft__random_permutation(key, n, weft_tensor_data(out), weft_tensor_data(scratch));
    weft_kernel_scratch_done(ctx, scratch);
    return WEFT_OK;
}

/* Binds the contiguous parameters into job and fills the sample. */
static weft_status_t run_draw(weft_kernel_ctx_t *ctx, const weft_apply_t *node,
                              weft_tensor_t *const *c, weft__rjob_t *job)
{
    const weft__random_props_t *p = weft_op_props(weft_apply_op(node));
    const char *name = weft__random_name(job->kind);
    int64_t n = 1, rows = 1;
    for (int a = 0; a < p->ndim; a++) n *= p->shape[a];
    for (int j = 0; j < kinds[job->kind].n_par; j++) {
        const weft_type_t *ty = weft_var_type(weft_apply_input(node, (size_t)j + 1));
        weft_status_t st = param_strides(ctx, name, p, ty, (size_t)j, c[j], job->pstride[j]);
        if (st != WEFT_OK) return st;
        job->par[j] = weft_tensor_data(c[j]);
    }
    if (job->kind == WEFT__RANDOM_CATEGORICAL) {
        job->ncat = weft_tensor_dim(c[0], p->ndim);
        job->cat_stride = 1;
        rows = job->ncat ? (int64_t)weft_tensor_size(c[0]) / job->ncat : 0;
    }
    weft_status_t st = weft__random_check_params(ctx, name, job, n, rows);
    if (st != WEFT_OK || n == 0) return st;
    st = weft_kernel_parallel_for(ctx, (size_t)n, RANDOM_GRAIN, weft__random_fill, job);
    return st == WEFT_OK ? st : weft_kernel_error(ctx, st, "%s: the split loop failed", name);
}

static weft_status_t random_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                    weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft__random_props_t *p = weft_op_props(weft_apply_op(node));
    weft__rjob_t job;
    memset(&job, 0, sizeof job);
    job.kind = kind_of(weft_apply_op(node));
    job.ndim = p->ndim;
    memcpy(job.shape, p->shape, sizeof job.shape);
    job.dtype = weft__random_out_dtype(job.kind, (weft_dtype_t)p->dtype);
    weft_status_t st = key_step(ctx, weft__random_name(job.kind), inputs[0], &outputs[0], &job.key);
    if (st == WEFT_OK)
        st = weft_kernel_alloc_output(ctx, &outputs[1], job.dtype, p->ndim, p->shape);
    if (st != WEFT_OK) return st;
    job.out = weft_tensor_data(outputs[1]);
    if (job.kind == WEFT__RANDOM_PERMUTATION) return run_permutation(ctx, p, &job.key, outputs[1]);
    weft_tensor_t *c[2] = {NULL, NULL};
    int n_par = kinds[job.kind].n_par;
    for (int j = 0; st == WEFT_OK && j < n_par; j++)
        st = weft_kernel_contiguous(ctx, inputs[j + 1], &c[j]);
    if (st == WEFT_OK) st = run_draw(ctx, node, c, &job);
    for (int j = 0; j < n_par; j++) weft_kernel_contiguous_done(ctx, inputs[j + 1], c[j]);
    return st;
}

/* Folding would bake one draw of the key into the graph as a constant (and
 * a large one): the draws stay nodes (docs/random.md §6). */
static bool random_no_folding(const weft_apply_t *node)
{
    (void)node;
    return false;
}

/* ---- props: print, JSON ------------------------------------------------------ */

static int random_props_print(const void *props, char *buf, size_t cap)
{
    const weft__random_props_t *p = props;
    char shape[WEFT_MAX_NDIM * 21 + 1] = ""; /* 20 digits and a comma per length */
    size_t len = 0;
    for (int a = 0; a < p->ndim; a++)
        len += (size_t)snprintf(shape + len, sizeof shape - len, a ? ",%lld" : "%lld",
                                (long long)p->shape[a]);
    return snprintf(buf, cap, "dtype=%s, shape=(%s)", weft_dtype_name((weft_dtype_t)p->dtype),
                    shape);
}

static weft_status_t random_to_json(const weft_op_t *op, weft_json_props_t *out)
{
    const weft__random_props_t *p = weft_op_props(op);
    weft_status_t st = weft_json_props_put_string(out, "dtype",
                                                  weft_dtype_name((weft_dtype_t)p->dtype));
    return st != WEFT_OK ? st
                         : weft_json_props_put_int_array(out, "shape", p->shape, (size_t)p->ndim);
}

static weft_status_t random_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                      const weft_json_props_t *in, const weft_op_t **out)
{
    weft__random_props_t p;
    memset(&p, 0, sizeof p);
    const char *dname = NULL;
    weft_dtype_t dt;
    size_t nd = 0;
    weft_status_t st = weft_json_props_get_string(in, "dtype", &dname);
    if (st == WEFT_OK && weft_dtype_parse(dname, &dt) != WEFT_OK)
        return weft_json_props_error(in, WEFT_ETYPE, "dtype: unknown dtype '%s'", dname);
    if (st == WEFT_OK) st = weft_json_props_get_int_array(in, "shape", p.shape, WEFT_MAX_NDIM, &nd);
    if (st != WEFT_OK) return st;
    weft__random_kind_t k = (weft__random_kind_t)(cls - weft__random_classes);
    p.dtype = (int32_t)dt;
    p.ndim = (int32_t)nd;
    const char *why = weft__random_props_check(k, &p);
    if (why) return weft_json_props_error(in, WEFT_EPARSE, "%s", why);
    return weft_op_create(g, cls, &p, out);
}

const char *weft__random_props_check(weft__random_kind_t k, const weft__random_props_t *p)
{
    weft_dtype_t dt = (weft_dtype_t)p->dtype;
    if (kinds[k].out_dtype == (weft_dtype_t)-1 ? dt != WEFT_FLOAT32 && dt != WEFT_FLOAT64
                                                : dt != kinds[k].out_dtype)
        return kinds[k].out_dtype == (weft_dtype_t)-1 ? "dtype: must be float32 or float64"
                                                      : "dtype: not this op's sample dtype";
    if (p->ndim < 0 || p->ndim > WEFT_MAX_NDIM) return "shape: too many dims";
    if (k == WEFT__RANDOM_PERMUTATION && p->ndim != 1) return "shape: a permutation is 1-d";
    int64_t n = 1;
    for (int a = 0; a < p->ndim; a++) {
        if (p->shape[a] < 0) return "shape: a negative length";
        if (p->shape[a] && n > WEFT__RANDOM_MAX_ELEMS / p->shape[a])
            return "shape: 2^48 elements or more";
        n *= p->shape[a];
    }
    return n >= WEFT__RANDOM_MAX_ELEMS ? "shape: 2^48 elements or more" : NULL;
}

#define RANDOM_CLASS(kind, nm, grad_hook)                                         \
    [kind] = {.size = sizeof(weft_op_class_t),                                     \
              .name = nm,                                                          \
              .props_size = sizeof(weft__random_props_t),                          \
              .props_print = random_props_print,                                   \
              .make_node = random_make_node,                                       \
              .perform = random_perform,                                           \
              .do_constant_folding = random_no_folding,                            \
              .grad = grad_hook,                                                   \
              .props_to_json = random_to_json,                                     \
              .props_from_json = random_from_json}

const weft_op_class_t weft__random_classes[WEFT__RANDOM_KIND_COUNT] = {
    RANDOM_CLASS(WEFT__RANDOM_UNIFORM, "RandomUniform", weft__random_grad),
    RANDOM_CLASS(WEFT__RANDOM_NORMAL, "RandomNormal", weft__random_grad),
    RANDOM_CLASS(WEFT__RANDOM_BERNOULLI, "RandomBernoulli", weft__random_grad),
    RANDOM_CLASS(WEFT__RANDOM_CATEGORICAL, "RandomCategorical", weft__random_grad),
    RANDOM_CLASS(WEFT__RANDOM_INTEGERS, "RandomIntegers", weft__random_grad),
    RANDOM_CLASS(WEFT__RANDOM_PERMUTATION, "RandomPermutation", weft__random_grad),
};

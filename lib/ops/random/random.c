/* The random ops' constructors and the key helpers (weft/random.h): each
 * constructor checks its arguments, pads and converts the parameters to
 * the sample's rank and the op's parameter dtype, and builds the node. */
#include <string.h>

#include "graph/ctor_int.h"
#include "random_int.h"
#include "weft/elemwise.h"
#include "weft/shape_ops.h"

static bool dtype_is_int(weft_dtype_t d)
{
    return d == WEFT_INT32 || d == WEFT_INT64;
}

/* Parameter j (input j + 1) padded to the rank the op reads and converted
 * to its dtype. Integers takes integer parameters only; the others any
 * numeric (not bool) one. */
static weft_status_t prep_param(weft_graph_t *g, const char *ctor, weft__random_kind_t k,
                                const weft__random_props_t *p, size_t j, weft_var_t *v,
                                const char *file, int line, weft_var_t **out)
{
    const weft_type_t *t = weft_var_type(v);
    weft_dtype_t have = weft_type_dtype(t);
    weft_dtype_t want = weft__random_par_dtype(k, (weft_dtype_t)p->dtype);
    int nd = p->ndim + (k == WEFT__RANDOM_CATEGORICAL);
    char tb[128];
    weft_type_print(t, tb, sizeof tb);
    bool ok = weft_type_kind(t) == WEFT_TYPE_TENSOR && have != WEFT_BOOL &&
              (dtype_is_int(want) ? dtype_is_int(have) : true);
    if (!ok)
        return weft_graph_set_error(g, WEFT_ETYPE, "%s (at %s:%d): parameter %zu has type %s "
                                    "(need %s)", ctor, file, line, j, tb,
                                    dtype_is_int(want) ? "an integer tensor" : "a numeric tensor");
    if (weft_type_ndim(t) > nd || (k == WEFT__RANDOM_CATEGORICAL && weft_type_ndim(t) < 1))
        return weft_graph_set_error(g, WEFT_ETYPE, "%s (at %s:%d): parameter %zu has type %s: "
                                    "%s", ctor, file, line, j, tb,
                                    weft_type_ndim(t) < 1 ? "p needs a category axis"
                                                          : "more dims than the sample");
    weft_var_t *r = weft_pad_left_at(g, v, nd, file, line);
    if (r && have != want) r = weft_cast_at(g, r, want, file, line);
    return weft__got(g, *out = r);
}

static weft_status_t check_args(weft_graph_t *g, const char *ctor, weft__random_kind_t k,
                                weft_var_t *key, weft_var_t *const *par, int ndim,
                                const int64_t *shape, const char *file, int line)
{
    bool null_var = !key;
    for (int j = 0; j < weft__random_n_par(k); j++) null_var = null_var || !par[j];
    if (null_var)
        return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): NULL %s", ctor, file, line,
                                    key ? "parameter" : "key");
    if (ndim < 0 || ndim > WEFT_MAX_NDIM || (ndim > 0 && !shape))
        return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): bad sample shape (ndim %d%s)",
                                    ctor, file, line, ndim, shape ? "" : ", NULL shape");
    return WEFT_OK;
}

weft_status_t weft__random_draw(weft_graph_t *g, const char *ctor, weft__random_kind_t k,
                                weft_var_t *key, weft_var_t *const *par, weft_dtype_t dtype,
                                int ndim, const int64_t *shape, const char *file, int line,
                                weft_var_t **sample, weft_var_t **new_key)
{
    *sample = NULL;
    if (!g) return WEFT_EINVAL;
    weft_status_t st = check_args(g, ctor, k, key, par, ndim, shape, file, line);
    if (st != WEFT_OK) return st;
    weft__random_props_t p;
    memset(&p, 0, sizeof p);
    p.dtype = (int32_t)weft__random_out_dtype(k, dtype);
    p.ndim = ndim;
    if (ndim > 0) memcpy(p.shape, shape, (size_t)ndim * sizeof *shape);
    const char *why = weft__random_props_check(k, &p);
    if (why)
        return weft_graph_set_error(g, strncmp(why, "dtype", 5) == 0 ? WEFT_ETYPE : WEFT_EINVAL,
                                    "%s (at %s:%d): %s", ctor, file, line, why);
    weft_var_t *in[3] = {key, NULL, NULL};
    for (int j = 0; st == WEFT_OK && j < weft__random_n_par(k); j++)
        st = prep_param(g, ctor, k, &p, (size_t)j, par[j], file, line, &in[j + 1]);
    const weft_op_t *op = NULL;
    if (st == WEFT_OK) st = weft_op_create(g, &weft__random_classes[k], &p, &op);
    if (st != WEFT_OK) return st;
    weft_apply_t *a = weft_apply_create_at(g, op, 1 + (size_t)weft__random_n_par(k), in, file,
                                           line);
    if (!a) return weft__ctor_status(g);
    *sample = weft_apply_output(a, 1);
    if (new_key) *new_key = weft_apply_output(a, 0);
    return WEFT_OK;
}

/* A constructor's frame: the kept-error protocol around weft__random_draw. */
static weft_var_t *draw_ctor(weft_graph_t *g, const char *ctor, weft__random_kind_t k,
                             weft_var_t *key, weft_var_t *const *par, weft_dtype_t dtype,
                             int ndim, const int64_t *shape, weft_var_t **new_key,
                             const char *file, int line)
{
    weft_var_t *out = NULL;
    if (new_key) *new_key = NULL;
    weft__ctor_begin(g);
    weft_status_t st =
        weft__random_draw(g, ctor, k, key, par, dtype, ndim, shape, file, line, &out, new_key);
    if (st != WEFT_OK && new_key) *new_key = NULL;
    return weft__ctor_end(g, st, out, ctor, file, line);
}

weft_var_t *weft_random_uniform_at(weft_graph_t *g, weft_var_t *key, weft_var_t *low,
                                   weft_var_t *high, weft_dtype_t dtype, int ndim,
                                   const int64_t *shape, weft_var_t **new_key, const char *file,
                                   int line)
{
    weft_var_t *par[2] = {low, high};
    return draw_ctor(g, "weft_random_uniform", WEFT__RANDOM_UNIFORM, key, par, dtype, ndim,
                     shape, new_key, file, line);
}

weft_var_t *weft_random_normal_at(weft_graph_t *g, weft_var_t *key, weft_var_t *mean,
                                  weft_var_t *std, weft_dtype_t dtype, int ndim,
                                  const int64_t *shape, weft_var_t **new_key, const char *file,
                                  int line)
{
    weft_var_t *par[2] = {mean, std};
    return draw_ctor(g, "weft_random_normal", WEFT__RANDOM_NORMAL, key, par, dtype, ndim, shape,
                     new_key, file, line);
}

weft_var_t *weft_random_bernoulli_at(weft_graph_t *g, weft_var_t *key, weft_var_t *p, int ndim,
                                     const int64_t *shape, weft_var_t **new_key,
                                     const char *file, int line)
{
    return draw_ctor(g, "weft_random_bernoulli", WEFT__RANDOM_BERNOULLI, key, &p, WEFT_BOOL,
                     ndim, shape, new_key, file, line);
}

weft_var_t *weft_random_categorical_at(weft_graph_t *g, weft_var_t *key, weft_var_t *p,
                                       int ndim, const int64_t *shape, weft_var_t **new_key,
                                       const char *file, int line)
{
    return draw_ctor(g, "weft_random_categorical", WEFT__RANDOM_CATEGORICAL, key, &p,
                     WEFT_INT64, ndim, shape, new_key, file, line);
}

weft_var_t *weft_random_integers_at(weft_graph_t *g, weft_var_t *key, weft_var_t *low,
                                    weft_var_t *high, int ndim, const int64_t *shape,
                                    weft_var_t **new_key, const char *file, int line)
{
    weft_var_t *par[2] = {low, high};
    return draw_ctor(g, "weft_random_integers", WEFT__RANDOM_INTEGERS, key, par, WEFT_INT64,
                     ndim, shape, new_key, file, line);
}

weft_var_t *weft_random_permutation_at(weft_graph_t *g, weft_var_t *key, int64_t n,
                                       weft_var_t **new_key, const char *file, int line)
{
    return draw_ctor(g, "weft_random_permutation", WEFT__RANDOM_PERMUTATION, key, NULL,
                     WEFT_INT64, 1, &n, new_key, file, line);
}

/* ---- keys --------------------------------------------------------------------- */

weft_status_t weft_random_key_tensor(uint64_t seed, weft_tensor_t **out)
{
    if (!out) return WEFT_EINVAL;
    const int64_t two = 2;
    weft_status_t st = weft_tensor_empty(WEFT_INT64, 1, &two, out);
    if (st != WEFT_OK) return st;
    int64_t *d = weft_tensor_data(*out);
    d[0] = (int64_t)seed;
    d[1] = 0;
    return WEFT_OK;
}

weft_var_t *weft_random_key_at(weft_graph_t *g, uint64_t seed, const char *file, int line)
{
    const int64_t two = 2, data[2] = {(int64_t)seed, 0};
    const weft_type_t *t = NULL;
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = g ? weft_type_tensor(g, WEFT_INT64, 1, &two, &t) : WEFT_EINVAL;
    if (st == WEFT_OK)
        st = weft__got(g, out = weft_constant_create_at(g, t, data, sizeof data, file, line));
    return weft__ctor_end(g, st, out, "weft_random_key", file, line);
}

/* arange, linspace and eye with constant arguments: the values are computed
 * here, with NumPy's rules, and the result is a graph constant (static shape,
 * folded and merged like any constant). The values are computed in float64
 * (arange's fill: in the dtype's arithmetic, as NumPy) and converted to the dtype by weft_tensor_copy_as, so every dtype is
 * served: exact for integers below 2^53 in magnitude. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "graph/ctor_int.h"
#include "symshape_int.h"
#include "weft/array_ops.h"
#include "weft/tensor.h"

/* A constant of dtype and shape holding vals (float64, C order). Takes vals. */
static weft_status_t constant_of(weft_graph_t *g, const char *name, weft_dtype_t dtype, int nd,
                                 const int64_t *shape, double *vals, const char *file, int line,
                                 weft_var_t **out)
{
    weft_tensor_t *t = NULL, *c = NULL;
    const weft_type_t *type = NULL;
    weft_status_t st = weft_tensor_from_data(WEFT_FLOAT64, nd, shape, NULL, vals, &t);
    if (st == WEFT_OK) {
        st = weft_tensor_copy_as(t, dtype, &c);
    }
    if (st == WEFT_OK) {
        st = weft_type_tensor(g, dtype, nd, shape, &type);
    }
    if (st == WEFT_OK) {
        size_t bytes = weft_tensor_size(c) * weft_dtype_size(dtype);
        st = weft__got(g, *out = weft_constant_create_at(g, type, weft_tensor_data(c), bytes,
                                                         file, line));
    } else {
        st = weft_graph_set_error(g, st, "%s (at %s:%d): cannot build a %s constant", name, file,
                                  line, weft_dtype_name(dtype));
    }
    weft_tensor_release(c);
    weft_tensor_release(t);
    free(vals);
    return st;
}

/* The most elements a constructor here builds (a larger constant is a
 * mistake more often than a wish: 2^31 float64s are 16 GiB). */
#define RANGE_MAX_LEN WEFT__RANGE_MAX_LEN

static weft_status_t length_ok(weft_graph_t *g, const char *name, double len, const char *file,
                               int line)
{
    if (!(len >= 0 && len <= (double)RANGE_MAX_LEN)) {
        return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): length %g outside [0, 2^31] "
                                    "(or not a number)", name, file, line, len);
    }
    return WEFT_OK;
}

double weft__arange_len(double start, double stop, double step)
{
    double n = ceil((stop - start) / step);
    return n < 0 ? 0 : n;
}

void weft__arange_fill(double start, double step, weft_dtype_t dtype, int64_t from, int64_t n,
                       double *v)
{
    /* NumPy stores the first two values in the dtype and fills with their
     * difference in the dtype's arithmetic: integers (1, 3, 0.5 as int64:
     * all 1), float32 in float, the rest in double */
    int kind = weft_dtype_kind(dtype);
    bool ints = kind == WEFT_KIND_INT || kind == WEFT_KIND_UINT || kind == WEFT_KIND_BOOL;
    double a = ints ? trunc(start) : start, delta = (ints ? trunc(start + step) : start + step) - a;
    float af = (float)start, df = (float)(start + step) - af;
    for (int64_t k = 0; k < n; k++) {
        int64_t i = from + k;
        v[k] = dtype == WEFT_FLOAT32 ? (double)(af + (float)i * df) : a + (double)i * delta;
    }
}

void weft__linspace_fill(double start, double stop, int64_t num, bool endpoint, int64_t from,
                         int64_t n, double *v)
{
    /* NumPy: y = arange(num) * step + start (step = delta / div), or
     * (arange(num) / div) * delta when step underflows to 0; the endpoint is
     * stop exactly */
    int64_t div = endpoint ? num - 1 : num;
    double delta = stop - start, step = div > 0 ? delta / (double)div : NAN;
    for (int64_t k = 0; k < n; k++) {
        int64_t i = from + k;
        double y = div > 0 && step == 0 ? (double)i / (double)div * delta
                                        : (double)i * (div > 0 ? step : delta);
        v[k] = endpoint && num > 1 && i == num - 1 ? stop : y + start;
    }
}

static weft_status_t arange_impl(weft_graph_t *g, double start, double stop, double step,
                                 weft_dtype_t dtype, const char *file, int line,
                                 weft_var_t **out)
{
    if (step == 0 || isnan(step)) {
        return weft_graph_set_error(g, WEFT_EINVAL, "arange (at %s:%d): step is %g", file, line,
                                    step);
    }
    double n = weft__arange_len(start, stop, step);
    weft_status_t st = length_ok(g, "arange", n, file, line);
    double *v = st == WEFT_OK ? malloc(((size_t)n + 1) * sizeof *v) : NULL;
    if (st == WEFT_OK && !v) {
        return weft_graph_set_error(g, WEFT_ENOMEM, "arange: out of memory");
    }
    if (st == WEFT_OK) {
        weft__arange_fill(start, step, dtype, 0, (int64_t)n, v);
    }
    int64_t shape[1] = {(int64_t)n};
    return st == WEFT_OK ? constant_of(g, "arange", dtype, 1, shape, v, file, line, out) : st;
}

weft_var_t *weft_arange_at(weft_graph_t *g, double start, double stop, double step,
                           weft_dtype_t dtype, const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = arange_impl(g, start, stop, step, dtype, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_arange", file, line);
}

static weft_status_t linspace_impl(weft_graph_t *g, double start, double stop, int64_t num,
                                   bool endpoint, weft_dtype_t dtype, const char *file,
                                   int line, weft_var_t **out)
{
    weft_status_t st = length_ok(g, "linspace", (double)num, file, line);
    double *v = st == WEFT_OK ? malloc(((size_t)num + 1) * sizeof *v) : NULL;
    if (st == WEFT_OK && !v) {
        return weft_graph_set_error(g, WEFT_ENOMEM, "linspace: out of memory");
    }
    if (st == WEFT_OK) {
        weft__linspace_fill(start, stop, num, endpoint, 0, num, v);
    }
    int64_t shape[1] = {num};
    return st == WEFT_OK ? constant_of(g, "linspace", dtype, 1, shape, v, file, line, out) : st;
}

weft_var_t *weft_linspace_at(weft_graph_t *g, double start, double stop, int64_t num,
                             bool endpoint, weft_dtype_t dtype, const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = linspace_impl(g, start, stop, num, endpoint, dtype, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_linspace", file, line);
}

static weft_status_t eye_impl(weft_graph_t *g, int64_t n, int64_t m, int64_t k,
                              weft_dtype_t dtype, const char *file, int line, weft_var_t **out)
{
    weft_status_t st = n < 0 || m < 0 ? weft_graph_set_error(g, WEFT_EINVAL, "eye (at %s:%d): "
                                                             "negative size %lld x %lld", file,
                                                             line, (long long)n, (long long)m)
                                      : length_ok(g, "eye", (double)n * (double)m, file, line);
    double *v = st == WEFT_OK ? calloc((size_t)(n * m) + 1, sizeof *v) : NULL;
    if (st == WEFT_OK && !v) {
        return weft_graph_set_error(g, WEFT_ENOMEM, "eye: out of memory");
    }
    for (int64_t i = 0; st == WEFT_OK && i < n; i++) {
        if (i + k >= 0 && i + k < m) {
            v[i * m + i + k] = 1;
        }
    }
    int64_t shape[2] = {n, m};
    return st == WEFT_OK ? constant_of(g, "eye", dtype, 2, shape, v, file, line, out) : st;
}

weft_var_t *weft_eye_at(weft_graph_t *g, int64_t n, int64_t m, int64_t k, weft_dtype_t dtype,
                        const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = eye_impl(g, n, m, k, dtype, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_eye", file, line);
}

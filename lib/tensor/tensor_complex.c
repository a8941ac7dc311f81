/* Element helpers of complex tensors: get/set an element as (re, im) and
 * allclose over complex values. Conversions: convert_complex.c. */
#include <math.h>

#include "base/cmplx.h" /* <complex.h>, with CMPLX under clang too */
#include "tensor/tensor_int.h"

/* One element at p of dtype dt converted to complex128 (dt has a
 * conversion: has_c128). */
static double _Complex load_c128(weft_dtype_t dt, const char *p)
{
    double parts[2];
    char *base[2] = {(char *)parts, (char *)p};
    int64_t s[2] = {1, 1};
    weft__convert_fn(WEFT_COMPLEX128, dt)(1, base, s, NULL);
    return CMPLX(parts[0], parts[1]);
}

/* Whether dt converts to and from complex128; else the error, naming it. */
static weft_status_t has_c128(weft_dtype_t dt)
{
    if (weft__convert_fn(WEFT_COMPLEX128, dt) && weft__convert_fn(dt, WEFT_COMPLEX128))
        return WEFT_OK;
    return weft__tensor_error(WEFT_ETYPE, "no conversion between %s and complex128",
                              weft__dtype_name(dt));
}

weft_status_t weft_tensor_get_complex(const weft_tensor_t *t, const int64_t *index, double *re,
                                      double *im)
{
    char *p;
    if (!re || !im) return weft__tensor_error(WEFT_EINVAL, "NULL re or im");
    weft_status_t st = weft__tensor_element_ptr(t, index, &p);
    if (st == WEFT_OK) st = has_c128(t->dtype);
    if (st != WEFT_OK) return st;
    double _Complex z = load_c128(t->dtype, p);
    *re = creal(z);
    *im = cimag(z);
    return WEFT_OK;
}

weft_status_t weft_tensor_set_complex(weft_tensor_t *t, const int64_t *index, double re,
                                      double im)
{
    char *p;
    weft_status_t st = weft__tensor_element_ptr(t, index, &p);
    if (st == WEFT_OK) st = has_c128(t->dtype);
    if (st != WEFT_OK) return st;
    double parts[2] = {re, im};
    char *base[2] = {p, (char *)parts};
    int64_t s[2] = {1, 1};
    weft__convert_fn(t->dtype, WEFT_COMPLEX128)(1, base, s, NULL);
    return WEFT_OK;
}

/* Element i in C order as complex128. */
static double _Complex flat_get_c128(const weft_tensor_t *t, size_t i)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (int64_t)(i % (size_t)t->shape[d]) * t->strides[d];
        i /= (size_t)t->shape[d];
    }
    return load_c128(t->dtype, t->data + off * (int64_t)weft__dtype_size(t->dtype));
}

static bool cx_isnan(double _Complex z)
{
    return isnan(creal(z)) || isnan(cimag(z));
}

weft_status_t weft__tensor_allclose_complex(const weft_tensor_t *a, const weft_tensor_t *b,
                                            double rtol, double atol, bool *equal)
{
    weft_status_t st = has_c128(a->dtype);
    if (st == WEFT_OK) st = has_c128(b->dtype);
    if (st != WEFT_OK) return st;
    size_t n = weft_tensor_size(a);
    *equal = true;
    for (size_t i = 0; i < n && *equal; i++) {
        double _Complex x = flat_get_c128(a, i), y = flat_get_c128(b, i);
        if (cx_isnan(x) || cx_isnan(y))
            *equal = cx_isnan(x) && cx_isnan(y);
        else if (x != y) /* equal infinities pass above; inf - inf would be NaN */
            *equal = cabs(x - y) <= atol + rtol * cabs(y);
    }
    return WEFT_OK;
}

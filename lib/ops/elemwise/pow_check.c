/* Integer Pow's exponent check: NumPy raises "Integers to negative integer
 * powers are not allowed"; a Pow node on a signed integer dtype fails the
 * same way, before its kernel runs (the kernel itself gives 0 there). */
#include "base/dtype_list.h"
#include "ops_int.h"
#include "weft/kernel.h"

#define NEG_ROW(A_, B_, T, UT, sn, D)                                          \
    static void any_negative_##sn(size_t n, char *const *p, const int64_t *s,  \
                                  void *arg)                                   \
    {                                                                          \
        const T *a = (const T *)p[0];                                          \
        bool neg = false;                                                      \
        for (size_t i = 0; i < n; i++) neg |= a[(int64_t)i * s[0]] < 0;        \
        if (neg) *(bool *)arg = true;                                          \
    }
WEFT__SINT_DTYPES(NEG_ROW, ~, ~)

#define NEG_CASE(A_, B_, T, UT, sn, D) \
    case D: return any_negative_##sn;

static weft__row_fn negative_scan(weft_dtype_t dt)
{
    switch (dt) {
    WEFT__SINT_DTYPES(NEG_CASE, ~, ~)
    default: return NULL;
    }
}

weft_status_t weft__pow_check_exponent(const weft_tensor_t *exponent, weft_kernel_ctx_t *ctx)
{
    weft__row_fn fn = negative_scan(weft_tensor_dtype(exponent));
    if (!fn) return WEFT_OK;
    bool neg = false;
    char *base[1] = {weft_tensor_data(exponent)};
    const int64_t *st[1] = {weft_tensor_strides(exponent)};
    size_t isz[1] = {weft_dtype_size(weft_tensor_dtype(exponent))};
    weft__iter_rows(weft_tensor_ndim(exponent), weft_tensor_shape(exponent), 1, base, st, isz, fn,
                    &neg);
    if (!neg) return WEFT_OK;
    return weft_kernel_error(ctx, WEFT_ERANGE,
                             "integers to negative integer powers are not allowed (the %s "
                             "exponent has a negative element)",
                             weft_dtype_name(weft_tensor_dtype(exponent)));
}

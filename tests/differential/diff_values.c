/* Input memory for the differential runner: layouts (reversed, transposed,
 * gapped and stride-0 views over a base buffer), element values of each
 * class (special values included) and the C-order copy NumPy gets. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

/* Layout styles, drawn per input: mostly plain, each trick alone, or mixed. */
enum { STYLE_PLAIN, STYLE_REVERSED, STYLE_TRANSPOSED, STYLE_GAPPED, STYLE_BROADCAST,
       STYLE_MIXED, STYLE_COUNT };

static void shuffle_axes(diff_rng_t *r, int *perm, int nd)
{
    for (int i = nd - 1; i > 0; i--) {
        int j = diff_rng_int(r, 0, i), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

static void draw_axis_tricks(diff_rng_t *r, diff_input_t *in, int style)
{
    for (int d = 0; d < in->nd; d++) {
        bool mixed = style == STYLE_MIXED;
        in->rev[d] = (style == STYLE_REVERSED || mixed) && diff_rng_chance(r, 0.5);
        in->gap[d] = (style == STYLE_GAPPED || mixed) && diff_rng_chance(r, 0.5) ? 2 : 1;
        in->bcast[d] = (style == STYLE_BROADCAST || mixed) && diff_rng_chance(r, 0.4);
    }
    if (style == STYLE_TRANSPOSED || (style == STYLE_MIXED && diff_rng_chance(r, 0.5)))
        shuffle_axes(r, in->perm, in->nd);
}

static size_t input_count(const diff_input_t *in)
{
    size_t n = 1;
    for (int d = 0; d < in->nd; d++) n *= (size_t)in->shape[d];
    return n;
}

void diff_input_layout(diff_rng_t *r, diff_input_t *in, bool plain)
{
    for (int d = 0; d < DIFF_MAX_RANK; d++) {
        in->perm[d] = d;
        in->rev[d] = in->bcast[d] = false;
        in->gap[d] = 1;
    }
    int style = plain ? STYLE_PLAIN : diff_rng_int(r, -2, STYLE_COUNT - 1);
    if (style > STYLE_PLAIN) draw_axis_tricks(r, in, style);
    bool any_bcast = false;
    for (int d = 0; d < in->nd; d++) any_bcast |= in->bcast[d];
    in->null_data = !DIFF_SKIP_ITEM2_NULL_EMPTY && input_count(in) == 0 && !plain &&
                    diff_rng_chance(r, 0.5);
    in->is_mutable = !plain && !(DIFF_SKIP_ITEM7_MUTABLE_BROADCAST && any_bcast) &&
                     diff_rng_chance(r, 0.15);
}

/* ---- values ---------------------------------------------------------------------- */

/* Special values, and values near where exp and sigmoid overflow or
 * underflow (exp(x) overflows above 88.7 in float32, 709.8 in float64;
 * sigmoid(x) is subnormal from about -87 / -708 down to -103 / -745). */
static double special_float(diff_rng_t *r, bool f32)
{
    double max = f32 ? FLT_MAX : DBL_MAX, tiny = f32 ? FLT_MIN : DBL_MIN;
    double sub = f32 ? 0x1p-149 : 0x1p-1074, big = f32 ? 1e30 : 1e300;
    double ex = f32 ? 88.75 : 709.75, sg = f32 ? -95.5 : -720.25;
    const double pool[] = { NAN, INFINITY, -INFINITY, -0.0, 0.0, sub, -sub, tiny * 0.5,
                            max,  -max, tiny, -tiny, big, -big, 1.0, -1.0, ex, -ex, sg };
    return pool[diff_rng_int(r, 0, (int)(sizeof pool / sizeof pool[0]) - 1)];
}

/* Small values: a third are multiples of 1/4, so ties and exact equality occur. */
static double small_float(diff_rng_t *r)
{
    if (diff_rng_chance(r, 0.33)) return diff_rng_int(r, -12, 12) * 0.25;
    return diff_rng_unit(r) * 6.0 - 3.0;
}

static double draw_float(diff_rng_t *r, diff_values_t v, bool f32)
{
    switch (v) {
    case DIFF_VAL_POSITIVE: return 0.25 + diff_rng_unit(r) * 3.75;
    case DIFF_VAL_WIDE: {
        int lo = f32 ? -149 : -1074, hi = f32 ? 127 : 1023;
        double m = ldexp(1.0 + diff_rng_unit(r), diff_rng_int(r, lo, hi));
        return diff_rng_chance(r, 0.5) ? -m : m;
    }
    case DIFF_VAL_SPECIAL:
        return diff_rng_chance(r, 0.35) ? special_float(r, f32) : small_float(r);
    case DIFF_VAL_UNIT: {
        double m = 0.1 + diff_rng_unit(r) * 0.9;
        return diff_rng_chance(r, 0.5) ? -m : m;
    }
    case DIFF_VAL_SMALL:
    default: return small_float(r);
    }
}

static int64_t draw_int(diff_rng_t *r, diff_values_t v, bool i32)
{
    int64_t min = i32 ? INT32_MIN : INT64_MIN, max = i32 ? INT32_MAX : INT64_MAX;
    switch (v) {
    case DIFF_VAL_POSITIVE: return diff_rng_int(r, 1, 6);
    case DIFF_VAL_WIDE: {
        uint64_t u = diff_rng_next(r);
        return i32 ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
    }
    case DIFF_VAL_SPECIAL:
        if (diff_rng_chance(r, 0.35)) {
            const int64_t pool[] = { min, max, min + 1, max - 1, -1, 0, 1 };
            return pool[diff_rng_int(r, 0, 6)];
        }
        return diff_rng_int(r, -5, 5);
    case DIFF_VAL_SMALL:
    case DIFF_VAL_UNIT:
    default: return diff_rng_int(r, -5, 5);
    }
}

/* The new integer dtypes and float16 are drawn as int64 / uint64 / double
 * values in their range, then converted with weft's conversion (exact:
 * every drawn value is representable, float16 rounds). */
static void fill_converted(diff_rng_t *r, weft_dtype_t dt, diff_values_t v, void *dst, size_t n)
{
    int kind = weft_dtype_kind(dt);
    size_t bits = 8 * weft_dtype_size(dt);
    weft_dtype_t via = kind == WEFT_KIND_FLOAT ? WEFT_FLOAT64
                       : kind == WEFT_KIND_UINT ? WEFT_UINT64 : WEFT_INT64;
    uint64_t *tmp = malloc(n * 8 + 8);
    if (!tmp) return;
    for (size_t i = 0; i < n; i++) {
        if (kind == WEFT_KIND_FLOAT) {
            double x = draw_float(r, v, true);
            memcpy(&tmp[i], &x, 8);
        } else if (v == DIFF_VAL_WIDE || (v == DIFF_VAL_SPECIAL && diff_rng_chance(r, 0.35))) {
            /* any value of the dtype (the special pool's extremes included) */
            uint64_t u = diff_rng_next(r), top = bits == 64 ? ~0ull : (1ull << bits) - 1;
            if (v == DIFF_VAL_SPECIAL) {
                const uint64_t pool[] = { 0, 1, top, top - 1, top >> 1, (top >> 1) + 1 };
                u = pool[diff_rng_int(r, 0, 5)];
            }
            u &= top;
            if (kind == WEFT_KIND_INT && bits < 64 && (u >> (bits - 1)))
                u |= ~top; /* sign-extend into int64 */
            tmp[i] = u;
        } else {
            int64_t x = v == DIFF_VAL_POSITIVE ? diff_rng_int(r, 1, 6)
                        : kind == WEFT_KIND_UINT ? diff_rng_int(r, 0, 9) : diff_rng_int(r, -5, 5);
            memcpy(&tmp[i], &x, 8);
        }
    }
    int64_t len = (int64_t)n;
    weft_tensor_t *s = NULL, *d = NULL;
    if (weft_tensor_from_data(via, 1, &len, NULL, tmp, &s) == WEFT_OK &&
        weft_tensor_from_data(dt, 1, &len, NULL, dst, &d) == WEFT_OK)
        weft_tensor_copy(d, s);
    weft_tensor_release(s);
    weft_tensor_release(d);
    free(tmp);
}

void diff_fill_values(diff_rng_t *r, weft_dtype_t dt, diff_values_t v, void *dst, size_t n)
{
    switch (dt) {
    case WEFT_BOOL: case WEFT_INT32: case WEFT_INT64: case WEFT_FLOAT32: case WEFT_FLOAT64:
    case WEFT_COMPLEX64: case WEFT_COMPLEX128: break;
    default: fill_converted(r, dt, v, dst, n); return;
    }
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case WEFT_BOOL: ((unsigned char *)dst)[i] = (unsigned char)diff_rng_int(r, 0, 1); break;
        case WEFT_INT32: ((int32_t *)dst)[i] = (int32_t)draw_int(r, v, true); break;
        case WEFT_INT64: ((int64_t *)dst)[i] = draw_int(r, v, false); break;
        case WEFT_FLOAT32: ((float *)dst)[i] = (float)draw_float(r, v, true); break;
        case WEFT_FLOAT64: ((double *)dst)[i] = draw_float(r, v, false); break;
        case WEFT_COMPLEX64: /* (re, im), each drawn as a float32 */
            ((float *)dst)[2 * i] = (float)draw_float(r, v, true);
            ((float *)dst)[2 * i + 1] = (float)draw_float(r, v, true);
            break;
        case WEFT_COMPLEX128:
            ((double *)dst)[2 * i] = draw_float(r, v, false);
            ((double *)dst)[2 * i + 1] = draw_float(r, v, false);
            break;
        default: break; /* dtypes drawn by fill_converted */
        }
    }
}

/* ---- arrays ---------------------------------------------------------------------- */

void diff_gather(const weft_tensor_t *t, void *dst)
{
    int nd = weft_tensor_ndim(t);
    size_t es = weft_dtype_size(weft_tensor_dtype(t)), n = weft_tensor_size(t);
    const int64_t *shape = weft_tensor_shape(t), *st = weft_tensor_strides(t);
    const char *base = weft_tensor_data(t);
    int64_t idx[WEFT_MAX_NDIM] = { 0 };
    for (size_t i = 0; i < n; i++) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) off += idx[d] * st[d];
        memcpy((char *)dst + i * es, base + off * (int64_t)es, es);
        for (int d = nd - 1; d >= 0 && ++idx[d] == shape[d]; d--) idx[d] = 0;
    }
}

/* The view's strides (in elements) and the offset of its element [0..0]
 * in a base buffer of C-order base_shape. Returns the base element count. */
static size_t layout_view(const diff_input_t *in, int64_t *strides, int64_t *offset)
{
    int64_t base_shape[DIFF_MAX_RANK], base_stride[DIFF_MAX_RANK];
    for (int d = 0; d < in->nd; d++)
        base_shape[in->perm[d]] = in->bcast[d] ? 1 : in->shape[d] * in->gap[d];
    size_t count = 1;
    for (int b = in->nd - 1; b >= 0; b--) {
        base_stride[b] = (int64_t)count;
        count *= (size_t)base_shape[b];
    }
    *offset = 0;
    for (int d = 0; d < in->nd; d++) {
        int64_t s = in->bcast[d] ? 0 : in->gap[d] * base_stride[in->perm[d]];
        if (in->rev[d] && in->shape[d] > 0) {
            *offset += (in->shape[d] - 1) * s;
            s = -s;
        }
        strides[d] = s;
    }
    return count;
}

weft_status_t diff_array_create(const diff_input_t *in, diff_rng_t *r, diff_array_t *a)
{
    memset(a, 0, sizeof *a);
    int64_t strides[DIFF_MAX_RANK], offset;
    size_t es = weft_dtype_size(in->dt), count = layout_view(in, strides, &offset);
    size_t alloc = (count ? count : 1) * es; /* a valid pointer even when empty */
    a->base_bytes = count * es;
    a->base = malloc(alloc);
    a->pristine = malloc(alloc);
    a->logical_bytes = input_count(in) * es;
    a->logical = malloc(a->logical_bytes ? a->logical_bytes : 1);
    if (!a->base || !a->pristine || !a->logical) {
        diff_array_destroy(a);
        return WEFT_ENOMEM;
    }
    diff_fill_values(r, in->dt, in->values, a->base, count);
    memcpy(a->pristine, a->base, a->base_bytes);
    void *data = in->null_data ? NULL : (char *)a->base + offset * (int64_t)es;
    weft_status_t st = weft_tensor_from_data(in->dt, in->nd, in->shape, strides, data, &a->view);
    if (st != WEFT_OK) {
        diff_array_destroy(a);
        return st;
    }
    diff_gather(a->view, a->logical);
    return WEFT_OK;
}

void diff_array_destroy(diff_array_t *a)
{
    weft_tensor_release(a->view);
    free(a->base);
    free(a->pristine);
    free(a->logical);
    memset(a, 0, sizeof *a);
}

void diff_array_restore(diff_array_t *a)
{
    memcpy(a->base, a->pristine, a->base_bytes);
}

bool diff_array_untouched(const diff_array_t *a)
{
    return memcmp(a->base, a->pristine, a->base_bytes) == 0;
}

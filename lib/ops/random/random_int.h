/* Internal interface of the random ops (lib/ops/random/, docs/random.md):
 * the Philox4x32-10 block function, the props every random class shares, the
 * per-distribution kernels (random_kernels.c) and the classes
 * (random_op.c). Not part of the API. */
#ifndef WEFT_OPS_RANDOM_INT_H
#define WEFT_OPS_RANDOM_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/kernel.h"
#include "weft/op.h"
#include "weft/random.h"
#include "weft/tensor.h"

/* ---- Philox4x32-10 (docs/random.md §1) ------------------------------------- */

#define WEFT__PHILOX_M0 0xD2511F53u
#define WEFT__PHILOX_M1 0xCD9E8D57u
#define WEFT__PHILOX_W0 0x9E3779B9u
#define WEFT__PHILOX_W1 0xBB67AE85u

/* Ten rounds on c in place; the key is bumped between rounds. */
static inline void weft__philox(uint32_t c[4], uint32_t k0, uint32_t k1)
{
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)WEFT__PHILOX_M0 * c[0];
        uint64_t p1 = (uint64_t)WEFT__PHILOX_M1 * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
        c[1] = (uint32_t)p1;
        c[3] = (uint32_t)p0;
        c[0] = n0;
        c[2] = n2;
        k0 += WEFT__PHILOX_W0;
        k1 += WEFT__PHILOX_W1;
    }
}

/* The key of one draw: the Philox key and the stream (docs/random.md §2). */
typedef struct weft__rkey {
    uint32_t k0, k1;   /* key word 0, low / high half */
    uint32_t s0, s1;   /* key word 1 (the stream), low / high half */
} weft__rkey_t;

/* Block d of element i: counter (lo32(i), hi16(i) | d << 16, s0, s1). */
static inline void weft__rblock(const weft__rkey_t *k, uint64_t i, uint32_t d, uint32_t out[4])
{
    out[0] = (uint32_t)i;
    out[1] = (uint32_t)((i >> 32) & 0xffffu) | (d << 16);
    out[2] = k->s0;
    out[3] = k->s1;
    weft__philox(out, k->k0, k->k1);
}

/* Elements of one sample are numbered below 2^48 (the counter's room). */
#define WEFT__RANDOM_MAX_ELEMS ((int64_t)1 << 48)
/* Blocks per element (the draw index d, 16 bits). */
#define WEFT__RANDOM_MAX_DRAWS 65536u

/* Two words as a 64-bit integer, and 53 of its bits as a double in [0, 1). */
static inline uint64_t weft__r64(uint32_t lo, uint32_t hi)
{
    return (uint64_t)hi << 32 | lo;
}
static inline double weft__r53(uint32_t lo, uint32_t hi)
{
    return (double)(weft__r64(lo, hi) >> 11) * 0x1.0p-53;
}

/* ---- props and classes --------------------------------------------------- */

typedef enum weft__random_kind {
    WEFT__RANDOM_UNIFORM = 0,
    WEFT__RANDOM_NORMAL,
    WEFT__RANDOM_BERNOULLI,
    WEFT__RANDOM_CATEGORICAL,
    WEFT__RANDOM_INTEGERS,
    WEFT__RANDOM_PERMUTATION,
    WEFT__RANDOM_KIND_COUNT
} weft__random_kind_t;

/* Props of every random class (no padding: compared bytewise): the sample's
 * dtype and static shape (entries past ndim zero). */
typedef struct weft__random_props {
    int32_t dtype;
    int32_t ndim;
    int64_t shape[WEFT_MAX_NDIM];
} weft__random_props_t;

/* One class per kind, indexed by weft__random_kind_t (random_op.c). */
extern const weft_op_class_t weft__random_classes[WEFT__RANDOM_KIND_COUNT];

/* Per kind: the class name, the number of parameters, the sample dtype and
 * the parameters' dtype (given the props' dtype, which uniform and normal
 * take from the user and the others fix). */
const char *weft__random_name(weft__random_kind_t k);
int weft__random_n_par(weft__random_kind_t k);
weft_dtype_t weft__random_out_dtype(weft__random_kind_t k, weft_dtype_t props_dtype);
weft_dtype_t weft__random_par_dtype(weft__random_kind_t k, weft_dtype_t props_dtype);
/* NULL when p is valid props of kind k, else why not ("shape: ..."). */
const char *weft__random_props_check(weft__random_kind_t k, const weft__random_props_t *p);

/* Builds a draw of kind k from key and the n_par parameters par (padded to
 * the sample's rank and converted here), sample dtype dtype (uniform,
 * normal; ignored by the others), at site file:line: *sample and, when
 * new_key is not NULL, *new_key. Errors as the constructors (weft/random.h),
 * on g; ctor names the constructor in messages. */
weft_status_t weft__random_draw(weft_graph_t *g, const char *ctor, weft__random_kind_t k,
                                weft_var_t *key, weft_var_t *const *par, weft_dtype_t dtype,
                                int ndim, const int64_t *shape, const char *file, int line,
                                weft_var_t **sample, weft_var_t **new_key);

/* The grad hook of every random class (random_grad.c): reparameterized for
 * uniform and normal, undefined for the float parameters of bernoulli and
 * categorical, none for the key and integer parameters. */
weft_status_t weft__random_grad(weft_graph_t *g, const weft_apply_t *node,
                                weft_var_t *const *output_grads, weft_var_t **input_grads);

/* What a kernel range reads: the key, the sample, the parameters with their
 * strides over the sample's shape (0 on broadcast axes; categorical: the
 * strides of p's batch axes, and p's category count and stride). */
typedef struct weft__rjob {
    weft__random_kind_t kind;
    weft__rkey_t key;
    int ndim;
    int64_t shape[WEFT_MAX_NDIM];
    weft_dtype_t dtype;
    void *out;
    const void *par[2];
    int64_t pstride[2][WEFT_MAX_NDIM];
    int64_t ncat, cat_stride;
} weft__rjob_t;

/* Fills sample elements [begin, end) of job (a weft_kernel_range_fn; the
 * parameters were checked by weft__random_check_params). Always WEFT_OK. */
weft_status_t weft__random_fill(void *job, size_t begin, size_t end);

/* Checks the parameters of job (n sample elements; categorical: rows rows
 * of p, contiguous) in element order and reports the first bad one with
 * weft_kernel_error (docs/random.md §5). */
weft_status_t weft__random_check_params(weft_kernel_ctx_t *ctx, const char *name,
                                        const weft__rjob_t *job, int64_t n, int64_t rows);

/* The permutation of [0, n) ordered by each element's 64-bit draw (ties by
 * index), into out (int64[n]); keys is scratch of 2n int64. */
void weft__random_permutation(const weft__rkey_t *key, int64_t n, int64_t *out, int64_t *keys);

#endif /* WEFT_OPS_RANDOM_INT_H */

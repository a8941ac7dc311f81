/* Internal interface between the reduction ops Sum, Mean, Max, Min, Prod and
 * ReduceGrad (reduce.c, reduce_grad.c), their split over the pool
 * (reduce_split.c) and their raw strided kernels (reduce_kernels.c).
 * Argmax/Argmin run on the lane engine (lred_int.h).
 *
 * A loop describes x's shape with, per axis, x's stride and the output's
 * stride in elements; a reduced axis has output stride 0, so every x element
 * maps to the output element it folds into. */
#ifndef WEFT_OPS_REDUCE_INT_H
#define WEFT_OPS_REDUCE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/kernel.h"
#include "weft/reduce.h"
#include "weft/status.h"
#include "weft/type.h"

typedef struct weft__rloop {
    int ndim;
    int64_t shape[WEFT_MAX_NDIM];
    int64_t sx[WEFT_MAX_NDIM]; /* x strides, elements */
    int64_t so[WEFT_MAX_NDIM]; /* output strides, elements; 0 on reduced axes */
    int64_t sg[WEFT_MAX_NDIM]; /* gradient kernels: the output gradient's strides */
} weft__rloop_t;

/* Output dtype of a reduction of x (see weft/reduce.h). */
weft_dtype_t weft__reduce_out_dtype(weft_reduce_kind_t kind, weft_dtype_t in);

/* Folds x into out (n_out contiguous elements, overwritten), split over the
 * pool by fixed boxes when large (reduce_split.c). MEAN only sums: the
 * caller then divides with weft__reduce_divide. dtypes: x any real dtype or
 * complex64/complex128 (Sum, Mean, Prod only); out as
 * weft__reduce_out_dtype(kind, x's dtype).
 * Errors: WEFT_ENOMEM (scratch for partials), recorded on ctx. */
weft_status_t weft__reduce_run(weft_kernel_ctx_t *ctx, weft_reduce_kind_t kind, weft_dtype_t dx,
                               const void *x, weft_dtype_t dout, void *out, int64_t n_out,
                               const weft__rloop_t *loop);
/* The split of a prepared loop l (weft__rloop_prepare) that weft__reduce_run
 * makes for an output of eo-byte elements: returns the chunk count (1: one
 * box, axis and grain untouched), else sets *axis (of l) and *grain (its
 * indices per chunk). */
int64_t weft__reduce_split_plan(const weft__rloop_t *l, size_t eo, int *axis, int64_t *grain);
/* The raw loops: fold n elements of x (stride sx) into the one element o
 * (a reduced inner axis), or element-wise into n elements of o (stride so;
 * a kept inner axis, and the merge of partials). Strides in elements. */
typedef void (*weft__rred_fn)(const char *x, int64_t n, int64_t sx, char *o);
typedef void (*weft__rkeep_fn)(const char *x, int64_t n, int64_t sx, char *o, int64_t so);
/* The loops of Sum / Mean's sum / Prod for complex64 / complex128 (both
 * dtypes, input and output; reduce_complex.c): returns false (nothing set)
 * for a real dt. */
bool weft__reduce_complex_loops(weft_reduce_kind_t kind, weft_dtype_t dt, weft__rred_fn *red,
                                weft__rkeep_fn *keep);
bool weft__reduce_is_complex(weft_dtype_t dt);

/* ---- the raw kernels (reduce_kernels.c) ---- */
/* Drops length-1 axes of in and moves the axis with the smallest x stride
 * last (the inner axis). Returns false when some length is 0 (nothing to
 * fold). */
bool weft__rloop_prepare(const weft__rloop_t *in, weft__rloop_t *l);
/* The fold's identity (its starting value) in n elements of out. */
void weft__reduce_fill_identity(weft_reduce_kind_t kind, weft_dtype_t dout, void *out,
                                int64_t n);
/* Folds the box of x that the prepared loop l describes into out (which
 * holds identities or partials), in the odometer's order: outer axes in
 * order, the inner axis a 4-chain fold (reduced) or a vectorized row (kept). */
void weft__reduce_box(weft_reduce_kind_t kind, weft_dtype_t dx, const void *x,
                      weft_dtype_t dout, void *out, const weft__rloop_t *l);
/* out[i] = fold(out[i], part[i]) for n partials of dtype dout. */
void weft__reduce_merge(weft_reduce_kind_t kind, weft_dtype_t dout, void *out, const void *part,
                        int64_t n);
/* out[i] /= count for a float out, the division in double rounded once to
 * out's dtype: NumPy's mean divides the sum by the count (a multiplication
 * by 1/count can differ in the last bit: 3 * (1/5) is not 3 / 5). */
void weft__reduce_divide(weft_dtype_t dt, void *out, int64_t n, double count);

/* Gradient kernels; dx is contiguous with x's shape (loop.shape), g is read
 * through loop.sg (0 on reduced axes), loop.so is the contiguous layout of an
 * output-shaped scratch (0 on reduced axes); float32/float64, one dtype.
 * Broadcast: dx = g * scale. Extreme (MAX/MIN): dx = g at each group's first
 * extreme position, 0 elsewhere. Prod: see weft/reduce.h. Both use n_out
 * elements of scratch in acc and in cnt (the caller's). */
void weft__reduce_grad_broadcast(weft_dtype_t dt, const void *g, void *dx, double scale,
                                 const weft__rloop_t *loop);
void weft__reduce_grad_extreme(weft_dtype_t dt, bool is_max, const void *x, const void *g,
                               void *dx, int64_t n_out, double *acc, int64_t *cnt,
                               const weft__rloop_t *loop);
void weft__reduce_grad_prod(weft_dtype_t dt, const void *x, const void *g, void *dx,
                            int64_t n_out, double *acc, int64_t *cnt, const weft__rloop_t *loop);

#endif /* WEFT_OPS_REDUCE_INT_H */

/* Internal interface between the reduction ops (reduce.c, reduce_grad.c,
 * argmax.c) and their raw strided kernels (reduce_kernels.c).
 *
 * A loop describes x's shape with, per axis, x's stride and the output's
 * stride in elements; a reduced axis has output stride 0, so every x element
 * maps to the output element it folds into. */
#ifndef WEFT_OPS_REDUCE_INT_H
#define WEFT_OPS_REDUCE_INT_H

#include <stdbool.h>
#include <stdint.h>

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

/* Folds x into out (n_out contiguous elements, overwritten). MEAN only sums:
 * the caller then divides with weft__reduce_scale. dtypes: x one of
 * float32/64, int32/64; out as weft__reduce_out_dtype(kind, x's dtype). */
void weft__reduce_run(weft_reduce_kind_t kind, weft_dtype_t dx, const void *x, weft_dtype_t dout,
                      void *out, int64_t n_out, const weft__rloop_t *loop);
/* weft__reduce_run for complex64 / complex128 x (Sum, Mean's sum, Prod;
 * reduce_complex.c). */
void weft__reduce_run_complex(weft_reduce_kind_t kind, weft_dtype_t dt, const void *x, void *out,
                              int64_t n_out, const weft__rloop_t *loop);
bool weft__reduce_is_complex(weft_dtype_t dt);
/* out[i] *= factor for a float (or complex: each part) out. */
void weft__reduce_scale(weft_dtype_t dt, void *out, int64_t n, double factor);

/* Argmax: out[j] (int64, n_out contiguous) = index along the reduced axes of
 * the first maximum of group j; the index counts in C order over the reduced
 * axes only (a single axis: its position). best: n_out elements of scratch. */
void weft__reduce_argmax(weft_dtype_t dx, const void *x, int64_t *out, int64_t *best,
                         int64_t n_out, const weft__rloop_t *loop);

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

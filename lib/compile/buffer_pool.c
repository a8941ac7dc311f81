/* The buffer pool of a compiled function: tensors whose last reader has run
 * come back here (when nothing else references them) and are handed out
 * again by the kernels' allocation hook, so a call of unchanged shapes
 * allocates nothing once the pool is warm. Keyed by exact (dtype, shape):
 * a reused tensor is the same handle with the same layout, so no handle is
 * allocated either. One mutex guards it; parked bytes are bounded. */
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "compile_int.h"
#include "tensor/tensor_int.h" /* weft__tensor_is_block_base */

#define BUFPOOL_MAX_BYTES ((size_t)1 << 30)
#define BUFPOOL_MAX_BUCKETS 256

weft_status_t weft__bufpool_init(weft__bufpool_t *bp)
{
    memset(bp, 0, sizeof *bp);
    bp->max_bytes = BUFPOOL_MAX_BYTES;
    return pthread_mutex_init(&bp->lock, NULL) == 0 ? WEFT_OK : WEFT_ESYSTEM;
}

void weft__bufpool_fini(weft__bufpool_t *bp)
{
    for (size_t b = 0; b < bp->n_buckets; b++) {
        for (size_t i = 0; i < bp->buckets[b].n; i++) weft_tensor_release(bp->buckets[b].items[i]);
        free(bp->buckets[b].items);
    }
    free(bp->buckets);
    pthread_mutex_destroy(&bp->lock);
}

static bool bucket_matches(const weft__bucket_t *b, weft_dtype_t dtype, int ndim,
                           const int64_t *shape)
{
    if (b->dtype != dtype || b->ndim != ndim) return false;
    for (int d = 0; d < ndim; d++)
        if (b->shape[d] != shape[d]) return false;
    return true;
}

static weft__bucket_t *bucket_find(weft__bufpool_t *bp, weft_dtype_t dtype, int ndim,
                                   const int64_t *shape)
{
    for (size_t b = 0; b < bp->n_buckets; b++)
        if (bucket_matches(&bp->buckets[b], dtype, ndim, shape)) return &bp->buckets[b];
    return NULL;
}

weft_status_t weft__bufpool_alloc(void *user, weft_dtype_t dtype, int ndim, const int64_t *shape,
                                  weft_tensor_t **out)
{
    weft__bufpool_t *bp = user;
    pthread_mutex_lock(&bp->lock);
    weft__bucket_t *b = bucket_find(bp, dtype, ndim, shape);
    if (b && b->n > 0) {
        *out = b->items[--b->n];
        bp->held_bytes -= b->nbytes;
        bp->reused++;
        pthread_mutex_unlock(&bp->lock);
        return WEFT_OK;
    }
    bp->allocated++;
    pthread_mutex_unlock(&bp->lock);
    return weft_tensor_empty(dtype, ndim, shape, out);
}

/* A new bucket for t's key; NULL when the table is full or memory is short. */
static weft__bucket_t *bucket_add(weft__bufpool_t *bp, const weft_tensor_t *t, size_t nbytes)
{
    if (bp->n_buckets >= BUFPOOL_MAX_BUCKETS ||
        !weft__vec_grow(NULL, (void **)&bp->buckets, &bp->cap_buckets, bp->n_buckets + 1,
                        sizeof *bp->buckets))
        return NULL;
    weft__bucket_t *b = &bp->buckets[bp->n_buckets++];
    memset(b, 0, sizeof *b);
    b->dtype = weft_tensor_dtype(t);
    b->ndim = weft_tensor_ndim(t);
    if (b->ndim) memcpy(b->shape, weft_tensor_shape(t), (size_t)b->ndim * sizeof(int64_t));
    b->nbytes = nbytes;
    return b;
}

static bool bucket_push(weft__bucket_t *b, weft_tensor_t *t)
{
    if (b->n == b->cap && /* call path: the common case stays inline */
        !weft__vec_grow(NULL, (void **)&b->items, &b->cap, b->n + 1, sizeof *b->items))
        return false;
    b->items[b->n++] = t;
    return true;
}

static bool parkable(const weft_tensor_t *t)
{
    /* Only a tensor nobody else can see may be handed out again: exclusive
     * handle and buffer (no view, destroyer output or caller holds it). And
     * only a buffer's own base handle: a view left alone (its base released
     * elsewhere) would be parked under its own shape, which the producer of
     * its base never asks for, so such buckets would only grow. */
    return weft__tensor_is_block_base(t) && weft_tensor_is_exclusive(t) &&
           weft_tensor_is_contiguous(t);
}

/* Under lock: parks t in the depot; false when it does not fit. */
static bool depot_push_locked(weft__bufpool_t *bp, weft_tensor_t *t)
{
    size_t nbytes = weft_tensor_size(t) * weft_dtype_size(weft_tensor_dtype(t));
    if (bp->held_bytes + nbytes > bp->max_bytes) return false;
    weft__bucket_t *b = bucket_find(bp, weft_tensor_dtype(t), weft_tensor_ndim(t),
                                    weft_tensor_shape(t));
    if (!b) b = bucket_add(bp, t, nbytes);
    if (!b || !bucket_push(b, t)) return false;
    bp->held_bytes += nbytes;
    return true;
}

void weft__bufpool_put(weft__bufpool_t *bp, weft_tensor_t *t)
{
    if (!t) return;
    if (!parkable(t)) {
        weft_tensor_release(t);
        return;
    }
    pthread_mutex_lock(&bp->lock);
    bool kept = depot_push_locked(bp, t);
    pthread_mutex_unlock(&bp->lock);
    if (!kept) weft_tensor_release(t);
}

void weft__bufpool_give_back(void *user, weft_tensor_t *t)
{
    weft__bufpool_put(user, t);
}

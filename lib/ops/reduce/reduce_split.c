/* Sum, Mean, Max, Min and Prod (complex Sum, Mean and Prod too) split over
 * the pool (reduce_int.h): one axis of the prepared loop (weft__rloop_prepare:
 * length-1 axes dropped, the axis with the smallest x stride inner) is cut
 * into fixed chunks, each folded by the raw kernel (weft__reduce_box) on any
 * worker.
 *
 * A loop of fewer than RSPLIT_MIN elements is one box, as before the split
 * existed. Otherwise the chunks follow the elementwise rule
 * (weft__split_grain: at most 16 per axis, each at least RSPLIT_MIN / 2
 * elements, the lane engine's block), and the split axis is chosen from the
 * prepared loop alone:
 * - a kept axis cuts the output into disjoint parts: every output element
 *   folds the same elements in the same order as in one box, so the result
 *   is the unsplit one, bit for bit;
 * - a reduced axis gives each chunk its own row of n_out partials
 *   (scratch), merged left to right into the output: the order depends on
 *   the chunk boundaries, which depend on the shape alone.
 * A kept axis wins unless a reduced one makes more than twice its chunks.
 * The worker count only decides who folds which chunk; one worker folds
 * them all in turn, so the evaluator, 1, 2 and 4 workers give the same bits
 * (docs/execution.md §5). */
#include <string.h>

#include "lred_int.h"
#include "reduce_int.h"
#include "split_int.h"

/* Loops from two lane-engine blocks of elements split; chunks hold at least
 * one block. */
#define RSPLIT_MIN (2 * WEFT__LRED_BLOCK)
/* Chunks of a kept inner axis are whole multiples of this many bytes of the
 * output, so two workers never write one cache line in their inner loop. */
#define RSPLIT_ROW_BYTES 64

typedef struct rsplit {
    weft_reduce_kind_t kind;
    weft_dtype_t dx, dout;
    const char *x;
    char *out; /* kept axis: the output; reduced axis: n_out partials per chunk */
    int64_t n_out, grain;
    int axis; /* the split axis of l */
    weft__rloop_t l;
} rsplit_t;

/* Indices per chunk of axis d of l (count elements in all; eo: the output's
 * element size). */
static int64_t rsplit_grain(const weft__rloop_t *l, int d, int64_t count, size_t eo)
{
    int64_t g = (int64_t)weft__split_grain((size_t)l->shape[d], (size_t)count, RSPLIT_MIN);
    int64_t align = eo < RSPLIT_ROW_BYTES ? RSPLIT_ROW_BYTES / (int64_t)eo : 1;
    if (d == l->ndim - 1 && l->so[d] != 0) {
        g = (g + align - 1) / align * align;
    }
    return g;
}

int64_t weft__reduce_split_plan(const weft__rloop_t *l, size_t eo, int *axis, int64_t *grain)
{
    int64_t count = 1;
    for (int d = 0; d < l->ndim; d++) {
        count *= l->shape[d];
    }
    int best[2] = {-1, -1}; /* [0]: kept, [1]: reduced */
    int64_t chunks[2] = {1, 1}, grains[2] = {0, 0};
    for (int d = 0; count >= RSPLIT_MIN && d < l->ndim; d++) {
        int red = l->so[d] == 0;
        int64_t g = rsplit_grain(l, d, count, eo), c = (l->shape[d] + g - 1) / g;
        if (c > chunks[red]) { /* the outermost on ties */
            best[red] = d;
            chunks[red] = c;
            grains[red] = g;
        }
    }
    int pick = chunks[1] > 2 * chunks[0] ? 1 : 0;
    if (chunks[pick] < 2) {
        return 1;
    }
    *axis = best[pick];
    *grain = grains[pick];
    return chunks[pick];
}

/* Chunks [begin, end) of the split axis. */
static weft_status_t rsplit_range(void *arg, size_t begin, size_t end)
{
    const rsplit_t *r = arg;
    int64_t ex = (int64_t)weft_dtype_size(r->dx), eo = (int64_t)weft_dtype_size(r->dout);
    for (size_t k = begin; k < end; k++) {
        weft__rloop_t l = r->l;
        int64_t lo = (int64_t)k * r->grain, len = l.shape[r->axis] - lo;
        l.shape[r->axis] = len < r->grain ? len : r->grain;
        const char *xp = r->x + lo * l.sx[r->axis] * ex;
        char *op = r->out + lo * l.so[r->axis] * eo;
        if (l.so[r->axis] == 0) { /* a reduced axis: this chunk's partials */
            op = r->out + (int64_t)k * r->n_out * eo;
            weft__reduce_fill_identity(r->kind, r->dout, op, r->n_out);
        }
        weft__reduce_box(r->kind, r->dx, xp, r->dout, op, &l);
    }
    return WEFT_OK;
}

/* Folds the chunks of a reduced axis into partials, then merges them left
 * to right into out. */
static weft_status_t rsplit_partials(weft_kernel_ctx_t *ctx, rsplit_t *r, int64_t chunks,
                                     void *out)
{
    const int64_t len[1] = {chunks * r->n_out};
    weft_tensor_t *scratch = NULL;
    weft_status_t st = weft_kernel_scratch(ctx, r->dout, 1, len, &scratch);
    if (st != WEFT_OK) {
        return st;
    }
    r->out = weft_tensor_data(scratch);
    st = weft_kernel_parallel_for(ctx, (size_t)chunks, 1, rsplit_range, r);
    size_t eo = weft_dtype_size(r->dout);
    if (st == WEFT_OK) {
        memcpy(out, r->out, (size_t)r->n_out * eo);
        for (int64_t k = 1; k < chunks; k++) {
            weft__reduce_merge(r->kind, r->dout, out, r->out + (size_t)(k * r->n_out) * eo,
                               r->n_out);
        }
    }
    weft_kernel_scratch_done(ctx, scratch);
    return st;
}

weft_status_t weft__reduce_run(weft_kernel_ctx_t *ctx, weft_reduce_kind_t kind, weft_dtype_t dx,
                               const void *x, weft_dtype_t dout, void *out, int64_t n_out,
                               const weft__rloop_t *loop)
{
    rsplit_t r = {.kind = kind, .dx = dx, .dout = dout, .x = x, .out = out, .n_out = n_out};
    if (!weft__rloop_prepare(loop, &r.l)) {
        weft__reduce_fill_identity(kind, dout, out, n_out);
        return WEFT_OK;
    }
    int64_t chunks = weft__reduce_split_plan(&r.l, weft_dtype_size(dout), &r.axis, &r.grain);
    if (chunks > 1 && r.l.so[r.axis] == 0) {
        return rsplit_partials(ctx, &r, chunks, out);
    }
    weft__reduce_fill_identity(kind, dout, out, n_out);
    if (chunks == 1) {
        weft__reduce_box(kind, dx, x, dout, out, &r.l);
        return WEFT_OK;
    }
    return weft_kernel_parallel_for(ctx, (size_t)chunks, 1, rsplit_range, &r);
}

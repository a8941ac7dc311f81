/* Chunk stages of a pipelined Scan (scan_pipe.h, docs/control-flow.md
 * §5.2): the stage of an accumulator acc_t = acc_{t-1} + P_t^T @ B_t marked
 * by scan_chunk_sum sums WEFT__PIPE_CHUNK steps at once. Its task of step t
 * does nothing unless t ends a chunk (t + 1 a multiple of the chunk, or the
 * last step); that task - after the producers of every step of the chunk,
 * through its own earlier steps - calls chunk_f(acc, P rows, B rows) on
 * views of the chunk's rows (a sequence's rows, downwards in a reverse
 * scan, or a ring's: rows of one chunk are consecutive in a ring of whole
 * chunks). Chunk c reads the state chunk c - 1 wrote (the initial value for
 * chunk 0) and writes the other of the output's two ring states, the last
 * chunk the node's output. The chunk is fixed by the step count, so the
 * sum's order, and its bits, are the same at any worker count. */
#include <string.h>

#include "scan_pipe.h"
#include "weft/elemwise.h"
#include "weft/linalg.h"
#include "weft/shape_ops.h"

/* The pipe source of inner value v: a sequence row or a crossing value. */
static bool chunk_src(const weft__scan_pipe_t *pp, const weft__scan_layout_t *l,
                      weft_var_t *const *in, weft_var_t *const *x, const weft_var_t *v,
                      weft__pipe_src_t *src)
{
    for (size_t k = 0; k < weft__scan_n_seq_taps(l); k++)
        if (in[k] == v) return *src = (weft__pipe_src_t){WEFT__PIPE_IN, (uint32_t)k}, true;
    for (size_t k = 0; k < pp->n_x; k++)
        if (x[k] == v) return *src = (weft__pipe_src_t){WEFT__PIPE_X, (uint32_t)k}, true;
    return false;
}

/* A placeholder (rows, S...) for the rows of v (S its shape). */
static weft_var_t *rows_of(weft_graph_t *g, const weft_var_t *v)
{
    const weft_type_t *t = weft_var_type(v), *rt = NULL;
    int64_t shape[WEFT_MAX_NDIM] = {-1};
    for (int d = 0; d < weft_type_ndim(t); d++) shape[d + 1] = weft_type_dim(t, d);
    if (weft_type_tensor(g, weft_type_dtype(t), weft_type_ndim(t) + 1, shape, &rt) != WEFT_OK)
        return NULL;
    return weft_var_create(g, rt, weft_var_name(v));
}

/* acc + reshape(pr, (-1, m))^T @ reshape(br, (-1, k)) compiled as *f;
 * *f stays NULL (WEFT_OK: no chunk stage) when it cannot be built or has
 * another type than acc (the error stays on the private graph g). */
static weft_status_t chunk_compile(weft_graph_t *g, weft_var_t *acc, weft_var_t *pv,
                                   weft_var_t *bv, const weft_function_options_t *opts,
                                   weft_function_t **f)
{
    weft_var_t *in[3] = {weft__scan_placeholder_like(g, acc, "acc", __FILE__, __LINE__),
                         rows_of(g, pv), rows_of(g, bv)};
    const int64_t sp[2] = {-1, weft_type_dim(weft_var_type(pv), 1)};
    const int64_t sb[2] = {-1, weft_type_dim(weft_var_type(bv), 1)};
    weft_var_t *pt = weft_transpose(g, weft_reshape(g, in[1], 2, sp));
    weft_var_t *y = weft_add(g, in[0], weft_dot(g, pt, weft_reshape(g, in[2], 2, sb)));
    if (!y || !weft_type_equal(weft_var_type(y), weft_var_type(acc))) return WEFT_OK;
    return weft_function_compile(3, in, 1, &y, 0, NULL, opts, f);
}

/* Stage st: writes chunk-summed output o alone, from its state, P and B. */
static weft_status_t chunk_stage(weft__scan_pipe_t *pp, weft__pipe_stage_t *st, weft_graph_t *g,
                                 const weft__scan_props_t *sp, weft_var_t *const *in,
                                 weft_var_t *const *out, weft_var_t *const *x,
                                 const weft_function_options_t *opts)
{
    const weft__scan_layout_t *l = &sp->core->lay;
    if (!st->carried || st->n_res != 1 || st->res[0].kind != WEFT__PIPE_OUT) return WEFT_OK;
    uint32_t o = st->res[0].idx;
    if (!(sp->chunk_mask >> o & 1) || !(sp->last_mask >> o & 1)) return WEFT_OK;
    size_t slot = weft__scan_n_seq_taps(l);
    for (uint32_t q = 0; q < o; q++) slot += l->out_ntaps[q];
    weft_var_t *pv = NULL, *bv = NULL;
    if (!weft__scan_acc_parts(out[o], in[slot], &pv, &bv) ||
        !chunk_src(pp, l, in, x, pv, &st->chunk_src[0]) ||
        !chunk_src(pp, l, in, x, bv, &st->chunk_src[1]))
        return WEFT_OK;
    weft_function_options_t fo = *opts;
    fo.name = st->name;
    weft_status_t s = chunk_compile(g, in[slot], pv, bv, &fo, &st->chunk_f);
    if (s != WEFT_OK || !st->chunk_f) return s;
    st->chunk = true;
    st->chunk_o = o;
    char *tail = strrchr(st->name, '/'); /* "NAME/carryN" -> "NAME/chunkN" */
    if (tail) memcpy(tail + 1, "chunk", 5);
    return WEFT_OK;
}

weft_status_t weft__pipe_chunk_stages(weft__scan_pipe_t *pp, weft_graph_t *g,
                                      const weft__scan_props_t *sp, weft_var_t *const *in,
                                      weft_var_t *const *out, weft_var_t *const *x,
                                      const weft_function_options_t *opts)
{
    weft_status_t s = WEFT_OK;
    pp->ring = WEFT__PIPE_RING;
    for (size_t k = 0; k < pp->n_stages && s == WEFT_OK; k++) {
        s = chunk_stage(pp, &pp->st[k], g, sp, in, out, x, opts);
        if (pp->st[k].chunk) pp->ring = WEFT__PIPE_CHUNK_RINGS * WEFT__PIPE_CHUNK;
    }
    return s;
}

/* *h: a view of `len` consecutive rows of base from row `row`. */
static weft_status_t rows_view(weft_tensor_t **h, weft_tensor_t *base, int64_t row, int64_t len)
{
    int nd = weft_tensor_ndim(base);
    int64_t shape[WEFT_MAX_NDIM];
    memcpy(shape, weft_tensor_shape(base), (size_t)nd * sizeof *shape);
    shape[0] = len;
    return weft__scan_view(h, base, nd, shape, weft_tensor_strides(base),
                           row * weft_tensor_stride(base, 0));
}

/* The rows of steps t0 .. t0 + len - 1 of src, upwards in memory: in step
 * order, or (a reverse scan) from step t0 + len - 1 down to t0, for every
 * source alike (weft__pipe_x_slot), so row i of each pairs the same step. */
static weft_status_t chunk_rows(weft__scan_pipe_t *pp, weft__pipe_src_t src, int64_t t0,
                                int64_t len, weft_tensor_t **h)
{
    const weft__pipe_io_t *io = pp->io;
    const weft__scan_layout_t *l = io->l;
    int64_t first = l->reverse ? t0 + len - 1 : t0; /* the step of the lowest row */
    if (src.kind == WEFT__PIPE_X)
        return rows_view(h, pp->x_rows[src.idx], weft__pipe_x_slot(pp, first), len);
    size_t a = src.idx;
    uint32_t q = 0;
    while (a >= l->seq_ntaps[q]) a -= l->seq_ntaps[q++];
    int64_t tap = l->seq_taps[q][a] - l->seq_taps[q][0];
    return rows_view(h, io->in[1 + q], (l->reverse ? io->n - 1 - first : first) + tap, len);
}

weft_status_t weft__pipe_chunk_run(weft__scan_pipe_t *pp, const weft__pipe_stage_t *st,
                                   int64_t t, weft_tensor_t **h, const char **msg)
{
    const weft__pipe_io_t *io = pp->io;
    const int64_t c = WEFT__PIPE_CHUNK;
    if ((t + 1) % c && t != io->n - 1) return WEFT_OK;
    int64_t t0 = t - t % c, k = t / c, n_chunks = (io->n + c - 1) / c;
    weft_tensor_t *args[3], *res = io->ring[st->chunk_o][(n_chunks - 1 - k) % 2];
    args[0] = k ? io->ring[st->chunk_o][(n_chunks - k) % 2] : io->in[io->init_pos[st->chunk_o]];
    weft_status_t s = chunk_rows(pp, st->chunk_src[0], t0, t - t0 + 1, &h[0]);
    if (s == WEFT_OK) s = chunk_rows(pp, st->chunk_src[1], t0, t - t0 + 1, &h[1]);
    if (s != WEFT_OK) {
        *msg = weft_tensor_last_error();
        return s;
    }
    args[1] = h[0];
    args[2] = h[1];
    s = weft_function_call(st->chunk_f, 3, args, 1, &res);
    *msg = s == WEFT_OK ? "" : weft_function_last_error(st->chunk_f);
    return s;
}

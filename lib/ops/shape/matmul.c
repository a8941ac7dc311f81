/* np.matmul for N-d inputs, lowered to the batched Dot: 1-d operands get a
 * length-1 axis (prepended to a, appended to b) that is dropped again from
 * the result, the batch axes (all but the last two) are broadcast against
 * each other (an Alloc only where an operand's differ), merged into one by
 * Reshape, multiplied by Dot's (b,m,k)@(b,k,n) and split back. Up to 2-d on
 * both sides it is Dot itself. Gradients come from those ops. */
#include <string.h>

#include "array_int.h"
#include "graph/ctor_int.h"
#include "weft/array_ops.h"
#include "weft/linalg.h"
#include "weft/shape_ops.h"

/* v (static shape s, nd >= 2) broadcast to batch[0..nb) + its last two
 * lengths, then reshaped to (prod(batch), s[-2], s[-1]). */
static weft_status_t to_batched(weft_graph_t *g, weft_var_t *v, int nd, const int64_t *s,
                                int nb, const int64_t *batch, int64_t count, const char *file,
                                int line, weft_var_t **out)
{
    int64_t full[WEFT_MAX_NDIM], flat[3] = {count, s[nd - 2], s[nd - 1]};
    memcpy(full, batch, (size_t)nb * sizeof *batch);
    full[nb] = s[nd - 2];
    full[nb + 1] = s[nd - 1];
    bool same = nd == nb + 2 && memcmp(full, s, (size_t)nd * sizeof *s) == 0;
    weft_status_t st = WEFT_OK;
    if (!same) {
        st = weft__got(g, v = weft_broadcast_to_at(g, v, nb + 2, full, file, line));
    }
    return st == WEFT_OK ? weft__got(g, *out = weft_reshape_at(g, v, 3, flat, file, line)) : st;
}

/* The broadcast batch shape of a (sa, na) and b (sb, nb), batch axes only. */
static weft_status_t batch_shape(weft_graph_t *g, const int64_t *sa, int na, const int64_t *sb,
                                 int nb, const char *file, int line, int *n, int64_t *batch,
                                 int64_t *count)
{
    int ba = na - 2, bb = nb - 2;
    *n = ba > bb ? ba : bb;
    *count = 1;
    for (int d = 0; d < *n; d++) {
        int64_t la = d - (*n - ba) >= 0 ? sa[d - (*n - ba)] : 1;
        int64_t lb = d - (*n - bb) >= 0 ? sb[d - (*n - bb)] : 1;
        if (la != lb && la != 1 && lb != 1) {
            return weft_graph_set_error(g, WEFT_ESHAPE, "matmul (at %s:%d): batch lengths %lld "
                                        "and %lld do not broadcast (batch axis %d)", file, line,
                                        (long long)la, (long long)lb, d);
        }
        batch[d] = la == 1 ? lb : la;
        *count *= batch[d];
    }
    return WEFT_OK;
}

/* Static shape of x with a length-1 axis added (at the front or the end)
 * when it is 1-d. */
static weft_status_t operand(weft_graph_t *g, weft_var_t **x, bool is_b, const char *file,
                             int line, int *nd, int64_t *s)
{
    weft_dtype_t dt = WEFT_BOOL;
    weft_status_t st = weft__array_check_inputs(g, "matmul", 1, x, 1, file, line, nd, &dt);
    if (st == WEFT_OK && *nd == 1) {
        st = weft__got(g, *x = weft_expand_dims_at(g, *x, is_b ? 1 : 0, file, line));
        *nd = 2;
    }
    for (int d = 0; st == WEFT_OK && d < *nd; d++) {
        if ((s[d] = weft_type_dim(weft_var_type(*x), d)) < 0) {
            char vb[256];
            weft_var_print(*x, vb, sizeof vb);
            st = weft_graph_set_error(g, WEFT_ESHAPE, "matmul (at %s:%d): operand %s has no "
                                      "static length on axis %d", file, line, vb, d);
        }
    }
    return st;
}

static weft_status_t matmul_nd(weft_graph_t *g, weft_var_t *a, weft_var_t *b, bool a1, bool b1,
                               const char *file, int line, weft_var_t **out)
{
    int na = 0, nb = 0, n = 0;
    int64_t sa[WEFT_MAX_NDIM], sb[WEFT_MAX_NDIM], batch[WEFT_MAX_NDIM], count = 1;
    weft_status_t st = operand(g, &a, false, file, line, &na, sa);
    if (st == WEFT_OK) {
        st = operand(g, &b, true, file, line, &nb, sb);
    }
    if (st == WEFT_OK) {
        st = batch_shape(g, sa, na, sb, nb, file, line, &n, batch, &count);
    }
    weft_var_t *fa = NULL, *fb = NULL, *p = NULL;
    if (st == WEFT_OK) {
        st = to_batched(g, a, na, sa, n, batch, count, file, line, &fa);
    }
    if (st == WEFT_OK) {
        st = to_batched(g, b, nb, sb, n, batch, count, file, line, &fb);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, p = weft_dot_at(g, fa, fb, file, line));
    }
    /* back to batch + (m, n), without the axes the 1-d operands gained */
    int k = n;
    int64_t res[WEFT_MAX_NDIM];
    memcpy(res, batch, (size_t)n * sizeof *batch);
    if (!a1) {
        res[k++] = sa[na - 2];
    }
    if (!b1) {
        res[k++] = sb[nb - 1];
    }
    return st == WEFT_OK ? weft__got(g, *out = weft_reshape_at(g, p, k, res, file, line)) : st;
}

static weft_status_t matmul_impl(weft_graph_t *g, weft_var_t *a, weft_var_t *b,
                                 const char *file, int line, weft_var_t **out)
{
    int na = 0, nb = 0;
    weft_dtype_t dt = WEFT_BOOL;
    weft_status_t st = weft__array_check_inputs(g, "matmul", 1, &a, 1, file, line, &na, &dt);
    if (st == WEFT_OK) {
        st = weft__array_check_inputs(g, "matmul", 1, &b, 1, file, line, &nb, &dt);
    }
    if (st != WEFT_OK) {
        return st;
    }
    if (na <= 2 && nb <= 2) {
        return weft__got(g, *out = weft_dot_at(g, a, b, file, line));
    }
    return matmul_nd(g, a, b, na == 1, nb == 1, file, line, out);
}

weft_var_t *weft_matmul_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b, const char *file,
                           int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = matmul_impl(g, a, b, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_matmul", file, line);
}

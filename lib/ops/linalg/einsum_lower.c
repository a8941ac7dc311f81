/* An einsum as pairwise contractions (docs/linalg.md, "What is lowered to
 * what"): each operand first loses its broadcast length-1 axes (DimShuffle),
 * takes its diagonals (Reshape of the two axes into one, a Subtensor of step
 * n + 1) and sums the labels no one else needs (Sum); then each pair of the
 * path is contracted: with shared summed labels by Dot on (batch, m, k) @
 * (batch, k, n) (DimShuffle + Reshape around it), without them by a
 * broadcast Mul, and a batched product of vectors by Mul + Sum (one tiny
 * Gemm per batch entry would be slower). The result is put in the output's
 * axis order by a DimShuffle. Lengths must be static. */
#include <stdio.h>
#include <string.h>

#include "einsum_int.h"
#include "graph/ctor_int.h"
#include "shape/array_int.h"
#include "weft/elemwise.h"
#include "weft/linalg.h"
#include "weft/reduce.h"
#include "weft/shape_ops.h"

static bool has_label(const weft__ein_term_t *t, int l)
{
    for (int a = 0; a < t->nd; a++) {
        if (t->lab[a] == l) {
            return true;
        }
    }
    return false;
}

static int label_axis(const weft__ein_term_t *t, int l)
{
    for (int a = 0; a < t->nd; a++) {
        if (t->lab[a] == l) {
            return a;
        }
    }
    return -1;
}

/* An intermediate above WEFT_MAX_NDIM axes: the rewrite gives up (the
 * Einsum node keeps its kernel); weft_einsum_lowered fails. */
static weft_status_t too_many_axes(weft_graph_t *g, int n, const char *file, int line)
{
    return weft_graph_set_error(g, WEFT_EINVAL, "einsum lowering (at %s:%d): an intermediate "
                                "of %d axes (at most %d)", file, line, n, WEFT_MAX_NDIM);
}

/* t's axes reordered as labels[0..n) (each carried by t once); new length-1
 * axes where t lacks a label and pad is set. No node when nothing moves. */
static weft_status_t term_order(weft_graph_t *g, weft__ein_term_t *t, int n, const int8_t *labels,
                                bool pad, const char *file, int line)
{
    int order[WEFT_MAX_NDIM];
    bool same = n == t->nd;
    if (n > WEFT_MAX_NDIM) {
        return too_many_axes(g, n, file, line);
    }
    for (int k = 0; k < n; k++) {
        order[k] = label_axis(t, labels[k]);
        same = same && order[k] == k;
        if (order[k] < 0 && !pad) {
            return weft_graph_set_error(g, WEFT_EINVAL, "einsum lowering (at %s:%d): label "
                                        "missing from an intermediate", file, line);
        }
    }
    if (!same) {
        weft_status_t st = weft__got(g, t->v = weft_dimshuffle_at(g, t->v, n, order, file, line));
        if (st != WEFT_OK) {
            return st;
        }
    }
    t->nd = n;
    memcpy(t->lab, labels, (size_t)n);
    return WEFT_OK;
}

/* Sums t over the labels with drop[label] set. */
static weft_status_t term_sum(weft_graph_t *g, weft__ein_term_t *t, const bool *drop,
                              const char *file, int line)
{
    int axes[WEFT_MAX_NDIM], n = 0, k = 0;
    for (int a = 0; a < t->nd; a++) {
        if (drop[t->lab[a]]) {
            axes[n++] = a;
        } else {
            t->lab[k++] = t->lab[a];
        }
    }
    if (n == 0) {
        return WEFT_OK;
    }
    t->nd = k;
    return weft__got(g, t->v = weft_reduce_at(g, WEFT_REDUCE_SUM, t->v, (size_t)n, axes, false, file, line));
}

/* Reshape of t to shape[0..nd) (no node when it has that shape already). */
static weft_status_t reshape_to(weft_graph_t *g, weft_var_t **v, int nd, const int64_t *shape,
                                const char *file, int line)
{
    const weft_type_t *t = weft_var_type(*v);
    bool same = weft_type_ndim(t) == nd;
    for (int d = 0; same && d < nd; d++) {
        same = weft_type_dim(t, d) == shape[d];
    }
    return same ? WEFT_OK : weft__got(g, *v = weft_reshape_at(g, *v, nd, shape, file, line));
}

/* The diagonal of the first label t carries twice: both axes moved last,
 * merged (n*n) and sliced with step n + 1; the label ends up last, once. */
static weft_status_t term_diagonal(weft_graph_t *g, weft__ein_term_t *t, int l, const int64_t *len,
                                   const char *file, int line)
{
    int8_t labels[WEFT_MAX_NDIM];
    int order[WEFT_MAX_NDIM], k = 0, first = -1, second = -1;
    int64_t shape[WEFT_MAX_NDIM];
    for (int a = 0; a < t->nd; a++) { /* a third copy of l stays in front */
        if (t->lab[a] == l && first < 0) {
            first = a;
        } else if (t->lab[a] == l && second < 0) {
            second = a;
        } else {
            labels[k] = t->lab[a];
            shape[k] = len[t->lab[a]];
            order[k++] = a;
        }
    }
    order[k] = first;
    order[k + 1] = second;
    shape[k] = len[l] * len[l];
    labels[k] = (int8_t)l;
    weft_status_t st = weft__got(g, t->v = weft_dimshuffle_at(g, t->v, k + 2, order, file, line));
    if (st == WEFT_OK) {
        st = reshape_to(g, &t->v, k + 1, shape, file, line);
    }
    if (st == WEFT_OK) {
        st = weft__array_axis_slice(g, t->v, k, 0, len[l] * len[l], len[l] + 1, file, line,
                                    &t->v);
    }
    t->nd = k + 1;
    memcpy(t->lab, labels, (size_t)t->nd);
    return st;
}

/* An operand made ready to contract: broadcast axes dropped, diagonals
 * taken, labels nobody else needs summed. */
static weft_status_t term_prepare(weft_graph_t *g, weft__ein_term_t *t, const bool *keep,
                                  const int64_t *len, const char *file, int line)
{
    int8_t labels[WEFT_MAX_NDIM];
    int order[WEFT_MAX_NDIM], k = 0;
    const weft_type_t *ty = weft_var_type(t->v);
    for (int a = 0; a < t->nd; a++) {
        if (!(weft_type_dim(ty, a) == 1 && len[t->lab[a]] != 1)) {
            labels[k] = t->lab[a];
            order[k++] = a;
        }
    }
    weft_status_t st = WEFT_OK;
    if (k != t->nd) {
        st = weft__got(g, t->v = weft_dimshuffle_at(g, t->v, k, order, file, line));
        t->nd = k;
        memcpy(t->lab, labels, (size_t)k);
    }
    for (int a = 0; st == WEFT_OK && a < t->nd; a++) {
        for (int b = a + 1; st == WEFT_OK && b < t->nd; b++) {
            if (t->lab[a] == t->lab[b]) {
                st = term_diagonal(g, t, t->lab[a], len, file, line);
                a = -1; /* the axes moved: look again */
                break;
            }
        }
    }
    bool drop[WEFT__EIN_LABELS] = {false};
    for (int a = 0; a < t->nd; a++) {
        drop[t->lab[a]] = !keep[t->lab[a]];
    }
    return st == WEFT_OK ? term_sum(g, t, drop, file, line) : st;
}

/* Appends to dst the labels of t in class c (0 batch, 1 contracted, 2 own). */
static int pick(const weft__ein_term_t *t, const weft__ein_term_t *o, const bool *keep, int c,
                int8_t *dst, int n)
{
    for (int a = 0; a < t->nd; a++) {
        int l = t->lab[a];
        int cls = !has_label(o, l) ? 2 : keep[l] ? 0 : 1;
        if (cls == c) {
            dst[n++] = (int8_t)l;
        }
    }
    return n;
}

static int64_t prod_len(const int8_t *labels, int n, const int64_t *len)
{
    int64_t p = 1;
    for (int k = 0; k < n; k++) {
        p *= len[labels[k]];
    }
    return p;
}

/* a * b with the own labels of each broadcast against the other's. */
static weft_status_t contract_mul(weft_graph_t *g, weft__ein_term_t *a, weft__ein_term_t *b,
                                  const int8_t *res, int n_res, int n_con, const int8_t *con,
                                  const char *file, int line, weft__ein_term_t *out)
{
    int8_t full[WEFT__EIN_LABELS];
    if (n_res + n_con > WEFT_MAX_NDIM) {
        return too_many_axes(g, n_res + n_con, file, line);
    }
    memcpy(full, res, (size_t)n_res);
    memcpy(full + n_res, con, (size_t)n_con);
    weft_status_t st = term_order(g, a, n_res + n_con, full, true, file, line);
    if (st == WEFT_OK) {
        st = term_order(g, b, n_res + n_con, full, true, file, line);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, out->v = weft_binary_at(g, WEFT_ELEMWISE_MUL, a->v, b->v, file, line));
    }
    out->nd = n_res + n_con;
    memcpy(out->lab, full, (size_t)out->nd);
    bool drop[WEFT__EIN_LABELS] = {false};
    for (int k = 0; k < n_con; k++) {
        drop[con[k]] = true;
    }
    return st == WEFT_OK ? term_sum(g, out, drop, file, line) : st;
}

/* a and b through Dot: (batch, m, k) @ (batch, k, n), batch merged to one
 * axis (dropped when there is none). */
static weft_status_t contract_dot(weft_graph_t *g, weft__ein_term_t *a, weft__ein_term_t *b,
                                  const int8_t *lab[3], const int *cnt, const int8_t *bown,
                                  int n_bown, const int64_t *len, const char *file, int line,
                                  weft__ein_term_t *out)
{
    int8_t oa[WEFT_MAX_NDIM], ob[WEFT_MAX_NDIM];
    int na = 0, nb = 0;
    memcpy(oa, lab[0], (size_t)cnt[0]); /* batch, a's own, contracted */
    memcpy(oa + cnt[0], lab[2], (size_t)cnt[2]);
    memcpy(oa + cnt[0] + cnt[2], lab[1], (size_t)cnt[1]);
    na = cnt[0] + cnt[2] + cnt[1];
    memcpy(ob, lab[0], (size_t)cnt[0]); /* batch, contracted, b's own */
    memcpy(ob + cnt[0], lab[1], (size_t)cnt[1]);
    memcpy(ob + cnt[0] + cnt[1], bown, (size_t)n_bown);
    nb = cnt[0] + cnt[1] + n_bown;
    if (cnt[0] + cnt[2] + n_bown > WEFT_MAX_NDIM) {
        return too_many_axes(g, cnt[0] + cnt[2] + n_bown, file, line);
    }
    int64_t bt = prod_len(lab[0], cnt[0], len), m = prod_len(lab[2], cnt[2], len);
    int64_t k = prod_len(lab[1], cnt[1], len), n = prod_len(bown, n_bown, len);
    int lead = cnt[0] ? 1 : 0;
    int64_t sa[3] = {bt, m, k}, sb[3] = {bt, k, n};
    weft_status_t st = term_order(g, a, na, oa, false, file, line);
    if (st == WEFT_OK) {
        st = term_order(g, b, nb, ob, false, file, line);
    }
    if (st == WEFT_OK) {
        st = reshape_to(g, &a->v, 2 + lead, sa + 1 - lead, file, line);
    }
    if (st == WEFT_OK) {
        st = reshape_to(g, &b->v, 2 + lead, sb + 1 - lead, file, line);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, out->v = weft_dot_at(g, a->v, b->v, file, line));
    }
    out->nd = cnt[0] + cnt[2] + n_bown;
    memcpy(out->lab, lab[0], (size_t)cnt[0]);
    memcpy(out->lab + cnt[0], lab[2], (size_t)cnt[2]);
    memcpy(out->lab + cnt[0] + cnt[2], bown, (size_t)n_bown);
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < out->nd; d++) {
        shape[d] = len[out->lab[d]];
    }
    return st == WEFT_OK ? reshape_to(g, &out->v, out->nd, shape, file, line) : st;
}

weft_status_t weft__ein_contract(weft_graph_t *g, const weft__ein_term_t *a0,
                                 const weft__ein_term_t *b0, const bool *keep, const int64_t *len,
                                 const char *file, int line, weft__ein_term_t *out)
{
    weft__ein_term_t a = *a0, b = *b0;
    bool drop[WEFT__EIN_LABELS] = {false};
    for (int x = 0; x < a.nd; x++) {
        drop[a.lab[x]] = !keep[a.lab[x]] && !has_label(&b, a.lab[x]);
    }
    for (int x = 0; x < b.nd; x++) {
        drop[b.lab[x]] = !keep[b.lab[x]] && !has_label(&a, b.lab[x]);
    }
    weft_status_t st = term_sum(g, &a, drop, file, line);
    if (st == WEFT_OK) {
        st = term_sum(g, &b, drop, file, line);
    }
    if (st != WEFT_OK) {
        return st;
    }
    int8_t batch[WEFT_MAX_NDIM], con[WEFT_MAX_NDIM], aown[WEFT_MAX_NDIM], bown[WEFT_MAX_NDIM];
    int cnt[3] = {pick(&a, &b, keep, 0, batch, 0), pick(&a, &b, keep, 1, con, 0),
                  pick(&a, &b, keep, 2, aown, 0)};
    int n_bown = pick(&b, &a, keep, 2, bown, 0);
    const int8_t *lab[3] = {batch, con, aown};
    if (cnt[1] == 0 || (cnt[0] > 0 && cnt[2] == 0 && n_bown == 0)) {
        int8_t res[WEFT__EIN_LABELS];
        memcpy(res, batch, (size_t)cnt[0]);
        memcpy(res + cnt[0], aown, (size_t)cnt[2]);
        memcpy(res + cnt[0] + cnt[2], bown, (size_t)n_bown);
        return contract_mul(g, &a, &b, res, cnt[0] + cnt[2] + n_bown, cnt[1], con, file, line,
                            out);
    }
    return contract_dot(g, &a, &b, lab, cnt, bown, n_bown, len, file, line, out);
}

/* keep[l]: label l is in the output or in a term of list other than i, j. */
static void keep_of(const weft__ein_spec_t *spec, const weft__ein_term_t *list, int n, int i,
                    int j, bool *keep)
{
    memset(keep, 0, WEFT__EIN_LABELS * sizeof *keep);
    for (int k = 0; k < spec->n_out; k++) {
        keep[spec->out[k]] = true;
    }
    for (int t = 0; t < n; t++) {
        for (int a = 0; t != i && t != j && a < list[t].nd; a++) {
            keep[list[t].lab[a]] = true;
        }
    }
}

/* Where t's first label stands in the output (WEFT__EIN_LABELS: none): the
 * term whose labels come first in the output goes left in a product, so
 * the result's axes (batch, left's, right's) tend to be in the output's
 * order already and need no transpose. */
static int first_out(const weft__ein_spec_t *spec, const weft__ein_term_t *t)
{
    int best = WEFT__EIN_LABELS;
    for (int a = 0; a < t->nd; a++) {
        for (int k = 0; k < spec->n_out && k < best; k++) {
            best = spec->out[k] == t->lab[a] ? k : best;
        }
    }
    return best;
}

static weft_status_t lower(weft_graph_t *g, const weft__ein_spec_t *spec, const int64_t *len,
                           weft_var_t *const *ops, const int32_t *path, const char *file,
                           int line, weft_var_t **out)
{
    weft__ein_term_t list[WEFT_EINSUM_MAX_OPERANDS];
    bool keep[WEFT__EIN_LABELS];
    int n = spec->n;
    for (int i = 0; i < n; i++) {
        list[i].v = ops[i];
        list[i].nd = spec->nd[i];
        memcpy(list[i].lab, spec->lab[i], (size_t)spec->nd[i]);
    }
    weft_status_t st = WEFT_OK;
    for (int i = 0; st == WEFT_OK && i < n; i++) {
        keep_of(spec, list, n, i, i, keep);
        st = term_prepare(g, &list[i], keep, len, file, line);
    }
    for (int k = 0; st == WEFT_OK && n > 1; k++, n--) {
        int i = path[2 * k], j = path[2 * k + 1];
        bool swap = first_out(spec, &list[j]) < first_out(spec, &list[i]);
        weft__ein_term_t r;
        keep_of(spec, list, n, i, j, keep);
        st = weft__ein_contract(g, &list[swap ? j : i], &list[swap ? i : j], keep, len, file,
                                line, &r);
        memmove(&list[j], &list[j + 1], (size_t)(n - j - 1) * sizeof *list);
        memmove(&list[i], &list[i + 1], (size_t)(n - i - 2) * sizeof *list);
        list[n - 2] = r;
    }
    if (st == WEFT_OK) {
        st = term_order(g, &list[0], spec->n_out, spec->out, false, file, line);
    }
    *out = list[0].v;
    return st;
}

static bool lowerable_dtype(weft_dtype_t dt)
{
    return dt == WEFT_FLOAT32 || dt == WEFT_FLOAT64 || dt == WEFT_COMPLEX64 ||
           dt == WEFT_COMPLEX128;
}

/* The spec and static lengths of operands of one lowerable dtype. */
static weft_status_t lowered_spec(weft_graph_t *g, const char *subscripts, size_t n,
                                  weft_var_t *const *ops, const char *file, int line,
                                  weft__ein_spec_t *spec, int64_t *len)
{
    int nd[WEFT_EINSUM_MAX_OPERANDS], bad = 0, axis = 0;
    int64_t dims[WEFT_EINSUM_MAX_OPERANDS][WEFT_MAX_NDIM];
    const int64_t *dp[WEFT_EINSUM_MAX_OPERANDS];
    char msg[256];
    for (size_t i = 0; i < n; i++) {
        if (!ops[i]) {
            return weft__ctor_status(g);
        }
        const weft_type_t *t = weft_var_type(ops[i]);
        weft_dtype_t dt = weft_type_dtype(t);
        if (weft_type_kind(t) != WEFT_TYPE_TENSOR || !lowerable_dtype(dt) ||
            dt != weft_type_dtype(weft_var_type(ops[0])) || !weft_type_is_static(t)) {
            return weft_graph_set_error(g, WEFT_ETYPE, "einsum lowering (at %s:%d): operand %zu "
                                        "is not a float or complex tensor of operand 0's dtype "
                                        "with static lengths", file, line, i);
        }
        nd[i] = weft_type_ndim(t);
        for (int a = 0; a < nd[i]; a++) {
            dims[i][a] = weft_type_dim(t, a);
        }
        dp[i] = dims[i];
    }
    if (weft__ein_parse(subscripts, (int)n, nd, spec, msg, sizeof msg) != WEFT_OK) {
        return weft_graph_set_error(g, WEFT_EINVAL, "einsum lowering (at %s:%d): '%s': %s", file,
                                    line, subscripts, msg);
    }
    if (!weft__ein_lengths(spec, dp, len, &bad, &axis)) {
        return weft_graph_set_error(g, WEFT_ESHAPE, "einsum lowering (at %s:%d): operand %d: "
                                    "length of axis %d does not match", file, line, bad, axis);
    }
    return WEFT_OK;
}

weft_var_t *weft_einsum_lowered_at(weft_graph_t *g, const char *subscripts, size_t n,
                                   weft_var_t *const *operands, const int32_t *path,
                                   const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft__ein_spec_t spec;
    int64_t len[WEFT__EIN_LABELS];
    weft_status_t st = WEFT_OK;
    if (!subscripts || !operands || (!path && n > 1) || n == 0 ||
        n > WEFT_EINSUM_MAX_OPERANDS) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "einsum lowering (at %s:%d): NULL argument or "
                                  "%zu operands", file, line, n);
    }
    for (size_t k = 0; st == WEFT_OK && k + 1 < n; k++) {
        if (path[2 * k] < 0 || path[2 * k] >= path[2 * k + 1] ||
            path[2 * k + 1] >= (int32_t)(n - k)) {
            st = weft_graph_set_error(g, WEFT_EINVAL, "einsum lowering (at %s:%d): path pair %zu "
                                      "(%d, %d) is not i < j < %zu", file, line, k,
                                      (int)path[2 * k], (int)path[2 * k + 1], n - k);
        }
    }
    if (st == WEFT_OK) {
        st = lowered_spec(g, subscripts, n, operands, file, line, &spec, len);
    }
    if (st == WEFT_OK) {
        st = lower(g, &spec, len, operands, path, file, line, &out);
    }
    return weft__ctor_end(g, st, out, "weft_einsum_lowered", file, line);
}

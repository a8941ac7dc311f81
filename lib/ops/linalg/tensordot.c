/* np.tensordot lowered when built: a's free axes and b's take labels of
 * their own, each summed pair one shared label, and the pair of operands is
 * contracted as one step of an einsum (weft__ein_contract: DimShuffle +
 * Reshape to matrices, Dot, Reshape back). The result's axes are a's free
 * ones then b's, in order, as NumPy's. Dtypes that Dot does not take, and
 * unknown lengths, get an Einsum node of the same subscripts instead. */
#include <stdio.h>
#include <string.h>

#include "einsum_int.h"
#include "graph/ctor_int.h"
#include "weft/elemwise.h"

static weft_status_t check_operand(weft_graph_t *g, weft_var_t *v, const char *name,
                                   const char *file, int line)
{
    if (!v) {
        weft_status_t kept = weft_graph_error(g);
        return kept != WEFT_OK ? kept
                               : weft_graph_set_error(g, WEFT_EINVAL, "tensordot (at %s:%d): "
                                                      "operand %s is NULL", file, line, name);
    }
    if (weft_type_kind(weft_var_type(v)) != WEFT_TYPE_TENSOR) {
        char vb[300];
        weft__ein_describe(v, vb, sizeof vb);
        return weft_graph_set_error(g, WEFT_ETYPE, "tensordot (at %s:%d): operand %s %s is not "
                                    "a tensor", file, line, name, vb);
    }
    return WEFT_OK;
}

static weft_status_t check_operands(weft_graph_t *g, weft_var_t *a, weft_var_t *b,
                                    const char *file, int line)
{
    weft_status_t st = check_operand(g, a, "a", file, line);
    return st == WEFT_OK ? check_operand(g, b, "b", file, line) : st;
}

/* Labels of a's and b's axes: pairs share a's; *ok false for a bad axis
 * list (message set). */
static weft_status_t label_axes(weft_graph_t *g, weft_var_t *a, weft_var_t *b, size_t n,
                                const int *axes_a, const int *axes_b, const char *file, int line,
                                weft__ein_term_t *ta, weft__ein_term_t *tb)
{
    ta->nd = weft_type_ndim(weft_var_type(a));
    tb->nd = weft_type_ndim(weft_var_type(b));
    if (n > (size_t)ta->nd || n > (size_t)tb->nd || (n > 0 && (!axes_a || !axes_b))) {
        return weft_graph_set_error(g, WEFT_EINVAL, "tensordot (at %s:%d): %zu summed axes for "
                                    "operands of %d and %d axes (or NULL axes)", file, line, n,
                                    ta->nd, tb->nd);
    }
    for (int d = 0; d < ta->nd; d++) {
        ta->lab[d] = (int8_t)d;
    }
    for (int d = 0; d < tb->nd; d++) {
        tb->lab[d] = -1;
    }
    bool used_a[WEFT_MAX_NDIM] = {false};
    for (size_t k = 0; k < n; k++) {
        int x = axes_a[k] < 0 ? axes_a[k] + ta->nd : axes_a[k];
        int y = axes_b[k] < 0 ? axes_b[k] + tb->nd : axes_b[k];
        if (x < 0 || x >= ta->nd || y < 0 || y >= tb->nd || used_a[x] || tb->lab[y] >= 0) {
            return weft_graph_set_error(g, WEFT_EINVAL, "tensordot (at %s:%d): axis pair %zu "
                                        "(%d, %d) is out of range or repeats an axis", file,
                                        line, k, axes_a[k], axes_b[k]);
        }
        int64_t la = weft_type_dim(weft_var_type(a), x), lb = weft_type_dim(weft_var_type(b), y);
        if (la >= 0 && lb >= 0 && la != lb) {
            char va[300], vb[300];
            weft__ein_describe(a, va, sizeof va);
            weft__ein_describe(b, vb, sizeof vb);
            return weft_graph_set_error(g, WEFT_ESHAPE, "tensordot (at %s:%d): axis %d of a %s "
                                        "has length %lld but axis %d of b %s has %lld", file,
                                        line, x, va, (long long)la, y, vb, (long long)lb);
        }
        used_a[x] = true;
        tb->lab[y] = (int8_t)x;
    }
    for (int d = 0, f = ta->nd; d < tb->nd; d++) {
        tb->lab[d] = tb->lab[d] >= 0 ? tb->lab[d] : (int8_t)f++;
    }
    return WEFT_OK;
}

static char letter(int id)
{
    return (char)(id < 26 ? 'a' + id : 'A' + (id - 26));
}

/* The same contraction as an Einsum node. */
static weft_status_t as_einsum(weft_graph_t *g, const weft__ein_term_t *ta,
                               const weft__ein_term_t *tb, const char *file, int line,
                               weft_var_t **out)
{
    char s[3 * WEFT_MAX_NDIM + 8];
    size_t k = 0;
    bool in_b[2 * WEFT_MAX_NDIM] = {false};
    for (int d = 0; d < tb->nd; d++) {
        in_b[tb->lab[d]] = true;
    }
    for (int d = 0; d < ta->nd; d++) {
        s[k++] = letter(ta->lab[d]);
    }
    s[k++] = ',';
    for (int d = 0; d < tb->nd; d++) {
        s[k++] = letter(tb->lab[d]);
    }
    s[k++] = '-';
    s[k++] = '>';
    for (int d = 0; d < ta->nd; d++) {
        if (!in_b[ta->lab[d]]) {
            s[k++] = letter(ta->lab[d]);
        }
    }
    for (int d = 0; d < tb->nd; d++) {
        if (tb->lab[d] >= ta->nd) {
            s[k++] = letter(tb->lab[d]);
        }
    }
    s[k] = '\0';
    weft_var_t *ops[2] = {ta->v, tb->v};
    return weft__got(g, *out = weft_einsum_at(g, s, 2, ops, file, line));
}

static weft_status_t tensordot_impl(weft_graph_t *g, weft_var_t *a, weft_var_t *b, size_t n,
                                    const int *axes_a, const int *axes_b, const char *file,
                                    int line, weft_var_t **out)
{
    weft__ein_term_t ta, tb, r;
    weft_status_t st = label_axes(g, a, b, n, axes_a, axes_b, file, line, &ta, &tb);
    weft_dtype_t da = weft_type_dtype(weft_var_type(a)), db = weft_type_dtype(weft_var_type(b));
    weft_dtype_t dt = weft_dtype_promote(da, db);
    ta.v = a;
    tb.v = b;
    if (st == WEFT_OK && da != dt) {
        st = weft__got(g, ta.v = weft_cast_at(g, a, dt, file, line));
    }
    if (st == WEFT_OK && db != dt) {
        st = weft__got(g, tb.v = weft_cast_at(g, b, dt, file, line));
    }
    if (st != WEFT_OK) {
        return st;
    }
    bool lowerable = (dt == WEFT_FLOAT32 || dt == WEFT_FLOAT64 || dt == WEFT_COMPLEX64 ||
                      dt == WEFT_COMPLEX128) &&
                     weft_type_is_static(weft_var_type(a)) && weft_type_is_static(weft_var_type(b));
    if (!lowerable) {
        return as_einsum(g, &ta, &tb, file, line, out);
    }
    bool keep[WEFT__EIN_LABELS] = {false};
    int64_t len[WEFT__EIN_LABELS];
    for (int d = 0; d < ta.nd; d++) {
        keep[ta.lab[d]] = true;
        len[ta.lab[d]] = weft_type_dim(weft_var_type(a), d);
    }
    for (int d = 0; d < tb.nd; d++) {
        len[tb.lab[d]] = weft_type_dim(weft_var_type(b), d);
    }
    for (int d = 0; d < tb.nd; d++) {
        keep[tb.lab[d]] = tb.lab[d] >= ta.nd;
    }
    for (size_t k = 0; k < n; k++) {
        keep[axes_a[k] < 0 ? axes_a[k] + ta.nd : axes_a[k]] = false;
    }
    st = weft__ein_contract(g, &ta, &tb, keep, len, file, line, &r);
    *out = r.v;
    return st;
}

weft_var_t *weft_tensordot_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b, size_t n_axes,
                              const int *axes_a, const int *axes_b, const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = check_operands(g, a, b, file, line);
    if (st == WEFT_OK) {
        st = tensordot_impl(g, a, b, n_axes, axes_a, axes_b, file, line, &out);
    }
    return weft__ctor_end(g, st, out, "weft_tensordot", file, line);
}

weft_var_t *weft_tensordot_k_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b, int k,
                                const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = check_operands(g, a, b, file, line);
    int na = st == WEFT_OK ? weft_type_ndim(weft_var_type(a)) : 0;
    int nb = st == WEFT_OK ? weft_type_ndim(weft_var_type(b)) : 0;
    if (st == WEFT_OK && (k < 0 || k > na || k > nb)) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "tensordot (at %s:%d): axes=%d for operands of "
                                  "%d and %d axes", file, line, k, na, nb);
    }
    if (st == WEFT_OK) {
        int axes_a[WEFT_MAX_NDIM], axes_b[WEFT_MAX_NDIM];
        for (int i = 0; i < k; i++) {
            axes_a[i] = na - k + i;
            axes_b[i] = i;
        }
        st = tensordot_impl(g, a, b, (size_t)k, axes_a, axes_b, file, line, &out);
    }
    return weft__ctor_end(g, st, out, "weft_tensordot", file, line);
}

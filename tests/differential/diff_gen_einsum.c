/* The einsum and tensordot cases of the linear algebra family: a drawn
 * template of subscripts (matrix products, batches, traces, diagonals,
 * outer products, ellipsis broadcasting, 3-operand chains, summed axes)
 * with drawn lengths; operands are inputs with drawn static lengths, so
 * some Einsum nodes are lowered in fast_run and some run the direct
 * kernel. The reference is np.einsum (weft_numpy_ref.py, einsum_op); a
 * tensordot is saved lowered (DimShuffle, Reshape, Dot) or as an Einsum. */
#include <string.h>

#include "diff_gen_int.h"

typedef struct ein_template {
    const char *subs;
    const char *out; /* output letters for the shape ("...": the ellipsis axis) */
} ein_template_t;

static const ein_template_t templates[] = {
    {"ij,jk->ik", "ik"},     {"ij,jk", "ik"},          {"bij,bjk->bik", "bik"},
    {"ii", ""},              {"ii->i", "i"},           {"i,j->ij", "ij"},
    {"ij->ji", "ji"},        {"...ij,...jk", "...ik"},   {"ij,jk,kl->il", "il"},
    {"ij,ij->ij", "ij"},     {"bi,bi->b", "b"},        {"ijk,kj->i", "i"},
    {"ij->", ""},            {"iij,jk->ik", "ik"},     {"ab,bc,cd,de->ae", "ae"},
};
#define N_TEMPLATES (sizeof templates / sizeof *templates)

/* Lengths of a term's letters ('.' the ellipsis axis, of length ell). */
static int term_shape(const char *t, size_t n, const int64_t *len, int64_t ell, int64_t *shape)
{
    int nd = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i] == '.') {
            shape[nd++] = ell;
            i += 2;
        } else {
            shape[nd++] = len[(unsigned char)t[i]];
        }
    }
    return nd;
}

static diff_val_t *einsum_case(diff_gen_t *gn, weft_dtype_t dt)
{
    const ein_template_t *tp = &templates[diff_rng_int(&gn->rng, 0, (int)N_TEMPLATES - 1)];
    int64_t len[128] = {0}, shape[DIFF_MAX_RANK];
    for (const char *c = tp->subs; *c; c++) {
        if (*c >= 'a' && *c <= 'z' && len[(unsigned char)*c] == 0) {
            len[(unsigned char)*c] = 1 + diff_rng_int(&gn->rng, 0, 4);
        }
    }
    int64_t ell = diff_rng_int(&gn->rng, 1, 3);
    weft_var_t *ops[4];
    int n = 0;
    const char *end = strstr(tp->subs, "->");
    size_t total = end ? (size_t)(end - tp->subs) : strlen(tp->subs);
    /* three or more operands: unit values. weft multiplies pair by pair in
     * the path's order, np.einsum (unoptimized) every operand at once, so
     * inf, NaN and overflow of intermediates differ (docs/linalg.md) */
    bool smooth = gn->smooth;
    gn->smooth = smooth || memchr(tp->subs, ',', total) != strrchr(tp->subs, ',');
    for (const char *t = tp->subs; t < tp->subs + total; n++) {
        const char *comma = memchr(t, ',', (size_t)(tp->subs + total - t));
        size_t k = comma ? (size_t)(comma - t) : (size_t)(tp->subs + total - t);
        int nd = term_shape(t, k, len, ell, shape);
        if (nd == 3 && t[0] == '.' && n == 1 && diff_rng_chance(&gn->rng, 0.3)) {
            shape[0] = 1; /* the ellipsis axis broadcasts */
        }
        diff_val_t *x = gen_input(gn, dt, nd, shape, false);
        if (!x || !gen_live(gn)) {
            gn->smooth = smooth;
            return NULL;
        }
        ops[n] = x->v;
        t += k + 1;
    }
    gn->smooth = smooth;
    int nd = term_shape(tp->out, strlen(tp->out), len, ell, shape);
    return gen_push(gn, WEFT_OK, weft_einsum(gn->g, tp->subs, (size_t)n, ops), nd, shape);
}

static diff_val_t *tensordot_case(diff_gen_t *gn, weft_dtype_t dt)
{
    int64_t m = 1 + diff_rng_int(&gn->rng, 0, 4), k = 1 + diff_rng_int(&gn->rng, 0, 4);
    int64_t l = 1 + diff_rng_int(&gn->rng, 0, 3), n = 1 + diff_rng_int(&gn->rng, 0, 4);
    diff_val_t *a = gen_input(gn, dt, 3, (int64_t[]){m, k, l}, diff_rng_chance(&gn->rng, 0.7));
    if (!a || !gen_live(gn)) return NULL;
    if (diff_rng_chance(&gn->rng, 0.5)) { /* axes=2: (m,k,l) . (k,l,n) */
        diff_val_t *b = gen_input(gn, dt, 3, (int64_t[]){k, l, n}, true);
        if (!b || !gen_live(gn)) return NULL;
        return gen_push(gn, WEFT_OK, weft_tensordot_k(gn->g, a->v, b->v, 2), 2,
                        (int64_t[]){m, n});
    }
    /* axes=([2, 0], [0, 2]): (m,k,l) . (l,n,m) -> (k, n) */
    diff_val_t *b = gen_input(gn, dt, 3, (int64_t[]){l, n, m}, true);
    if (!b || !gen_live(gn)) return NULL;
    return gen_push(gn, WEFT_OK,
                    weft_tensordot(gn->g, a->v, b->v, 2, ((int[]){2, 0}), ((int[]){0, 2})), 2,
                    (int64_t[]){k, n});
}

diff_val_t *gen_einsum_step(diff_gen_t *gn)
{
    int u = diff_rng_int(&gn->rng, 0, 9);
    weft_dtype_t dt = u < 4 ? WEFT_FLOAT32 : u < 8 ? WEFT_FLOAT64 : u < 9 ? WEFT_INT64
                                                                          : WEFT_INT32;
    return diff_rng_chance(&gn->rng, 0.2) ? tensordot_case(gn, dt) : einsum_case(gn, dt);
}

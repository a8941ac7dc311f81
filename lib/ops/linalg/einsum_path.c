/* The contraction order of an einsum (docs/linalg.md, "How the path is
 * picked"). The cost of contracting two intermediates is the product of
 * the lengths of every label either carries (the multiply-adds of the
 * batched matrix product); an intermediate keeps the labels of its
 * operands that the output or an operand outside it still needs. Up to
 * WEFT_EINSUM_OPTIMAL_MAX operands, dynamic programming over subsets finds
 * the order of least total cost (opt_einsum's 'optimal' / 'dp'); beyond,
 * the greedy order contracts the cheapest pair first. Ties go to the
 * smaller intermediates, then to the first candidate in a fixed order, so
 * the path depends on the subscripts and lengths alone. */
#include <stdio.h>
#include <string.h>

#include "einsum_int.h"

/* A set of labels (WEFT__EIN_LABELS <= 128 bits). */
typedef struct lset {
    uint64_t w[2];
} lset_t;

static void lset_add(lset_t *s, int l)
{
    s->w[l >> 6] |= (uint64_t)1 << (l & 63);
}

static lset_t lset_or(lset_t a, lset_t b)
{
    return (lset_t){{a.w[0] | b.w[0], a.w[1] | b.w[1]}};
}

static lset_t lset_and(lset_t a, lset_t b)
{
    return (lset_t){{a.w[0] & b.w[0], a.w[1] & b.w[1]}};
}

static double lset_size(lset_t s, const int64_t *len)
{
    double p = 1;
    for (int l = 0; l < WEFT__EIN_LABELS; l++) {
        if (s.w[l >> 6] >> (l & 63) & 1) {
            p *= (double)len[l];
        }
    }
    return p;
}

/* What the path search knows: each operand's labels and the output's. */
typedef struct ctx {
    int n;
    lset_t op[WEFT_EINSUM_MAX_OPERANDS], out;
    const int64_t *len;
} ctx_t;

/* The labels an intermediate of the operands in mask keeps. */
static lset_t kept(const ctx_t *c, uint32_t mask)
{
    lset_t in = {{0, 0}}, rest = c->out;
    for (int i = 0; i < c->n; i++) {
        if (mask >> i & 1) {
            in = lset_or(in, c->op[i]);
        } else {
            rest = lset_or(rest, c->op[i]);
        }
    }
    return lset_and(in, rest);
}

/* Appends the pair contracting the intermediates a and b (masks) to path,
 * list holding the current intermediates' masks. */
static void emit(uint32_t *list, int *n_list, uint32_t a, uint32_t b, int32_t *path, int *n_path)
{
    int i = -1, j = -1;
    for (int k = 0; k < *n_list; k++) {
        if (list[k] == a || list[k] == b) {
            if (i < 0) {
                i = k;
            } else {
                j = k;
            }
        }
    }
    path[2 * *n_path] = i;
    path[2 * *n_path + 1] = j;
    (*n_path)++;
    memmove(&list[j], &list[j + 1], (size_t)(*n_list - j - 1) * sizeof *list);
    memmove(&list[i], &list[i + 1], (size_t)(*n_list - i - 2) * sizeof *list);
    list[*n_list - 2] = a | b;
    (*n_list)--;
}

typedef struct dp {
    double cost[1u << WEFT_EINSUM_OPTIMAL_MAX], size[1u << WEFT_EINSUM_OPTIMAL_MAX];
    uint32_t split[1u << WEFT_EINSUM_OPTIMAL_MAX];
} dp_t;

static void dp_emit(const dp_t *d, uint32_t s, uint32_t *list, int *n_list, int32_t *path,
                    int *n_path)
{
    uint32_t s1 = d->split[s], s2 = s & ~s1;
    if (!s1) {
        return;
    }
    dp_emit(d, s1, list, n_list, path, n_path);
    dp_emit(d, s2, list, n_list, path, n_path);
    emit(list, n_list, s1, s2, path, n_path);
}

static void dp_subset(const ctx_t *c, dp_t *d, uint32_t s)
{
    uint32_t low = s & (~s + 1);
    d->cost[s] = -1;
    double own = lset_size(kept(c, s), c->len);
    /* every split once: the part holding the lowest operand is s1 */
    for (uint32_t s1 = (s - 1) & s; s1; s1 = (s1 - 1) & s) {
        if (!(s1 & low)) {
            continue;
        }
        uint32_t s2 = s & ~s1;
        double flops = lset_size(lset_or(kept(c, s1), kept(c, s2)), c->len);
        double cost = d->cost[s1] + d->cost[s2] + flops, size = d->size[s1] + d->size[s2] + own;
        if (d->cost[s] < 0 || cost < d->cost[s] || (cost == d->cost[s] && size < d->size[s])) {
            d->cost[s] = cost;
            d->size[s] = size;
            d->split[s] = s1;
        }
    }
}

static void path_optimal(const ctx_t *c, int32_t *path)
{
    dp_t d; /* 5 KiB */
    uint32_t full = (1u << c->n) - 1, list[WEFT_EINSUM_MAX_OPERANDS];
    for (uint32_t s = 1; s <= full; s++) {
        if ((s & (s - 1)) == 0) {
            d.cost[s] = 0;
            d.size[s] = 0;
            d.split[s] = 0;
        } else {
            dp_subset(c, &d, s);
        }
    }
    int n_list = c->n, n_path = 0;
    for (int i = 0; i < c->n; i++) {
        list[i] = 1u << i;
    }
    dp_emit(&d, full, list, &n_list, path, &n_path);
}

static void path_greedy(const ctx_t *c, int32_t *path)
{
    uint32_t list[WEFT_EINSUM_MAX_OPERANDS];
    int n_list = c->n, n_path = 0;
    for (int i = 0; i < c->n; i++) {
        list[i] = 1u << i;
    }
    while (n_list > 1) {
        double best = -1, best_size = 0;
        uint32_t a = 0, b = 0;
        for (int i = 0; i < n_list; i++) {
            for (int j = i + 1; j < n_list; j++) {
                double flops = lset_size(lset_or(kept(c, list[i]), kept(c, list[j])), c->len);
                double size = lset_size(kept(c, list[i] | list[j]), c->len);
                if (best < 0 || flops < best || (flops == best && size < best_size)) {
                    best = flops;
                    best_size = size;
                    a = list[i];
                    b = list[j];
                }
            }
        }
        emit(list, &n_list, a, b, path, &n_path);
    }
}

void weft__ein_path(const weft__ein_spec_t *spec, const int64_t *len, int32_t *path)
{
    ctx_t c = {.n = spec->n, .len = len};
    bool unknown = false;
    for (int i = 0; i < spec->n; i++) {
        for (int a = 0; a < spec->nd[i]; a++) {
            lset_add(&c.op[i], spec->lab[i][a]);
            unknown |= len[spec->lab[i][a]] < 0;
        }
    }
    for (int k = 0; k < spec->n_out; k++) {
        lset_add(&c.out, spec->out[k]);
    }
    if (unknown) { /* no costs to compare: left to right */
        for (int k = 0; k + 1 < spec->n; k++) {
            path[2 * k] = 0;
            path[2 * k + 1] = 1;
        }
    } else if (spec->n <= WEFT_EINSUM_OPTIMAL_MAX) {
        path_optimal(&c, path);
    } else {
        path_greedy(&c, path);
    }
}

weft_status_t weft_einsum_path(const char *subscripts, size_t n, const int *nd,
                               const int64_t *const *dims, int32_t *path, char *msg, size_t cap)
{
    char dummy[8];
    if (!msg) {
        msg = dummy;
        cap = sizeof dummy;
    }
    if (!subscripts || !nd || !dims || !path || n == 0 || n > WEFT_EINSUM_MAX_OPERANDS) {
        snprintf(msg, cap, "weft_einsum_path: NULL argument or operand count %zu outside "
                 "[1, %d]", n, WEFT_EINSUM_MAX_OPERANDS);
        return WEFT_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        if (nd[i] < 0 || nd[i] > WEFT_MAX_NDIM || (nd[i] > 0 && !dims[i])) {
            snprintf(msg, cap, "weft_einsum_path: operand %zu: bad rank or NULL lengths", i);
            return WEFT_EINVAL;
        }
    }
    weft__ein_spec_t spec;
    int64_t len[WEFT__EIN_LABELS];
    int bad_op = 0, bad_axis = 0;
    weft_status_t st = weft__ein_parse(subscripts, (int)n, nd, &spec, msg, cap);
    if (st != WEFT_OK) {
        return st;
    }
    if (!weft__ein_lengths(&spec, dims, len, &bad_op, &bad_axis)) {
        snprintf(msg, cap, "weft_einsum_path: operand %d: length %lld of axis %d does not "
                 "match its subscript's other lengths", bad_op,
                 (long long)dims[bad_op][bad_axis], bad_axis);
        return WEFT_ESHAPE;
    }
    weft__ein_path(&spec, len, path);
    return WEFT_OK;
}

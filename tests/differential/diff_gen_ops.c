/* Generator families beyond single steps: Dot/Gemm/Gemv graphs (with the
 * z + a*dot(x, y) shape that local_gemm rewrites), Composite ops built
 * directly, the patterns the canonicalizing rewrites look for, and smooth
 * graphs for the gradient check. */
#include <string.h>

#include "diff_gen_int.h"

/* ---- linear algebra ------------------------------------------------------------------ */

static int64_t la_len(diff_gen_t *gn)
{
    int u = diff_rng_int(&gn->rng, 0, 99);
    if (gn->smooth) return 1 + u % 4;
    return u < 4 ? 0 : u < 18 ? 1 : 2 + u % 7;
}

/* An operand of the given shape: mostly an input, sometimes a constant. */
static diff_val_t *la_operand(diff_gen_t *gn, weft_dtype_t dt, int nd, const int64_t *shape)
{
    if (!gn->smooth && diff_rng_chance(&gn->rng, 0.1)) return gen_const(gn, dt, nd, shape);
    return gen_input(gn, dt, nd, shape, gn->smooth);
}

static diff_val_t *la_dot(diff_gen_t *gn, diff_val_t *x, diff_val_t *y, int nd,
                          const int64_t *shape)
{
    if (!x || !y || !gen_live(gn)) return NULL;
    weft_var_t *out = weft_dot(gn->g, x->v, y->v);
    weft_status_t st = WEFT_OK;
    return gen_push(gn, st, out, nd, shape);
}

/* A 0-d scalar for Gemm/Gemv: an input or a constant (sometimes 0). */
static diff_val_t *la_scalar(diff_gen_t *gn, weft_dtype_t dt, bool may_be_zero)
{
    if (may_be_zero && diff_rng_chance(&gn->rng, 0.15)) return gen_const_fill(gn, dt, 0, NULL, 0);
    if (diff_rng_chance(&gn->rng, 0.5)) return gen_input(gn, dt, 0, NULL, gn->smooth);
    return gen_const(gn, dt, 0, NULL);
}

static diff_val_t *la_gemm(diff_gen_t *gn, weft_dtype_t dt, int64_t m, int64_t k, int64_t n)
{
    diff_val_t *z = la_operand(gn, dt, 2, (int64_t[]){ m, n }), *a = la_scalar(gn, dt, true);
    diff_val_t *x = la_operand(gn, dt, 2, (int64_t[]){ m, k });
    diff_val_t *y = la_operand(gn, dt, 2, (int64_t[]){ k, n }), *b = la_scalar(gn, dt, true);
    if (!z || !a || !x || !y || !b || !gen_live(gn)) return NULL;
    weft_var_t *out = weft_gemm(gn->g, z->v, a->v, x->v, y->v, b->v, false);
    weft_status_t st = WEFT_OK;
    return gen_push(gn, st, out, 2, (int64_t[]){ m, n });
}

static diff_val_t *la_gemv(diff_gen_t *gn, weft_dtype_t dt, int64_t m, int64_t n)
{
    diff_val_t *y = la_operand(gn, dt, 1, &m), *a = la_scalar(gn, dt, true);
    diff_val_t *A = la_operand(gn, dt, 2, (int64_t[]){ m, n });
    diff_val_t *x = la_operand(gn, dt, 1, &n), *b = la_scalar(gn, dt, true);
    if (!y || !a || !A || !x || !b || !gen_live(gn)) return NULL;
    weft_var_t *out = weft_gemv(gn->g, y->v, a->v, A->v, x->v, b->v, false);
    weft_status_t st = WEFT_OK;
    return gen_push(gn, st, out, 1, &m);
}

/* z + a*dot(x, y) in one of its spellings: local_gemm turns it into a Gemm. */
static diff_val_t *la_gemm_pattern(diff_gen_t *gn, weft_dtype_t dt, int64_t m, int64_t k,
                                   int64_t n)
{
    diff_val_t *x = la_operand(gn, dt, 2, (int64_t[]){ m, k });
    diff_val_t *y = la_operand(gn, dt, 2, (int64_t[]){ k, n });
    diff_val_t *p = la_dot(gn, x, y, 2, (int64_t[]){ m, n });
    if (p && diff_rng_chance(&gn->rng, 0.7))
        p = gen_binary(gn, WEFT_ELEMWISE_MUL, p, la_scalar(gn, dt, true));
    diff_val_t *z = diff_rng_chance(&gn->rng, 0.5) ? la_operand(gn, dt, 2, (int64_t[]){ m, n })
                                                   : la_operand(gn, dt, 1, &n); /* a bias row */
    if (!p || !z) return NULL;
    weft_elemwise_kind_t k2 =
        diff_rng_chance(&gn->rng, 0.8) ? WEFT_ELEMWISE_ADD : WEFT_ELEMWISE_SUB;
    return diff_rng_chance(&gn->rng, 0.5) ? gen_binary(gn, k2, z, p) : gen_binary(gn, k2, p, z);
}

static diff_val_t *la_transposed(diff_gen_t *gn, diff_val_t *x)
{
    if (!x || !gen_live(gn)) return NULL;
    weft_var_t *out = weft_transpose(gn->g, x->v);
    weft_status_t st = WEFT_OK;
    return gen_push(gn, st, out, 2, (int64_t[]){ x->shape[1], x->shape[0] });
}

static diff_val_t *la_pattern(diff_gen_t *gn, weft_dtype_t dt, int64_t m, int64_t k, int64_t n)
{
    int64_t bt = 1 + diff_rng_int(&gn->rng, 0, 2);
    switch (diff_rng_int(&gn->rng, 0, 9)) {
    case 0: case 1:
        return la_dot(gn, la_operand(gn, dt, 2, (int64_t[]){ m, k }),
                      la_operand(gn, dt, 2, (int64_t[]){ k, n }), 2, (int64_t[]){ m, n });
    case 2:
        return la_dot(gn, la_operand(gn, dt, 2, (int64_t[]){ m, k }), la_operand(gn, dt, 1, &k),
                      1, &m);
    case 3:
        return la_dot(gn, la_operand(gn, dt, 1, &k), la_operand(gn, dt, 2, (int64_t[]){ k, n }),
                      1, &n);
    case 4:
        return la_dot(gn, la_operand(gn, dt, 1, &k), la_operand(gn, dt, 1, &k), 0, NULL);
    case 5:
        return la_dot(gn, la_operand(gn, dt, 3, (int64_t[]){ bt, m, k }),
                      la_operand(gn, dt, 3, (int64_t[]){ bt, k, n }), 3, (int64_t[]){ bt, m, n });
    case 6: return la_gemm(gn, dt, m, k, n);
    case 7: return la_gemv(gn, dt, m, n);
    case 8: return la_gemm_pattern(gn, dt, m, k, n);
    default: {
        diff_val_t *xt = la_transposed(gn, la_operand(gn, dt, 2, (int64_t[]){ k, m }));
        diff_val_t *yt = la_transposed(gn, la_operand(gn, dt, 2, (int64_t[]){ n, k }));
        return la_dot(gn, xt, yt, 2, (int64_t[]){ m, n });
    }
    }
}

/* A well-conditioned square stack for the LAPACK solvers: unit values
 * (|x| < 1) plus 2n on the diagonal, so every matrix is strictly diagonally
 * dominant (condition number below 3) and the NumPy reference's tolerance
 * stays a few ulps times n (weft_numpy_ref.py, lapack_op). */
static diff_val_t *la_square_ex(diff_gen_t *gn, weft_dtype_t dt, int nd, const int64_t *shape,
                                bool all_static)
{
    bool smooth = gn->smooth;
    gn->smooth = true; /* unit values for this input */
    diff_val_t *x = gen_input(gn, dt, nd, shape, all_static);
    gn->smooth = smooth;
    int64_t n = shape[nd - 1];
    double diag[8 * 8] = {0};
    for (int64_t i = 0; i < n; i++) diag[i * n + i] = 2.0 * (double)n;
    float diagf[8 * 8] = {0};
    for (int64_t i = 0; i < n * n; i++) diagf[i] = (float)diag[i];
    const weft_type_t *t = NULL;
    weft_status_t st = weft_type_tensor(gn->g, dt, 2, (int64_t[]){ n, n }, &t);
    weft_var_t *c = st == WEFT_OK ? weft_constant_create(gn->g, t, dt == WEFT_FLOAT64
                                                         ? (const void *)diag : (const void *)diagf,
                                                         (size_t)(n * n) * weft_dtype_size(dt))
                                  : NULL;
    diff_val_t *d = gen_push(gn, st, c, 2, (int64_t[]){ n, n });
    return gen_binary(gn, WEFT_ELEMWISE_ADD, x, d);
}

static diff_val_t *la_square(diff_gen_t *gn, weft_dtype_t dt, int nd, const int64_t *shape)
{
    return la_square_ex(gn, dt, nd, shape, false);
}

/* SolveTriangular with random flags on a's triangle (a dominant diagonal,
 * so well conditioned): b a vector, or a stack whose batch axis is
 * broadcast (length 1, or absent) against a's. */
static diff_val_t *la_solve_triangular(diff_gen_t *gn, weft_dtype_t dt, diff_val_t *a,
                                       int64_t n, int64_t k, int64_t bt, bool stack)
{
    int form = diff_rng_int(&gn->rng, 0, 2); /* vector b, b of a's rank, b with batch 1 */
    int64_t sb[3] = { form == 2 ? 1 : bt, n, k };
    int ndb = form == 0 ? 1 : stack ? 3 : 2;
    const int64_t *shb = form == 0 ? &n : stack ? sb : sb + 1;
    bool smooth = gn->smooth, lower = diff_rng_chance(&gn->rng, 0.5);
    bool unit = diff_rng_chance(&gn->rng, 0.3);
    weft_solve_trans_t trans = (weft_solve_trans_t)diff_rng_int(&gn->rng, 0, 2);
    gn->smooth = true;
    diff_val_t *b = la_operand(gn, dt, ndb, shb);
    gn->smooth = smooth;
    if (!b || !gen_live(gn)) return NULL;
    int64_t so[3] = { bt, n, k };
    int ndo = (stack ? 3 : 2) - (form == 0);
    const int64_t *sho = stack ? so : so + 1;
    if (form == 0) { /* x: a's batch + (n,) */
        so[1] = n;
        sho = stack ? so : &n;
    }
    weft_var_t *out = weft_solve_triangular(gn->g, a->v, b->v, lower, trans, unit);
    return gen_push(gn, WEFT_OK, out, ndo, sho);
}

/* Solve or CholeskySolve (op 0 / 1) with batch axes broadcast as NumPy's
 * np.linalg.solve: b (1, n, k) or (2, 1, n, k) (matrices), or a stack of
 * vectors (1, n) of rank a's - 1 (one matrix a: the vector (n,)). */
static diff_val_t *la_solve_bcast(diff_gen_t *gn, weft_dtype_t dt, diff_val_t *a, int64_t n,
                                  int64_t k, int64_t bt, bool stack, int op)
{
    int form = diff_rng_int(&gn->rng, 0, 2);
    int64_t sb[4] = { 2, 1, n, k }, so[4] = { 2, stack ? bt : 1, n, k };
    int ndb = form == 1 ? 4 : 3, ndo = form == 1 ? 4 : 3;
    const int64_t *shb = form == 1 ? sb : sb + 1, *sho = form == 1 ? so : so + 1;
    if (form == 2) { /* vectors: b (1, n) -> x (bt, n); one matrix: b (n,) -> x (n,) */
        ndb = stack ? 2 : 1;
        ndo = ndb;
        shb = stack ? sb + 1 : sb + 2;
        so[2] = n;
        sho = stack ? so + 1 : so + 2;
    }
    bool smooth = gn->smooth;
    gn->smooth = true; /* unit values: no overflow in the reference's bound */
    diff_val_t *b = la_operand(gn, dt, ndb, shb);
    gn->smooth = smooth;
    if (!b || !gen_live(gn)) return NULL;
    weft_var_t *out = op == 0 ? weft_solve(gn->g, a->v, b->v) : weft_cholesky_solve(gn->g, a->v, b->v);
    return gen_push(gn, WEFT_OK, out, ndo, sho);
}

/* Solve, CholeskySolve (the lower triangle of a dominant matrix is a
 * well-conditioned factor), Inv, Det, singular values, eigenvalues on one
 * matrix or a stack of them. */
static diff_val_t *la_solver(diff_gen_t *gn, weft_dtype_t dt)
{
    int64_t n = diff_rng_int(&gn->rng, 0, 6), k = diff_rng_int(&gn->rng, 0, 4);
    int64_t bt = diff_rng_int(&gn->rng, 1, 3);
    bool stack = diff_rng_chance(&gn->rng, 0.3);
    int nd = stack ? 3 : 2;
    int64_t sa[3] = { bt, n, n }, sb[3] = { bt, n, k };
    diff_val_t *a = la_square(gn, dt, nd, stack ? sa : sa + 1);
    int op = diff_rng_int(&gn->rng, 0, 6);
    if (!a || !gen_live(gn)) return NULL;
    weft_var_t *out = NULL;
    if (op == 6) return la_solve_triangular(gn, dt, a, n, k, bt, stack);
    if (op <= 1 && diff_rng_chance(&gn->rng, 0.4))
        return la_solve_bcast(gn, dt, a, n, k, bt, stack, op);
    if (op <= 1) {
        bool vec = !stack && diff_rng_chance(&gn->rng, 0.4);
        int ndb = vec ? 1 : nd;
        const int64_t *shb = vec ? &n : stack ? sb : sb + 1;
        bool smooth = gn->smooth;
        gn->smooth = true; /* unit values: no overflow in the reference's bound */
        diff_val_t *b = la_operand(gn, dt, ndb, shb);
        gn->smooth = smooth;
        if (!b || !gen_live(gn)) return NULL;
        out = op == 0 ? weft_solve(gn->g, a->v, b->v) : weft_cholesky_solve(gn->g, a->v, b->v);
        return gen_push(gn, WEFT_OK, out, ndb, shb);
    }
    if (op == 2 && diff_rng_chance(&gn->rng, 0.35)) { /* matrix_power of a 4-d stack */
        int64_t s4[4] = { 2, bt, n, n }; /* static: power 0 and the 3-d view need the order */
        diff_val_t *a4 = la_square_ex(gn, dt, 4, s4, true);
        if (!a4 || !gen_live(gn)) return NULL;
        int64_t p = diff_rng_int(&gn->rng, -2, 3);
        return gen_push(gn, WEFT_OK, weft_matrix_power(gn->g, a4->v, p), 4, s4);
    }
    if (op == 2) return gen_push(gn, WEFT_OK, weft_inv(gn->g, a->v), nd, a->shape);
    if (op == 4) /* singular values: sign-free, unlike the vectors */
        return gen_push(gn, WEFT_OK, weft_svd(gn->g, a->v, false, false, NULL, NULL), nd - 1,
                        a->shape);
    if (op == 5) /* eigenvalues of the lower or upper triangle */
        return gen_push(gn, WEFT_OK, weft_eigvalsh(gn->g, a->v, diff_rng_chance(&gn->rng, 0.5)),
                        nd - 1, a->shape);
    return gen_push(gn, WEFT_OK, weft_det(gn->g, a->v), nd - 2, sa);
}

void gen_family_linalg(diff_gen_t *gn)
{
    /* the solver draw comes from a copy of the stream, so the cases that do
     * not take it see the same draws (and graphs) as before it existed */
    diff_rng_t pick = gn->rng;
    diff_rng_int(&pick, 0, 99);
    if (diff_rng_int(&pick, 0, 99) < 25) {
        if (la_solver(gn, diff_rng_chance(&gn->rng, 0.5) ? WEFT_FLOAT32 : WEFT_FLOAT64) &&
            diff_rng_chance(&gn->rng, 0.3))
            gen_step_elemwise(gn);
        return;
    }
    if (diff_rng_int(&pick, 0, 99) < 20) { /* from the copy too: other cases keep their draws */
        if (gen_einsum_step(gn) && diff_rng_chance(&gn->rng, 0.3)) gen_step_elemwise(gn);
        return;
    }
    weft_dtype_t dt = diff_rng_chance(&gn->rng, 0.5) ? WEFT_FLOAT32 : WEFT_FLOAT64;
    bool big = diff_rng_chance(&gn->rng, 0.04); /* larger, still under the split threshold */
    int64_t m = big ? diff_rng_int(&gn->rng, 60, 130) : la_len(gn);
    int64_t k = big ? diff_rng_int(&gn->rng, 40, 90) : la_len(gn);
    int64_t n = big ? diff_rng_int(&gn->rng, 60, 130) : la_len(gn);
    if (!la_pattern(gn, dt, m, k, n)) return;
    if (diff_rng_chance(&gn->rng, 0.4)) gen_step_elemwise(gn);
    diff_val_t *last = &gn->vals[gn->n - 1];
    if (gen_dt(last) == WEFT_BOOL) last = gen_cast(gn, last, WEFT_INT64);
    if (last && diff_rng_chance(&gn->rng, 0.2)) gen_reduce(gn, WEFT_REDUCE_SUM, last);
}

/* ---- Composite ------------------------------------------------------------------------- */

/* An extra Composite input: x's dtype and rank, broadcasting with x and the
 * inputs chosen so far. */
static diff_val_t *composite_input(diff_gen_t *gn, diff_val_t *const *ins, int n)
{
    diff_val_t *x = ins[0];
    for (int tries = 0; tries < 4; tries++) {
        diff_val_t *b = gen_pick(gn);
        bool ok = b && gen_dt(b) == gen_dt(x) && b->nd == x->nd;
        for (int i = 0; ok && i < n; i++) ok = gen_compat(ins[i], b, NULL, NULL);
        if (ok) return b;
    }
    int64_t shape[DIFF_MAX_RANK];
    for (int d = 0; d < x->nd; d++) shape[d] = diff_rng_chance(&gn->rng, 0.3) ? 1 : x->shape[d];
    return gen_const(gn, gen_dt(x), x->nd, shape);
}

static weft_composite_step_t composite_step(diff_gen_t *gn, int s, int n_in)
{
    int regs = n_in + s, recent = regs > 2 ? regs - 2 : 0;
    weft_composite_step_t st;
    bool unary = diff_rng_chance(&gn->rng, 0.4);
    st.kind = unary ? gen_unary_kinds[diff_rng_int(&gn->rng, 0, GEN_N_UNARY - 1)]
                    : gen_arith_kinds[diff_rng_int(&gn->rng, 0, GEN_N_ARITH - 1)];
    st.arg[0] = (uint8_t)(s < n_in ? s : diff_rng_int(&gn->rng, recent, regs - 1));
    st.arg[1] = unary ? 0 : (uint8_t)diff_rng_int(&gn->rng, 0, regs - 1);
    return st;
}

void gen_step_composite(diff_gen_t *gn)
{
    diff_val_t *x = gen_pick(gn);
    if (x && !gen_is_float(gen_dt(x)))
        x = gen_cast(gn, x, diff_rng_chance(&gn->rng, 0.5) ? WEFT_FLOAT32 : WEFT_FLOAT64);
    if (!x) return;
    int n_in = diff_rng_int(&gn->rng, 1, 3), n_steps = diff_rng_int(&gn->rng, 1, 6);
    diff_val_t *ins[3] = { x };
    for (int i = 1; i < n_in; i++)
        if (!(ins[i] = composite_input(gn, ins, i))) return;
    if (n_steps < n_in) n_steps = n_in;
    weft_composite_step_t steps[6];
    for (int s = 0; s < n_steps; s++) steps[s] = composite_step(gn, s, n_in);
    if (!gen_live(gn)) return;
    weft_var_t *vars[3], *out = NULL;
    for (int i = 0; i < n_in; i++) vars[i] = ins[i]->v;
    weft_status_t st = ((out = weft_composite(gn->g, (size_t)n_in, vars, (size_t)n_steps, steps))
                            ? WEFT_OK
                            : weft_graph_error(gn->g));
    int64_t shape[DIFF_MAX_RANK];
    int nd = gen_joint_shape(n_in, ins, shape);
    gen_push(gn, st, out, nd, shape);
}

/* ---- rewrite patterns -------------------------------------------------------------------- */

static diff_val_t *pattern_input(diff_gen_t *gn, bool float_only)
{
    weft_dtype_t dt = float_only || diff_rng_chance(&gn->rng, 0.7)
                          ? (diff_rng_chance(&gn->rng, 0.5) ? WEFT_FLOAT32 : WEFT_FLOAT64)
                          : (diff_rng_chance(&gn->rng, 0.5) ? WEFT_INT32 : WEFT_INT64);
    int64_t shape[DIFF_MAX_RANK];
    int nd = diff_rng_int(&gn->rng, 0, 3);
    gen_shape(gn, nd, shape);
    return gen_input(gn, dt, nd, shape, false);
}

/* x*y/y (or x/y*y) with x of static shape [1] and y longer: the broadcast
 * must survive the cancellation. */
static diff_val_t *pattern_cancel(diff_gen_t *gn, bool div_last)
{
    weft_dtype_t dt = diff_rng_chance(&gn->rng, 0.5) ? WEFT_FLOAT32 : WEFT_FLOAT64;
    int64_t one = 1, n = diff_rng_int(&gn->rng, 0, 5);
    diff_val_t *x = diff_rng_chance(&gn->rng, 0.5) ? gen_input(gn, dt, 1, &one, true)
                                                   : gen_input(gn, dt, 1, &n, false);
    diff_val_t *y = gen_input(gn, dt, 1, &n, false);
    weft_elemwise_kind_t first = div_last ? WEFT_ELEMWISE_MUL : WEFT_ELEMWISE_DIV;
    weft_elemwise_kind_t second = div_last ? WEFT_ELEMWISE_DIV : WEFT_ELEMWISE_MUL;
    return gen_binary(gn, second, gen_binary(gn, first, x, y), y);
}

static diff_val_t *pattern_useless_cast(diff_gen_t *gn, diff_val_t *x)
{
    const weft_op_t *op;
    weft_var_t *out = NULL;
    weft_status_t st = weft_elemwise_op(gn->g, WEFT_ELEMWISE_CAST, -1, gen_dt(x), &op);
    if (st == WEFT_OK) out = weft_op_call(gn->g, op, 1, &x->v);
    return gen_push(gn, st, out, x->nd, x->shape);
}

static diff_val_t *pattern_dimshuffle2(diff_gen_t *gn, diff_val_t *x)
{
    int order[DIFF_MAX_RANK] = { WEFT_DIMSHUFFLE_NEW }, n = 1;
    int64_t shape[DIFF_MAX_RANK] = { 1 };
    for (int d = x->nd - 1; d >= 0 && n < DIFF_MAX_RANK; d--) {
        order[n] = d;
        shape[n++] = x->shape[d];
    }
    if (n != x->nd + 1) return x;
    weft_var_t *mid = NULL, *out = NULL;
    weft_status_t st =
        ((mid = weft_dimshuffle(gn->g, x->v, n, order)) ? WEFT_OK : weft_graph_error(gn->g));
    diff_val_t *m = gen_push(gn, st, mid, n, shape);
    if (!m) return NULL;
    for (int d = 0; d < x->nd; d++) order[d] = x->nd - d; /* back to x, without the new axis */
    st = ((out = weft_dimshuffle(gn->g, m->v, x->nd, order)) ? WEFT_OK : weft_graph_error(gn->g));
    return gen_push(gn, st, out, x->nd, x->shape);
}

/* sum over x's static-1 axes (local_sum_broadcastable). */
static diff_val_t *pattern_sum_broadcastable(diff_gen_t *gn)
{
    weft_dtype_t dt = diff_rng_chance(&gn->rng, 0.7) ? WEFT_FLOAT64 : WEFT_INT32;
    int64_t shape[3] = { 1, gen_len(gn), 1 };
    diff_val_t *x = gen_input(gn, dt, 3, shape, true);
    int axes[2] = { 0, 2 };
    if (!x) return NULL;
    weft_var_t *out = NULL;
    weft_reduce_kind_t kind = diff_rng_chance(&gn->rng, 0.5) ? WEFT_REDUCE_SUM : WEFT_REDUCE_MEAN;
    weft_status_t st =
        ((out = weft_reduce_at(gn->g, kind, x->v, 2, axes, false, __FILE__, __LINE__))
             ? WEFT_OK
             : weft_graph_error(gn->g));
    return gen_push(gn, st, out, 1, &shape[1]);
}

static diff_val_t *pattern(diff_gen_t *gn, int which)
{
    bool float_only = which >= 2 && which <= 3;
    bool own_inputs = (which >= 4 && which <= 5) || which >= 11; /* the pattern makes its own */
    diff_val_t *x = own_inputs ? NULL : pattern_input(gn, float_only);
    diff_val_t *zero = x ? gen_const_fill(gn, gen_dt(x), diff_rng_int(&gn->rng, 0, 1),
                                          (int64_t[]){ 1 }, which == 7 ? 1.0 : 0.0) : NULL;
    switch (which) {
    case 0: return gen_binary(gn, WEFT_ELEMWISE_MUL, x, zero);
    case 1: return gen_binary(gn, WEFT_ELEMWISE_SUB, x, x);
    case 2: return gen_unary(gn, WEFT_ELEMWISE_EXP, gen_unary(gn, WEFT_ELEMWISE_LOG, x));
    case 3: return gen_unary(gn, WEFT_ELEMWISE_LOG, gen_unary(gn, WEFT_ELEMWISE_EXP, x));
    case 4: return pattern_cancel(gn, true);
    case 5: return pattern_cancel(gn, false);
    case 6: return gen_binary(gn, WEFT_ELEMWISE_ADD, zero, x);
    case 7: return gen_binary(gn, WEFT_ELEMWISE_MUL, x, zero); /* zero holds 1 here */
    case 8: return gen_unary(gn, WEFT_ELEMWISE_NEG, gen_unary(gn, WEFT_ELEMWISE_NEG, x));
    case 9: return x ? pattern_useless_cast(gn, x) : NULL;
    case 10: return x ? pattern_dimshuffle2(gn, x) : NULL;
    default: return pattern_sum_broadcastable(gn);
    }
}

void gen_family_rewrite(diff_gen_t *gn)
{
    if (diff_rng_chance(&gn->rng, 0.5)) gn->float_values = DIFF_VAL_SPECIAL;
    if (!pattern(gn, diff_rng_int(&gn->rng, 0, 11))) return;
    if (diff_rng_chance(&gn->rng, 0.4)) gen_step_elemwise(gn);
}

/* ---- smooth graphs for the gradient check ----------------------------------------------- */

/* tanh(x)^2 + 0.5: in [0.5, 1.5], so log, sqrt, pow and division are safe
 * and values stay moderate (finite differences lose accuracy on large
 * costs). */
static diff_val_t *positive(diff_gen_t *gn, diff_val_t *x)
{
    diff_val_t *half = gen_const_fill(gn, WEFT_FLOAT64, 0, NULL, 0.5);
    diff_val_t *t = gen_unary(gn, WEFT_ELEMWISE_TANH, x);
    return gen_binary(gn, WEFT_ELEMWISE_ADD, gen_unary(gn, WEFT_ELEMWISE_SQR, t), half);
}

static void smooth_dot(diff_gen_t *gn, diff_val_t *x)
{
    if (x->nd == 0 || x->nd > 2) {
        gen_unary(gn, WEFT_ELEMWISE_TANH, x);
        return;
    }
    if (diff_rng_chance(&gn->rng, 0.3)) { /* Gemm / Gemv on fresh operands */
        int64_t m = la_len(gn), k = la_len(gn), n = la_len(gn);
        if (diff_rng_chance(&gn->rng, 0.5)) la_gemm(gn, WEFT_FLOAT64, m, k, n);
        else la_gemv(gn, WEFT_FLOAT64, m, k);
        return;
    }
    int64_t k = x->shape[x->nd - 1], n = la_len(gn);
    bool vec = diff_rng_chance(&gn->rng, 0.4);
    diff_val_t *y = vec ? la_operand(gn, WEFT_FLOAT64, 1, &k)
                        : la_operand(gn, WEFT_FLOAT64, 2, (int64_t[]){ k, n });
    int64_t shape[2] = { x->shape[0], n };
    int nd = x->nd - 1 + (vec ? 0 : 1);
    if (x->nd == 1 && !vec) shape[0] = n;
    la_dot(gn, x, y, nd, shape);
}

static void smooth_step(diff_gen_t *gn)
{
    /* Abs and Relu have a kink at 0: values within the finite-difference step
     * of it are improbable enough */
    static const weft_elemwise_kind_t safe[] = {
        WEFT_ELEMWISE_TANH, WEFT_ELEMWISE_SIGMOID, WEFT_ELEMWISE_SIN, WEFT_ELEMWISE_COS,
        WEFT_ELEMWISE_SQR,  WEFT_ELEMWISE_NEG,     WEFT_ELEMWISE_ABS, WEFT_ELEMWISE_RELU,
    };
    static const weft_elemwise_kind_t arith[] = { WEFT_ELEMWISE_ADD, WEFT_ELEMWISE_SUB,
                                                  WEFT_ELEMWISE_MUL };
    diff_val_t *x = gen_pick(gn);
    if (!x) return;
    switch (diff_rng_int(&gn->rng, 0, 10)) {
    case 0: gen_unary(gn, safe[diff_rng_int(&gn->rng, 0, 7)], x); break;
    case 1: gen_unary(gn, WEFT_ELEMWISE_EXP, gen_unary(gn, WEFT_ELEMWISE_TANH, x)); break;
    case 2: gen_unary(gn, WEFT_ELEMWISE_LOG, positive(gn, x)); break;
    case 3: gen_unary(gn, WEFT_ELEMWISE_SQRT, positive(gn, x)); break;
    case 4:
        gen_binary(gn, WEFT_ELEMWISE_POW, positive(gn, x), gen_const(gn, WEFT_FLOAT64, 0, NULL));
        break;
    case 5: gen_binary(gn, arith[diff_rng_int(&gn->rng, 0, 2)], x, gen_operand_for(gn, x, -1));
        break;
    case 6: gen_binary(gn, WEFT_ELEMWISE_DIV, x, positive(gn, gen_operand_for(gn, x, -1))); break;
    case 7: {
        weft_elemwise_kind_t k = diff_rng_chance(&gn->rng, 0.5) ? WEFT_ELEMWISE_MAXIMUM
                                                                 : WEFT_ELEMWISE_MINIMUM;
        gen_binary(gn, k, x, diff_rng_chance(&gn->rng, 0.1) ? x : gen_operand_for(gn, x, -1));
        break;
    }
    case 8: {
        int kind = diff_rng_int(&gn->rng, 0, x->distinct ? 4 : 2);
        static const weft_reduce_kind_t kinds[] = { WEFT_REDUCE_SUM, WEFT_REDUCE_MEAN,
                                                    WEFT_REDUCE_PROD, WEFT_REDUCE_MAX,
                                                    WEFT_REDUCE_MIN };
        gen_reduce(gn, kinds[kind], x);
        break;
    }
    case 9: gen_step_shape(gn); break;
    default: smooth_dot(gn, x); break;
    }
}

void gen_family_grad(diff_gen_t *gn)
{
    gen_inputs(gn, diff_rng_int(&gn->rng, 1, 2), true);
    gen_run_steps(gn, 1, 5, smooth_step);
}

/* ---- the dtypes family ---------------------------------------------------------------- */

/* Kinds applied straight to operands of any real dtypes (no operand fitted
 * to them: weft promotes as NumPy, float-only kinds compute integers in
 * weft_dtype_float_of, Div of integers gives float64). */
static const weft_elemwise_kind_t dtypes_binary[] = {
    WEFT_ELEMWISE_ADD,     WEFT_ELEMWISE_SUB,     WEFT_ELEMWISE_MUL, WEFT_ELEMWISE_DIV,
    WEFT_ELEMWISE_MAXIMUM, WEFT_ELEMWISE_MINIMUM, WEFT_ELEMWISE_LT,  WEFT_ELEMWISE_EQ,
    WEFT_ELEMWISE_GE,
};
static const weft_elemwise_kind_t dtypes_unary[] = {
    WEFT_ELEMWISE_NEG,  WEFT_ELEMWISE_ABS, WEFT_ELEMWISE_SQR, WEFT_ELEMWISE_SQRT,
    WEFT_ELEMWISE_EXP,  WEFT_ELEMWISE_SGN, WEFT_ELEMWISE_RELU, WEFT_ELEMWISE_SIN,
};

static void dtypes_step_binary(diff_gen_t *gn)
{
    diff_val_t *a = gen_pick(gn), *b = a ? gen_operand_for(gn, a, -1) : NULL;
    if (!b) return;
    weft_elemwise_kind_t k = dtypes_binary[diff_rng_int(&gn->rng, 0, 8)];
    bool both_bool = gen_dt(a) == WEFT_BOOL && gen_dt(b) == WEFT_BOOL;
    if (k == WEFT_ELEMWISE_SUB && both_bool) k = WEFT_ELEMWISE_ADD; /* bool - bool: refused */
    gen_binary(gn, k, a, b);
}

static void dtypes_step_unary(diff_gen_t *gn)
{
    diff_val_t *x = gen_pick(gn);
    if (!x) return;
    weft_elemwise_kind_t k = dtypes_unary[diff_rng_int(&gn->rng, 0, 7)];
    bool refused = k == WEFT_ELEMWISE_NEG || k == WEFT_ELEMWISE_SGN; /* for bool */
    if (gen_dt(x) == WEFT_BOOL && refused) k = WEFT_ELEMWISE_ABS;
    gen_unary(gn, k, x);
}

static void dtypes_step(diff_gen_t *gn)
{
    switch (diff_rng_int(&gn->rng, 0, 10)) {
    case 0: case 1: case 2: case 3: dtypes_step_binary(gn); break;
    case 4: case 5: dtypes_step_unary(gn); break;
    case 6: case 7: {
        diff_val_t *x = gen_pick(gn); /* bool too: Sum of bool is int64 */
        if (!x) break;
        weft_reduce_kind_t k = (weft_reduce_kind_t)diff_rng_int(&gn->rng, 0, 4);
        /* Max/Min of an empty axis fails; the reference evaluates every node,
         * so a fast_math rewrite (x*y/y) dropping that node would read as a
         * mismatch. The reduce family covers the failure. */
        bool extreme = k == WEFT_REDUCE_MAX || k == WEFT_REDUCE_MIN;
        if (extreme && gen_count(x->nd, x->shape) == 0) k = WEFT_REDUCE_SUM;
        gen_reduce(gn, k, x);
        break;
    }
    case 8: gen_cast(gn, gen_pick(gn), gen_random_dtype(gn)); break;
    case 9: gen_step_reduce_more(gn); break; /* lane reductions, scans, sorts */
    default: gen_step_elemwise(gn); break;
    }
}

void gen_family_dtypes(diff_gen_t *gn)
{
    gn->all_dtypes = true;
    gen_inputs(gn, diff_rng_int(&gn->rng, 2, 3), false);
    gen_run_steps(gn, 1, 6, dtypes_step);
}

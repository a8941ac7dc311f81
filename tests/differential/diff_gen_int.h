/* The graph generator's state, shared by diff_gen.c (core, elementwise, shape
 * and reduction steps) and diff_gen_ops.c (linear algebra, Composite,
 * rewrite patterns, gradient graphs).
 *
 * Decisions read only the run-time shapes the generator tracks and the
 * static lengths of the variables it built, never anything else weft
 * infers, so rebuilding a case on given variables (gradient checks) draws
 * the same graph. */
#ifndef WEFT_DIFF_GEN_INT_H
#define WEFT_DIFF_GEN_INT_H

#include "diff.h"

/* A value the generator can use: a variable and its run-time shape. */
typedef struct diff_val {
    weft_var_t *v;
    int nd;
    int64_t shape[DIFF_MAX_RANK];
    bool distinct; /* its elements are (almost surely) pairwise different */
} diff_val_t;

typedef struct diff_gen {
    weft_graph_t *g;
    diff_case_t *c;
    diff_rng_t rng;  /* structure */
    diff_rng_t vrng; /* constants' values */
    diff_rng_t srng; /* whether a step is a symbolic-shape one (diff_gen_symshape.c) */
    weft_var_t *const *given;
    size_t n_given;
    diff_val_t vals[DIFF_MAX_VALS];
    int n;
    weft_status_t st; /* first failure; later steps do nothing */
    diff_values_t float_values;
    bool smooth; /* a gradient case: differentiable ops on safe domains */
    bool all_dtypes; /* the dtypes family: gen_random_dtype draws every real dtype */
} diff_gen_t;

/* ---- core (diff_gen.c) ---- */
weft_dtype_t gen_dt(const diff_val_t *x);
int64_t gen_stat(const diff_val_t *x, int d);
bool gen_is_float(weft_dtype_t dt);
size_t gen_count(int nd, const int64_t *shape);
/* Records v (NULL or a failed status: records the failure) and returns it. */
diff_val_t *gen_push(diff_gen_t *gn, weft_status_t st, weft_var_t *v, int nd,
                     const int64_t *shape);
bool gen_live(const diff_gen_t *gn);
/* A new input of dtype dt and run-time shape; static lengths drawn, or all
 * known when all_static. */
diff_val_t *gen_input(diff_gen_t *gn, weft_dtype_t dt, int nd, const int64_t *shape,
                      bool all_static);
diff_val_t *gen_const(diff_gen_t *gn, weft_dtype_t dt, int nd, const int64_t *shape);
diff_val_t *gen_const_fill(diff_gen_t *gn, weft_dtype_t dt, int nd, const int64_t *shape,
                           double value);
/* A random value, recent ones preferred; NULL when there is none. */
diff_val_t *gen_pick(diff_gen_t *gn);
int64_t gen_len(diff_gen_t *gn);
void gen_shape(diff_gen_t *gn, int nd, int64_t *shape);
/* Numpy broadcasting that weft accepts (a length-1 axis broadcasts only when
 * static). Fills the result shape when given. */
bool gen_compat(const diff_val_t *a, const diff_val_t *b, int *nd, int64_t *shape);
/* An operand that broadcasts against a: a value from the pool or a new
 * constant (of dtype dt, or a random one when dt < 0). */
diff_val_t *gen_operand_for(diff_gen_t *gn, const diff_val_t *a, int dt);
diff_val_t *gen_cast(diff_gen_t *gn, diff_val_t *x, weft_dtype_t dt);
diff_val_t *gen_unary(diff_gen_t *gn, weft_elemwise_kind_t k, diff_val_t *x);
diff_val_t *gen_binary(diff_gen_t *gn, weft_elemwise_kind_t k, diff_val_t *a, diff_val_t *b);
#define GEN_N_UNARY 13
#define GEN_N_ARITH 8
/* Unary kinds; binary arithmetic kinds (no comparisons). */
extern const weft_elemwise_kind_t gen_unary_kinds[GEN_N_UNARY];
extern const weft_elemwise_kind_t gen_arith_kinds[GEN_N_ARITH];
weft_dtype_t gen_random_dtype(diff_gen_t *gn);
/* The broadcast shape of values known to broadcast pairwise: per axis the
 * length other than 1, if any. Returns the rank. */
int gen_joint_shape(int k, diff_val_t *const *xs, int64_t *shape);
/* Inputs of drawn shapes (later ones often sharing the first one's). */
void gen_inputs(diff_gen_t *gn, int n, bool float_only);
/* lo..hi calls of step. */
void gen_run_steps(diff_gen_t *gn, int lo, int hi, void (*step)(diff_gen_t *));
/* A reduction of x over drawn axes. */
void gen_reduce(diff_gen_t *gn, weft_reduce_kind_t kind, diff_val_t *x);
/* One random elementwise step (any kind). */
void gen_step_elemwise(diff_gen_t *gn);
void gen_step_shape(diff_gen_t *gn);
void gen_step_reduce(diff_gen_t *gn);
/* Lane reductions, scans and sorting (diff_gen_reduce.c). */
void gen_step_reduce_more(diff_gen_t *gn);
/* Take / inc_at / set_at along a drawn axis (diff_gen_index.c). */
void gen_step_index(diff_gen_t *gn);
/* IfElse of two values of one type on a 0-d condition (diff_gen_ifelse.c). */
void gen_step_ifelse(diff_gen_t *gn);
/* Symbolic shapes (diff_gen_symshape.c): whether to take such a step (its
 * own stream), and one step. */
bool gen_symshape_drawn(diff_gen_t *gn);
void gen_step_symshape(diff_gen_t *gn);
/* An nn step on a float value (diff_gen_reduce.c). */
void gen_step_nn(diff_gen_t *gn);

/* ---- rounding, integer, logical kinds (diff_gen_round.c) ---- */
/* One random step of those kinds (operands converted where refused). */
void gen_step_rounding(diff_gen_t *gn);
/* A float-preserving one (Floor, Mod, ...) on float x: fusable. */
void gen_rounding_fusable(diff_gen_t *gn, diff_val_t *x);

/* ---- op families (diff_gen_ops.c) ---- */
void gen_family_linalg(diff_gen_t *gn);
/* An einsum or tensordot of new inputs (diff_gen_einsum.c). */
diff_val_t *gen_einsum_step(diff_gen_t *gn);
void gen_step_composite(diff_gen_t *gn);
void gen_family_rewrite(diff_gen_t *gn);
void gen_family_grad(diff_gen_t *gn);
void gen_family_dtypes(diff_gen_t *gn);

/* ---- complex numbers (diff_gen_complex.c) ---- */
/* Whether case seed is a complex case (a stream of its own). */
bool diff_gen_complex_drawn(uint64_t seed);
void gen_family_complex(diff_gen_t *gn);
/* ---- Polygamma (diff_gen_polygamma.c) ---- */
bool diff_gen_polygamma_drawn(uint64_t seed);
void gen_family_polygamma(diff_gen_t *gn);

#endif /* WEFT_DIFF_GEN_INT_H */

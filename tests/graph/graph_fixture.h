/* Shared support for the graph core tests: small test ops (unary, binary with
 * broadcasting, multi-output, destroying and viewing, parameterised), a
 * context fixture, and a recording feature that logs every callback. */
#ifndef WEFT_TESTS_GRAPH_FIXTURE_H
#define WEFT_TESTS_GRAPH_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/feature.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/type.h"

typedef struct fx {
    weft_graph_t *g;
    const weft_type_t *vec;    /* float64[?] */
    const weft_type_t *vec3;   /* float64[3] */
    const weft_type_t *scalar; /* float64[] */
    const weft_type_t *ivec;   /* int32[?] */
    const weft_op_t *add, *mul, *neg, *exp, *split, *split_d, *add_inplace, *view;
} fx_t;

/* Op classes: Add / Mul (2 inputs, same dtype and ndim, broadcasting), Neg /
 * Exp (1 input), Split (1 input, 2 outputs, no default), SplitD (default
 * output 1), AddInplace (destroy_map {0: 0}), View (view_map {0: 0}). */
extern const weft_op_class_t fx_add_class, fx_mul_class, fx_neg_class, fx_exp_class, fx_split_class,
    fx_split_d_class, fx_add_inplace_class, fx_view_class;

int fx_setup(void **state);
int fx_teardown(void **state);

/* Shorthands that fail the test on error. */
weft_var_t *fx_var(fx_t *f, const char *name);
weft_var_t *fx_un(fx_t *f, const weft_op_t *op, weft_var_t *a);
weft_var_t *fx_bin(fx_t *f, const weft_op_t *op, weft_var_t *a, weft_var_t *b);
weft_fgraph_t *fx_fgraph(fx_t *f, size_t n_in, weft_var_t *const *in, size_t n_out,
                         weft_var_t *const *out, bool clone, size_t n_feat,
                         weft_feature_t *const *feats);

/* ---- recording feature -------------------------------------------------- */
typedef struct rec {
    weft_feature_t base; /* first member */
    char log[8192];
    size_t len;
    int *live; /* per apply id: 1 while imported (protocol check), may be NULL */
    size_t live_cap;
    bool strict; /* double import / unknown prune -> protocol error recorded */
    int protocol_errors;
    bool refuse_attach;                    /* on_attach returns WEFT_EALREADY */
    bool reject_validate;                  /* on_validate rejects */
    const weft_apply_t *reject_if_present; /* on_validate rejects while imported */
    int *destroyed;                        /* set to 1 by destroy, if not NULL */
    /* orderings: pairs given to weft_orderings_add */
    weft_apply_t *ord_before[8], *ord_after[8];
    size_t n_ord;
} rec_t;

extern const weft_feature_class_t rec_class;
/* A heap-allocated recording feature (the fgraph takes it). */
rec_t *rec_new(void);
/* Number of apply nodes rec currently believes imported. */
size_t rec_n_live(const rec_t *r);

#endif /* WEFT_TESTS_GRAPH_FIXTURE_H */

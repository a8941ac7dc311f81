/* Pattern rewriters: node rewriters described as data (docs/rewrites.md §4).
 *
 * Patterns are s-expressions:
 *   pattern := "(" OP pattern* ")"   an apply of OP; children match its inputs
 *            | token                 a wildcard: [a-z_][a-z0-9_]*
 *            | number                a constant whose every element equals it
 *            | "@" name              out-pattern only: a builder callback
 *   OP      := a name in desc->ops (an op matcher: class plus optional props),
 *              else a class name found by weft_ops_find_class ("Mul", "Div",
 *              "DimShuffle", ...).
 * Example: in "(Div (Mul x y) y)", out "x" - the x*y/y -> x rewrite.
 * Ops nest at most WEFT_PATTERN_MAX_DEPTH levels deep ("(Neg x)" is one).
 *
 * Matching:
 *   - an OP node matches an apply whose op has that class (and, when the
 *     matcher has props, equal props; when it has a predicate, the predicate
 *     holds) and which destroys nothing (in-place ops never match unless the
 *     matcher's props say so); single-output applies only;
 *   - a token bound twice must bind the same variable (two constants with
 *     equal values count as the same);
 *   - a constraint (desc->constraints) on a token must hold for its binding;
 *   - children match positionally; for commutative classes (Add, Mul,
 *     Maximum, Minimum, Eq, Ne, plus desc->commutative) the other input
 *     orders are tried too (backtracking);
 *   - unless allow_multiple_clients, no interior variable of the match (strictly
 *     between the root and the bound tokens) may have more than one client.
 * Building: OP nodes of elementwise classes are built with weft_elemwise
 * (numpy broadcasting); other classes need a matcher with props (or a class
 * without props). A number becomes a 0-d constant of the root output's dtype.
 * If the result's type may not replace the root output (weft_type_is_super),
 * a dtype difference is fixed with a Cast when the shapes fit, else the
 * rewrite does not apply. Nor does it when the result has a static length 1
 * where the root's length is not known to be 1: the root may be a broadcast
 * result, longer at run time (docs/rewrites.md §5).
 *
 * Ownership: borrows desc and everything in it at creation (strings and props
 * are copied; classes and user pointers must outlive the rewriter).
 * Thread: as weft/rewrite.h. */
#ifndef WEFT_REWRITE_PATTERN_H
#define WEFT_REWRITE_PATTERN_H

#include <stdbool.h>
#include <stddef.h>

#include "weft/export.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/rewrite.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_pattern_bindings weft_pattern_bindings_t;

/* The variable bound to `token` in a successful match, or NULL. */
WEFT_API weft_var_t *weft_pattern_binding(const weft_pattern_bindings_t *b, const char *token);

typedef struct weft_pattern_op {
    const char *name;            /* the OP name used in the pattern text */
    const weft_op_class_t *cls;  /* required */
    const void *props;           /* NULL: any props (non-destroying ops only) */
    bool (*pred)(const weft_op_t *op, void *user); /* extra test, may be NULL */
    void *user;
} weft_pattern_op_t;

typedef struct weft_pattern_constraint {
    const char *token;
    bool (*fn)(weft_fgraph_t *fg, weft_var_t *bound, void *user);
    void *user;
} weft_pattern_constraint_t;

/* An out-pattern callback "@name": builds the replacement with the
 * constructors on weft_fgraph_graph(fg) and returns it; NULL with no kept
 * error on the graph means the rewrite does not apply, NULL after a failed
 * constructor (a kept error) is a failure of the rewrite with that status.
 * The builder runs with the graph's earlier kept error set aside, and what
 * it keeps is dropped afterwards (weft/rewrite.h), so a failing builder
 * never leaves an error on the user's graph. */
typedef struct weft_pattern_builder {
    const char *name;
    weft_var_t *(*fn)(weft_fgraph_t *fg, weft_apply_t *node, const weft_pattern_bindings_t *b,
                      void *user);
    void *user;
} weft_pattern_builder_t;

typedef struct weft_pattern_desc {
    size_t size;             /* sizeof(weft_pattern_desc_t) */
    const char *name;        /* rewriter name; required */
    const char *in_pattern;  /* required; its root must be an OP node */
    const char *out_pattern; /* required */
    size_t n_ops;
    const weft_pattern_op_t *ops;
    size_t n_constraints;
    const weft_pattern_constraint_t *constraints;
    size_t n_builders;
    const weft_pattern_builder_t *builders;
    size_t n_commutative; /* extra commutative classes */
    const weft_op_class_t *const *commutative;
    bool allow_multiple_clients;
} weft_pattern_desc_t;

/* The deepest nesting of OP nodes a pattern text may have. */
#define WEFT_PATTERN_MAX_DEPTH 256

#define WEFT_PATTERN_DESC_INIT \
    {sizeof(weft_pattern_desc_t), NULL, NULL, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL, false}

/* Parses both patterns and returns a node rewriter tracking the in-pattern
 * root's class.
 * Ownership: returns new, release with weft_rewriter_release.
 * Errors: WEFT_EINVAL (NULL desc/out/name/patterns, desc->size too small, a
 * NULL array with count > 0), WEFT_EPARSE (malformed text, or ops nested
 * deeper than WEFT_PATTERN_MAX_DEPTH; the message
 * (weft_rewrite_pattern_last_error) gives the offset), WEFT_ENOTFOUND (an
 * unknown OP name, an out-pattern token not bound by the in-pattern, an
 * unknown "@builder", a constraint on an unknown token), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_rewriter_pattern_create(const weft_pattern_desc_t *desc,
                                                    weft_rewriter_t **out);
/* Message of the last weft_rewriter_pattern_create failure on this thread. */
WEFT_API const char *weft_rewrite_pattern_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_REWRITE_PATTERN_H */

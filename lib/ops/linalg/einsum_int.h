/* Internal interface of einsum and tensordot (weft/einsum.h): the parsed
 * subscripts, the Einsum op's props, the contraction path search and the
 * lowering to pairwise contractions, shared by einsum_parse.c,
 * einsum_path.c, einsum_op.c, einsum_kernel.c and einsum_lower.c. */
#ifndef WEFT_OPS_LINALG_EINSUM_INT_H
#define WEFT_OPS_LINALG_EINSUM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/einsum.h"
#include "weft/graph.h"
#include "weft/op.h"

/* Label ids: 'A'..'Z' are 0..25 and 'a'..'z' 26..51 (ASCII order, so the
 * implicit output's sorted order is NumPy's); the broadcast ellipsis axes
 * are 52.. (right-aligned: an operand with e ellipsis axes has the last e). */
#define WEFT__EIN_LETTERS 52
#define WEFT__EIN_LABELS (WEFT__EIN_LETTERS + WEFT_MAX_NDIM)

/* Parsed subscripts: each operand's axes as label ids, the output's. */
typedef struct weft__ein_spec {
    int n;                                     /* operands */
    int nd[WEFT_EINSUM_MAX_OPERANDS];          /* axes of each operand */
    int8_t lab[WEFT_EINSUM_MAX_OPERANDS][WEFT_MAX_NDIM];
    int n_out;
    int8_t out[WEFT_MAX_NDIM];
} weft__ein_spec_t;

/* Parses subscripts for n operands of ranks nd[0..n) (NumPy's grammar).
 * Errors: WEFT_EINVAL with the reason written to msg (cap bytes). */
weft_status_t weft__ein_parse(const char *subscripts, int n, const int *nd,
                              weft__ein_spec_t *spec, char *msg, size_t cap);

/* Each label's length from the operands' lengths dims[i][axis] (-1:
 * unknown): the length other than 1 (a length-1 axis broadcasts, as NumPy);
 * -1 when no operand knows it (1 when every known one is 1 and none is
 * unknown). *bad_op / *bad_axis: the first operand axis whose known length
 * disagrees (return false). */
bool weft__ein_lengths(const weft__ein_spec_t *spec, const int64_t *const *dims, int64_t *len,
                       int *bad_op, int *bad_axis);

/* "x (built at f.c:12)": an operand as the messages name it. */
void weft__ein_describe(const weft_var_t *v, char *buf, size_t cap);

/* The Einsum op's props (compared bytewise: zero-padded). */
typedef struct weft__einsum_props {
    char subscripts[WEFT_EINSUM_MAX_SUBSCRIPTS];
    int32_t n_operands;
    int32_t n_path; /* pairs */
    int32_t path[2 * (WEFT_EINSUM_MAX_OPERANDS - 1)];
} weft__einsum_props_t;

extern const weft_op_class_t weft__einsum_class;

/* The contraction order for spec with label lengths len (-1: unknown):
 * pairs (i, j), i < j, of positions in the current operand list, whose
 * result is appended last (opt_einsum's format); n - 1 pairs. */
void weft__ein_path(const weft__ein_spec_t *spec, const int64_t *len, int32_t *path);

/* The direct (loop) kernel of the Einsum op. */
weft_status_t weft__einsum_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                   weft_tensor_t **outputs, weft_kernel_ctx_t *ctx);

/* One operand of a lowering: a variable whose axes carry labels. */
typedef struct weft__ein_term {
    weft_var_t *v;
    int nd;
    int8_t lab[WEFT_MAX_NDIM];
} weft__ein_term_t;

/* Contracts a and b over the labels both carry that are not in keep
 * (keep[label]: still needed by the output or another operand), through DimShuffle, Reshape and Dot;
 * labels in only one operand and not in keep are summed first. Needs static
 * lengths (len). The result's labels: the batch ones (in both, kept), then
 * a's and b's own. */
weft_status_t weft__ein_contract(weft_graph_t *g, const weft__ein_term_t *a,
                                 const weft__ein_term_t *b, const bool *keep, const int64_t *len,
                                 const char *file, int line, weft__ein_term_t *out);

#endif /* WEFT_OPS_LINALG_EINSUM_INT_H */

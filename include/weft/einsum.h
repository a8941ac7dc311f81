/* Tensor contractions: np.tensordot and np.einsum (docs/linalg.md,
 * "tensordot and einsum").
 *
 * tensordot is lowered when it is built: DimShuffle + Reshape of each
 * operand to a matrix, one Dot, a Reshape back (their gradients). einsum
 * builds one Einsum{subscripts, path} node: it saves to JSON and merges as
 * one op, runs as it is with a direct loop kernel (every mode, e.g. mode
 * "none"), and the fast_run rewrite "local_einsum_lower" (tag "einsum")
 * replaces it by pairwise contractions (DimShuffle, Reshape, batched Dot,
 * Sum) in the order `path` says. The path is chosen when the node is built,
 * from the operands' static lengths: the order of fewest multiply-adds
 * (exhaustive dynamic programming over subsets up to
 * WEFT_EINSUM_OPTIMAL_MAX operands, greedy beyond; ties go to the smaller
 * intermediates), or left to right when a length is unknown.
 *
 * Dtypes: the operands are cast to their promotion (weft_dtype_promote, as
 * NumPy's result_type) first. float32/float64/complex64/complex128 einsums
 * are lowered to Dot; every other dtype (integers, bool, float16) stays an
 * Einsum node and runs on the direct kernel, which sums in the result dtype
 * (integers wrap, as NumPy; bool: or of ands). tensordot of such dtypes is
 * an Einsum node too.
 *
 * Gradient: operand i's is the einsum of the output gradient with the other
 * operands (conjugated for complex dtypes), indices summed in operand i
 * alone broadcast back, repeated indices (a diagonal) scattered back onto
 * the diagonal; it needs static lengths for those two cases.
 *
 * Ownership (every constructor): borrows g, the variables and the strings;
 * the output is borrowed, owned by g. Errors (every constructor): returns
 * the output, or NULL with the first error kept on g (weft/graph.h
 * "Errors"); a NULL variable argument (an earlier constructor's failure)
 * adds no second error. Messages name the op, the operand (number and
 * variable, with its creation site) and the creation site of the call.
 * Thread: as g. */
#ifndef WEFT_EINSUM_H
#define WEFT_EINSUM_H

#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most operands of one einsum, longest subscripts string (with its NUL),
 * and the operand count up to which the path search is exhaustive. */
#define WEFT_EINSUM_MAX_OPERANDS 32
#define WEFT_EINSUM_MAX_SUBSCRIPTS 256
#define WEFT_EINSUM_OPTIMAL_MAX 8

/* np.tensordot(a, b, axes=(axes_a, axes_b)): sums the products over axis
 * axes_a[k] of a and axes_b[k] of b (k < n_axes; negative axes count from
 * the end); the result has a's other axes, then b's, in order. Operands of
 * different dtypes are cast to their promotion. Needs static lengths on the
 * lowered (float or complex) path.
 * Errors: WEFT_EINVAL (NULL axes with n_axes > 0, an axis out of range or
 * listed twice, n_axes above a rank), WEFT_ESHAPE (lengths of paired axes
 * that differ, naming both operands; an unknown length), WEFT_ETYPE (not a
 * tensor), WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_tensordot(g, a, b, n_axes, axes_a, axes_b) \
    weft_tensordot_at((g), (a), (b), (n_axes), (axes_a), (axes_b), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_tensordot_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b,
                                       size_t n_axes, const int *axes_a, const int *axes_b,
                                       const char *file, int line);
/* np.tensordot(a, b, axes=k): a's last k axes with b's first k.
 * Errors: as weft_tensordot (WEFT_EINVAL: k negative or above a rank). */
#define weft_tensordot_k(g, a, b, k) weft_tensordot_k_at((g), (a), (b), (k), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_tensordot_k_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b, int k,
                                         const char *file, int line);

/* np.einsum(subscripts, *operands[0..n)) with NumPy's grammar: operands'
 * subscripts separated by ',' (letters a-z A-Z, '...' for broadcast
 * leading axes, spaces ignored), an optional "->output"; without it the
 * output is the ellipsis axes then the letters used once, sorted. A letter
 * repeated in one operand takes the diagonal; one missing from the output
 * is summed. Axes of length 1 broadcast against the label's length.
 * Errors: WEFT_EINVAL (NULL subscripts or operands, n outside
 * [1, WEFT_EINSUM_MAX_OPERANDS], a subscripts string that does not parse or
 * does not fit the operands - the reason named, e.g. "operand 1 (x: ...)
 * has 3 axes but 2 subscripts", "output letter 'k' is in no operand"),
 * WEFT_ESHAPE (two static lengths of one letter that differ and are not 1:
 * both operands named), WEFT_ETYPE (not a tensor), WEFT_EFOREIGN,
 * WEFT_ENOMEM. */
#define weft_einsum(g, subscripts, n, operands) \
    weft_einsum_at((g), (subscripts), (n), (operands), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_einsum_at(weft_graph_t *g, const char *subscripts, size_t n,
                                    weft_var_t *const *operands, const char *file, int line);

/* The contraction order weft_einsum would choose for operands of the given
 * ranks nd[0..n) and lengths dims[i][0..nd[i]) (-1: unknown), without a
 * graph: n - 1 pairs (i, j), i < j, in path[0 .. 2(n-1)): positions in the
 * list of operands left, where the pair's result is appended last (the
 * format of np.einsum_path and opt_einsum). msg (cap bytes, may be NULL)
 * gets the reason of an error.
 * Ownership: borrows everything; writes path (caller storage of 2(n-1)
 * entries, untouched on error).
 * Errors: WEFT_EINVAL (NULL argument, n out of range, bad subscripts),
 * WEFT_ESHAPE (lengths that disagree). Thread: any. */
WEFT_API weft_status_t weft_einsum_path(const char *subscripts, size_t n, const int *nd,
                                        const int64_t *const *dims, int32_t *path, char *msg,
                                        size_t cap);

/* The props of an Einsum op: its subscripts (borrowed, valid while the op
 * lives), operand count, and path pairs (path: room for
 * 2 * (WEFT_EINSUM_MAX_OPERANDS - 1) entries; *n_pairs pairs written).
 * Errors: WEFT_EINVAL (NULL argument), WEFT_ETYPE (op is not an Einsum).
 * Thread: any. */
WEFT_API weft_status_t weft_einsum_op_info(const weft_op_t *op, const char **subscripts,
                                           size_t *n_operands, int32_t *path, size_t *n_pairs);

/* The lowering of an Einsum node: the same einsum built directly from
 * DimShuffle, Reshape, Dot and Sum, contracting pairs in the order path
 * gives (n - 1 pairs, format of weft_einsum_path); what the rewrite
 * "local_einsum_lower" puts in the Einsum node's place. Operands must have
 * one float or complex dtype and static lengths.
 * Errors: those of weft_einsum; WEFT_EINVAL (a bad path), WEFT_ETYPE
 * (operands of another dtype or of different dtypes), WEFT_ESHAPE (an
 * unknown length). */
#define weft_einsum_lowered(g, subscripts, n, operands, path) \
    weft_einsum_lowered_at((g), (subscripts), (n), (operands), (path), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_einsum_lowered_at(weft_graph_t *g, const char *subscripts, size_t n,
                                            weft_var_t *const *operands, const int32_t *path,
                                            const char *file, int line);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_EINSUM_H */

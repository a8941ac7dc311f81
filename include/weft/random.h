/* Random numbers: a counter-based generator (Philox4x32-10) and the random
 * ops uniform, normal, bernoulli, categorical, integers and permutation.
 * docs/random.md has the rules in full (the counter mapping, the key update,
 * each distribution's method, seeding).
 *
 * The key is explicit state, as the rng of PyTensor's RandomVariable: an
 * int64[2] tensor {key, stream}. Every random op takes the key as its first
 * input and has two outputs: the new key {key, stream + 1} (output 0) and
 * the sample (output 1, what the constructor returns; *new_key receives
 * output 0 when new_key is not NULL). Make the key a shared variable
 * (weft/shared.h) and update it with the new key, so each call of a compiled
 * function draws a new sample:
 *
 *     weft_tensor_t *k0;
 *     weft_random_key_tensor(42, &k0);                 // {42, 0}
 *     weft_var_t *rng = weft_shared(g, k0, "rng"), *rng2;
 *     int64_t shape[1] = {1000};
 *     weft_var_t *x = weft_random_normal(g, rng, weft_constant_scalar(g, WEFT_FLOAT64, 0),
 *                                        weft_constant_scalar(g, WEFT_FLOAT64, 1),
 *                                        WEFT_FLOAT64, 1, shape, &rng2);
 *     weft_update_t up = {rng, rng2};
 *     weft_function_compile(0, NULL, 1, &x, 1, &up, NULL, &f);
 *
 * Values: every sample element depends only on the key, its C-order index,
 * the sample shape and the parameters: the same bits at any thread count,
 * in any schedule, and from the sequential evaluator. Two nodes of the same
 * op on the same key give the same sample (merging them is right); chain
 * the new key into the next op for an independent draw. The ops are never
 * constant-folded and never write their key (no destroy_map): a shared
 * key's update computes the new key into a fresh tensor.
 *
 * Parameters are tensors broadcast against the sample shape as NumPy's
 * Generator does (a parameter of lower rank is left-padded; each of its
 * lengths must be static 1 or equal the sample's; at run time the actual
 * length must equal the sample's unless the static length is 1). Parameters
 * are converted to the parameter dtype each op names below.
 *
 * Ownership (every constructor): borrows g and the variables; the outputs
 * are borrowed, owned by g. Errors (every constructor): returns the sample,
 * or NULL with the first error kept on g (weft/graph.h "Errors"); a NULL
 * variable argument adds no second error. WEFT_EINVAL (NULL key, ndim
 * outside [0, WEFT_MAX_NDIM], NULL shape with ndim > 0, a negative length,
 * a sample of 2^48 elements or more), WEFT_ETYPE (a key that is not int64[2],
 * a parameter of the wrong dtype kind or of more dims than the sample, a
 * bad dtype), WEFT_ESHAPE (a parameter that does not broadcast to the
 * sample), WEFT_EFOREIGN, WEFT_ENOMEM. Run-time errors (the node fails,
 * naming it): WEFT_ESHAPE (a key of another length, a parameter length that
 * differs), WEFT_EINVAL (a parameter outside its domain, listed per op).
 * Thread: as g. */
#ifndef WEFT_RANDOM_H
#define WEFT_RANDOM_H

#include <stdint.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/status.h"
#include "weft/tensor.h"
#include "weft/type.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One Philox4x32-10 block: out = philox(ctr, key) (Salmon et al., SC'11),
 * for checking against the published known-answer vectors and reproducing
 * a sample outside weft. Borrows the arrays. Thread: any. */
WEFT_API void weft_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* A new int64[2] key tensor {seed (as int64 bits), 0}: the value to give a
 * shared key variable (weft_shared), or to restart it (weft_shared_set).
 * Ownership: *out is new (weft_tensor_release). Errors: WEFT_EINVAL (NULL
 * out), WEFT_ENOMEM. Thread: any. */
WEFT_API weft_status_t weft_random_key_tensor(uint64_t seed, weft_tensor_t **out);

/* A constant key {seed, 0} in g. Errors: the constructors' (NULL g: NULL). */
#define weft_random_key(g, seed) weft_random_key_at((g), (seed), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_random_key_at(weft_graph_t *g, uint64_t seed, const char *file,
                                        int line);

/* low + (high - low) * u, u uniform on [0, 1) from 53 random bits (float64)
 * or 24 (float32); dtype float32 or float64, low and high converted to it.
 * As NumPy, the result may round to high. Gradients: d/dlow = 1 - u,
 * d/dhigh = u (reparameterized; the key gets none). */
#define weft_random_uniform(g, key, low, high, dtype, ndim, shape, new_key)                 \
    weft_random_uniform_at((g), (key), (low), (high), (dtype), (ndim), (shape), (new_key), \
                           __FILE__, __LINE__)
WEFT_API weft_var_t *weft_random_uniform_at(weft_graph_t *g, weft_var_t *key, weft_var_t *low,
                                            weft_var_t *high, weft_dtype_t dtype, int ndim,
                                            const int64_t *shape, weft_var_t **new_key,
                                            const char *file, int line);

/* mean + std * z, z standard normal by Box-Muller (docs/random.md §4); dtype
 * float32 or float64, mean and std converted to it. std is not checked (a
 * negative std flips the sign, as mean + std * z). Gradients: d/dmean = 1,
 * d/dstd = z. */
#define weft_random_normal(g, key, mean, std, dtype, ndim, shape, new_key)                 \
    weft_random_normal_at((g), (key), (mean), (std), (dtype), (ndim), (shape), (new_key), \
                          __FILE__, __LINE__)
WEFT_API weft_var_t *weft_random_normal_at(weft_graph_t *g, weft_var_t *key, weft_var_t *mean,
                                           weft_var_t *std, weft_dtype_t dtype, int ndim,
                                           const int64_t *shape, weft_var_t **new_key,
                                           const char *file, int line);

/* bool sample, true with probability p (float, converted to float64). Run
 * time: p outside [0, 1] or NaN fails the node (WEFT_EINVAL), as NumPy
 * raises. No gradient (p's is undefined). */
#define weft_random_bernoulli(g, key, p, ndim, shape, new_key) \
    weft_random_bernoulli_at((g), (key), (p), (ndim), (shape), (new_key), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_random_bernoulli_at(weft_graph_t *g, weft_var_t *key, weft_var_t *p,
                                              int ndim, const int64_t *shape,
                                              weft_var_t **new_key, const char *file,
                                              int line);

/* int64 sample of category indices drawn with probabilities p (not logits,
 * as PyTensor's categorical): p is a float tensor of at least 1 dim whose
 * last axis holds the k categories; its other axes broadcast against the
 * sample shape. Run time: k == 0, a p < 0 or NaN, or a row whose sum differs
 * from 1 by more than sqrt(float64 eps) fails the node (WEFT_EINVAL), as
 * NumPy's Generator.choice. No gradient. */
#define weft_random_categorical(g, key, p, ndim, shape, new_key) \
    weft_random_categorical_at((g), (key), (p), (ndim), (shape), (new_key), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_random_categorical_at(weft_graph_t *g, weft_var_t *key, weft_var_t *p,
                                                int ndim, const int64_t *shape,
                                                weft_var_t **new_key, const char *file,
                                                int line);

/* int64 sample uniform on [low, high) (NumPy's Generator.integers), without
 * bias (Lemire's method). low and high are integer tensors (converted to
 * int64). Run time: low >= high fails the node (WEFT_EINVAL). No gradient. */
#define weft_random_integers(g, key, low, high, ndim, shape, new_key)                 \
    weft_random_integers_at((g), (key), (low), (high), (ndim), (shape), (new_key), \
                            __FILE__, __LINE__)
WEFT_API weft_var_t *weft_random_integers_at(weft_graph_t *g, weft_var_t *key, weft_var_t *low,
                                             weft_var_t *high, int ndim, const int64_t *shape,
                                             weft_var_t **new_key, const char *file, int line);

/* A random permutation of 0, ..., n-1 (int64[n], NumPy's permutation(n)):
 * the indices sorted by a 64-bit draw each (ties by index). n >= 0. */
#define weft_random_permutation(g, key, n, new_key) \
    weft_random_permutation_at((g), (key), (n), (new_key), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_random_permutation_at(weft_graph_t *g, weft_var_t *key, int64_t n,
                                                weft_var_t **new_key, const char *file, int line);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_RANDOM_H */

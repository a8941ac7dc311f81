/* The NumPy differential test, C half (docs/testing.md): weft_diff_runner
 * generates seeded random graphs, runs them through weft and writes a case
 * stream that tests/differential/check_numpy.py checks against NumPy.
 *
 * Files: diff_rng.c (random numbers), diff_values.c (input memory layouts
 * and values), diff_gen.c + diff_gen_ops.c (the graph generator, one
 * function per op family), diff_emit.c (the stream), diff_run.c (compile,
 * call, gradients), weft_diff_runner.c (main).
 *
 * Stream: per case one header line "#case {json}\n" followed by the
 * header's "payload" bytes: the graph JSON (weft_graph_io_save), then every
 * array's elements in C order; the header gives each array's dtype, shape,
 * offset and byte count. The runner never judges values against NumPy; it
 * only reports what weft did (and compares weft with itself where weft
 * promises identical bits: repeated calls, caller-supplied outputs). */
#ifndef WEFT_DIFF_H
#define WEFT_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/weft.h"

#define DIFF_MAX_RANK 4
#define DIFF_MAX_INPUTS 5
#define DIFF_MAX_OUTPUTS 3
#define DIFF_MAX_VALS 64
#define DIFF_MAX_ELEMS 32768 /* largest value a case builds on */

/* ---- known defects the generator steers around --------------------------------
 * Each flag avoids a way of calling weft that crashes or corrupts the runner
 * itself (wrong values are left to check_numpy.py's KNOWN_BAD list, which
 * excuses them by name). Set a flag to 0 once the named fix is merged. */
/* item 2: Dot/Gemm with an empty inner dimension reads through the NULL data
 * pointer of empty tensors (weft_tensor_from_data allows it) inside OpenBLAS:
 * empty inputs get a valid pointer. */
#ifndef DIFF_SKIP_ITEM2_NULL_EMPTY
#define DIFF_SKIP_ITEM2_NULL_EMPTY 0
#endif
/* item 7: a mutable input that is a broadcast (stride-0) view is written
 * through: stride-0 inputs are never declared mutable. */
#ifndef DIFF_SKIP_ITEM7_MUTABLE_BROADCAST
#define DIFF_SKIP_ITEM7_MUTABLE_BROADCAST 0
#endif

/* ---- random numbers (xoshiro256**, seeded through splitmix64) ----------------- */

typedef struct diff_rng {
    uint64_t s[4];
} diff_rng_t;

void diff_rng_seed(diff_rng_t *r, uint64_t seed);
uint64_t diff_rng_next(diff_rng_t *r);
/* Uniform in [lo, hi] (lo <= hi). */
int diff_rng_int(diff_rng_t *r, int lo, int hi);
/* Uniform in [0, 1). */
double diff_rng_unit(diff_rng_t *r);
bool diff_rng_chance(diff_rng_t *r, double p);
/* The seed of case `index` of a run seeded with `seed`. */
uint64_t diff_case_seed(uint64_t seed, uint64_t index);

/* ---- inputs ------------------------------------------------------------------- */

/* How an input's elements are drawn. */
typedef enum diff_values {
    DIFF_VAL_SMALL,    /* floats in [-3, 3), integers in [-5, 5] */
    DIFF_VAL_POSITIVE, /* floats in [0.25, 4), integers in [1, 6] */
    DIFF_VAL_WIDE,     /* any magnitude the dtype holds, either sign */
    DIFF_VAL_SPECIAL,  /* a third nan, +-inf, -0.0, subnormals, extremes; the rest small */
    DIFF_VAL_UNIT,     /* floats in [-1, 1) away from 0 (gradient points) */
} diff_values_t;

/* An input: its variable's type, its run-time shape, how its memory is laid
 * out (view axis d walks base axis perm[d], backwards when rev[d], every
 * gap[d]-th element, or with stride 0 when bcast[d]) and its values. */
typedef struct diff_input {
    weft_dtype_t dt;
    int nd;
    int64_t shape[DIFF_MAX_RANK];
    int64_t stat[DIFF_MAX_RANK]; /* the variable's static lengths (-1: unknown) */
    diff_values_t values;
    bool is_mutable;
    int perm[DIFF_MAX_RANK];
    bool rev[DIFF_MAX_RANK];
    int gap[DIFF_MAX_RANK];
    bool bcast[DIFF_MAX_RANK];
    bool null_data; /* empty and handed over with a NULL data pointer */
} diff_input_t;

/* An input's memory: the base buffer the view walks, a pristine copy of it
 * (restored before every call: mutable inputs may be overwritten), the
 * elements in C order (what NumPy gets) and the tensor weft gets. */
typedef struct diff_array {
    void *base;
    void *pristine;
    size_t base_bytes;
    void *logical;
    size_t logical_bytes;
    weft_tensor_t *view;
} diff_array_t;

/* Draws the layout of an input of in->nd dimensions (no stride tricks when
 * plain is set) and, when it can be written, whether it is mutable. */
void diff_input_layout(diff_rng_t *r, diff_input_t *in, bool plain);
/* Allocates and fills a's memory for in, drawing values from r.
 * Returns WEFT_OK or WEFT_ENOMEM / the tensor's error. */
weft_status_t diff_array_create(const diff_input_t *in, diff_rng_t *r, diff_array_t *a);
void diff_array_destroy(diff_array_t *a);
/* Restores the base buffer from the pristine copy. */
void diff_array_restore(diff_array_t *a);
/* Whether the base buffer still equals the pristine copy. */
bool diff_array_untouched(const diff_array_t *a);
/* Fills n elements of dtype dt at dst with values of class v. */
void diff_fill_values(diff_rng_t *r, weft_dtype_t dt, diff_values_t v, void *dst, size_t n);
/* Copies t's elements in C order into dst (weft_tensor_size(t) elements). */
void diff_gather(const weft_tensor_t *t, void *dst);

/* ---- cases -------------------------------------------------------------------- */

/* Op families; a case draws one (diff_gen.c). */
typedef enum diff_family {
    DIFF_FAM_ELEMWISE,
    DIFF_FAM_SHAPE,
    DIFF_FAM_REDUCE,
    DIFF_FAM_LINALG,
    DIFF_FAM_FUSION,
    DIFF_FAM_REWRITE,
    DIFF_FAM_MIXED,
    DIFF_FAM_GRAD,
    DIFF_FAM_DTYPES, /* every real dtype, mixed: promotion, wrapping, float16 */
    DIFF_FAM_COMPLEX, /* drawn from its own stream (diff_gen_complex.c) */
    DIFF_FAM_POLYGAMMA, /* its own stream too (diff_gen_polygamma.c) */
    DIFF_FAM_COUNT
} diff_family_t;

const char *diff_family_name(diff_family_t f);

typedef struct diff_case {
    uint64_t index;
    uint64_t seed;
    diff_family_t family;
    int n_in;
    diff_input_t in[DIFF_MAX_INPUTS];
    weft_var_t *in_vars[DIFF_MAX_INPUTS];
    int n_out;
    weft_var_t *out_vars[DIFF_MAX_OUTPUTS];
} diff_case_t;

/* Builds case c->index of c->seed in g: sets c->family, the inputs (their
 * types, layouts and value classes) and the outputs. given: NULL to create
 * the input variables, else the variables to build on (a gradient check
 * rebuilding the same graph; they must match the drawn inputs).
 * Errors: a constructor's status (message on g), WEFT_ERANGE when given holds
 * fewer variables than the case draws. */
weft_status_t diff_gen_case(weft_graph_t *g, diff_case_t *c, weft_var_t *const *given,
                            size_t n_given);

/* ---- the stream ----------------------------------------------------------------- */

/* A growing byte buffer (header text or payload). */
typedef struct diff_buf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed: the buffer is unusable */
} diff_buf_t;

void diff_buf_printf(diff_buf_t *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void diff_buf_append(diff_buf_t *b, const void *data, size_t n);
/* Appends s as a JSON string literal (quoted, escaped). */
void diff_buf_json_string(diff_buf_t *b, const char *s);
void diff_buf_free(diff_buf_t *b);

/* One case's record being written: header JSON and payload. */
typedef struct diff_record {
    diff_buf_t head;
    diff_buf_t payload;
} diff_record_t;

/* Appends the fields "dtype","shape","off","nbytes" (no braces: the caller
 * may add fields) of an array of dtype dt and the given shape whose C-order
 * elements are at data, copying them into the payload. */
void diff_record_array(diff_record_t *r, weft_dtype_t dt, int nd, const int64_t *shape,
                       const void *data);
/* Writes "#case " head "\n" payload to out and resets r. */
bool diff_record_flush(diff_record_t *r, FILE *out);
void diff_record_free(diff_record_t *r);

/* ---- running ---------------------------------------------------------------------- */

typedef struct diff_env {
    weft_pool_t *pools[2]; /* 1 and 2 workers */
    FILE *out;
    bool print_functions; /* print each compiled function to stderr */
    /* The rewrite tag of the rewrites that may change IEEE results ("fast_math",
     * or $WEFT_DIFF_FAST_MATH_TAG), when the rewrite database knows it: cases
     * then also run in fast_run without it, which must give mode none's bits.
     * NULL: not known. */
    const char *fast_math_tag;
} diff_env_t;

/* Generates, runs and writes case `index` of `seed`. Returns false when the
 * stream could not be written (the run must stop); weft's failures are
 * written into the stream, not returned. */
bool diff_run_case(diff_env_t *env, uint64_t seed, uint64_t index);

#endif /* WEFT_DIFF_H */

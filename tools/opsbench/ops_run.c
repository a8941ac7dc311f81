/* weft-ops-bench: one op row measured. The row's graph is compiled once
 * (rewrite mode fast_run) on the tool's pool; each repetition times one
 * call with a caller-supplied output tensor (a warm call: nothing is
 * allocated, docs/execution.md §4.5), one weft_tensor_copy of the result
 * (what such a call spends delivering it into the caller's tensor) and one
 * memcpy of a's bytes, alternately, so that the medians see the same minute
 * of machine (docs/performance-notes.md §1). NumPy then times the same
 * expression on the same values in its own process (numpy_child.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opsbench.h"

/* splitmix64: the inputs' values, the same on every run. */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A float64 tensor of uniform values in [-1, 1) drawn from seed. */
static weft_tensor_t *uniform_input(int nd, const int64_t *shape, uint64_t seed)
{
    weft_tensor_t *t = NULL;
    ob_check(weft_tensor_empty(WEFT_FLOAT64, nd, shape, &t), "allocate", NULL);
    double *d = weft_tensor_data(t);
    for (size_t i = 0, n = weft_tensor_size(t); i < n; i++) {
        d[i] = -1.0 + 2.0 * (double)(splitmix64(&seed) >> 11) * 0x1p-53;
    }
    return t;
}

static void function_die(const char *what, const char *row, weft_status_t st,
                         const weft_function_t *f)
{
    fprintf(stderr, "weft-ops-bench: %s %s: %s %s\n", what, row, weft_status_name(st),
            weft_function_last_error(f));
    exit(1);
}

/* a's shape for row at n elements (ob_row_t.rows, .cols) and b's. */
static void row_shapes(const ob_row_t *row, int64_t n, int64_t shape_a[2], int64_t shape_b[1])
{
    shape_a[0] = row->rows ? row->rows : n / OB_COLS;
    shape_a[1] = shape_b[0] = row->rows ? row->cols : OB_COLS;
    if (row->b_indices) {
        shape_b[0] = shape_a[0];
    }
}

/* int64 indices (len,) uniform in [0, bound) drawn from seed. */
static weft_tensor_t *index_input(int64_t len, int64_t bound, uint64_t seed)
{
    weft_tensor_t *t = NULL;
    ob_check(weft_tensor_empty(WEFT_INT64, 1, &len, &t), "allocate", NULL);
    int64_t *d = weft_tensor_data(t);
    for (int64_t i = 0; i < len; i++) {
        d[i] = (int64_t)(splitmix64(&seed) % (uint64_t)bound);
    }
    return t;
}

/* The row's graph on a and b (row_shapes), compiled on pool. */
static weft_function_t *compile_row(const ob_row_t *row, int64_t n, weft_pool_t *pool)
{
    int64_t shape_a[2], shape_b[1];
    row_shapes(row, n, shape_a, shape_b);
    weft_graph_t *g = NULL;
    const weft_type_t *ta = NULL, *tb = NULL;
    ob_check(weft_graph_create(NULL, &g), "graph", NULL);
    ob_check(weft_type_tensor(g, WEFT_FLOAT64, 2, shape_a, &ta), "type", g);
    ob_check(weft_type_tensor(g, row->b_indices ? WEFT_INT64 : WEFT_FLOAT64, 1, shape_b, &tb),
             "type", g);
    weft_var_t *in[2] = {weft_var_create(g, ta, "a"), weft_var_create(g, tb, "b")};
    weft_var_t *out = row->build(g, in);
    ob_check_built(out, row->name, g);
    weft_function_options_t opts = WEFT_FUNCTION_OPTIONS_INIT;
    opts.pool = pool;
    opts.name = row->name;
    weft_function_t *f = NULL;
    weft_status_t st = weft_function_compile(row->n_in, in, 1, &out, 0, NULL, &opts, &f);
    if (st != WEFT_OK) {
        function_die("compile", row->name, st, NULL);
    }
    weft_graph_destroy(g); /* the function keeps its own copy */
    return f;
}

/* One call; *out NULL: receives the result (first call), else filled. */
static double time_call(weft_function_t *f, const ob_row_t *row, weft_tensor_t *const *in,
                        weft_tensor_t **out)
{
    double t0 = ob_now_s();
    weft_status_t st = weft_function_call(f, row->n_in, in, 1, out);
    double t = ob_now_s() - t0;
    if (st != WEFT_OK) {
        function_die("call", row->name, st, f);
    }
    return t;
}

typedef struct row_times {
    double op_s, out_copy_s, memcpy_s; /* medians */
} row_times_t;

static double time_copy(weft_tensor_t *dst, const weft_tensor_t *src)
{
    double t0 = ob_now_s();
    ob_check(weft_tensor_copy(dst, src), "copy", NULL);
    return ob_now_s() - t0;
}

/* reps alternations of a warm call, a copy of its result and a memcpy of a;
 * *res: the result. */
static row_times_t time_row(weft_function_t *f, const ob_row_t *row, weft_tensor_t *const *in,
                            int reps, weft_tensor_t **res)
{
    size_t bytes = weft_tensor_size(in[0]) * sizeof(double);
    double *dst = ob_xmalloc(bytes), *t_op = ob_xmalloc((size_t)reps * sizeof *t_op);
    double *t_out = ob_xmalloc((size_t)reps * sizeof *t_out);
    double *t_cp = ob_xmalloc((size_t)reps * sizeof *t_cp);
    memset(dst, 0, bytes); /* first touch outside the timed region */
    time_call(f, row, in, res); /* allocates the result, plans the memory */
    time_call(f, row, in, res); /* from here on, calls are warm */
    weft_tensor_t *spare = NULL; /* the copy's destination, touched by the clone */
    ob_check(weft_tensor_clone(*res, &spare), "clone", NULL);
    for (int r = 0; r < reps; r++) {
        t_op[r] = time_call(f, row, in, res);
        t_out[r] = time_copy(spare, *res);
        double t0 = ob_now_s();
        memcpy(dst, weft_tensor_data(in[0]), bytes);
        t_cp[r] = ob_now_s() - t0;
    }
    row_times_t t = {ob_median(t_op, reps), ob_median(t_out, reps), ob_median(t_cp, reps)};
    weft_tensor_release(spare);
    free(dst);
    free(t_op);
    free(t_out);
    free(t_cp);
    return t;
}

static void print_line(const ob_row_t *row, int64_t n_elems, const ob_config_t *cfg,
                       row_times_t t, bool have_np, double np_ms, bool agree)
{
    double n = (double)n_elems, ms = 1e3 * t.op_s;
    double gbps = row->bytes_per_elem * n / t.op_s * 1e-9;
    double cp_gbps = 2.0 * 8.0 * n / t.memcpy_s * 1e-9; /* memcpy reads and writes */
    printf("opsbench op=%s n=%lld threads=%d ms=%.3f out_copy_ms=%.3f gbps=%.2f memcpy_gbps=%.2f "
           "bw_ratio=%.3f bound=%s ",
           row->name, (long long)n_elems, weft_pool_thread_count(cfg->pool), ms,
           1e3 * t.out_copy_s, gbps, cp_gbps, gbps / cp_gbps,
           row->memory_bound ? "memory" : "compute");
    if (have_np) {
        printf("numpy_ms=%.3f vs_numpy=%.3f agree=%s\n", np_ms, np_ms / ms, agree ? "yes" : "no");
    } else {
        printf("numpy_ms=na vs_numpy=na agree=na\n");
    }
    fflush(stdout);
}

void ob_run_row(const ob_row_t *row, const ob_config_t *cfg)
{
    int64_t shape_a[2], shape_b[1];
    row_shapes(row, cfg->n, shape_a, shape_b);
    weft_tensor_t *in[2] = {uniform_input(2, shape_a, 42),
                            row->b_indices ? index_input(shape_b[0], shape_a[0], 43)
                                           : uniform_input(1, shape_b, 43)};
    weft_function_t *f = compile_row(row, cfg->n, cfg->pool);
    weft_tensor_t *res = NULL;
    row_times_t t = time_row(f, row, in, cfg->reps, &res);
    double np_ms = 0.0;
    bool agree = false;
    bool have_np = cfg->numpy && ob_numpy_time(cfg->numpy, row, in, res, cfg->reps, &np_ms, &agree);
    print_line(row, shape_a[0] * shape_a[1], cfg, t, have_np, np_ms, agree);
    ob_check(weft_function_destroy(f), "destroy", NULL);
    weft_tensor_release(res);
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
}

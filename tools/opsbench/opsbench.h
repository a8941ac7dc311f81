/* weft-ops-bench's pieces shared between its files: timing and error exits
 * (opsbench_util.c), the table of op rows (ops_table.c), running a row
 * (ops_run.c) and the NumPy child process that times the same expression
 * (numpy_child.c, opsbench_numpy.py). The line format is in opsbench.c. */
#ifndef OPSBENCH_H
#define OPSBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/weft.h"

/* ---- timing and exits (opsbench_util.c) ---- */
double ob_now_s(void);
/* Median of v[0..n) (sorts v). */
double ob_median(double *v, int n);
/* Prints what failed (with g's last error when g is given) and exits 1. */
void ob_die(const char *what, weft_status_t st, weft_graph_t *g);
void ob_check(weft_status_t st, const char *what, weft_graph_t *g);
/* The one check of a graph's construction: its result, or the kept error. */
void ob_check_built(const weft_var_t *v, const char *what, weft_graph_t *g);
/* malloc that exits on failure. */
void *ob_xmalloc(size_t bytes);

/* ---- the op table (ops_table.c) ---- */
/* A row's input a has shape (n / OB_COLS, OB_COLS), or (rows, cols) when the
 * row fixes them (the shapes: softmax on (4096, 1024), solve on
 * 512 x 512); a row with two inputs also gets b of shape (a's columns,),
 * broadcast along a's first axis, or (b_indices) int64 row indices of a. */
#define OB_COLS 1000

typedef weft_var_t *(*ob_build_fn)(weft_graph_t *g, weft_var_t *const *in);

typedef struct ob_row {
    const char *name;     /* the op= field and the command-line word */
    size_t n_in;          /* 1: a; 2: a and b */
    ob_build_fn build;    /* weft constructors on the inputs; NULL with the error on g */
    const char *numpy;    /* Python expression over np, a, b and out (see opsbench_numpy.py) */
    double bytes_per_elem; /* bytes the op must move (reads + writes) per element of a */
    bool memory_bound;    /* judged against 0.8x memcpy bandwidth */
    int64_t rows, cols;   /* a's fixed shape; 0: (n / OB_COLS, OB_COLS) */
    bool b_indices;       /* b: int64 indices (rows,) uniform in [0, rows) instead */
} ob_row_t;

/* The rows, in the order of a run without arguments. */
const ob_row_t *ob_rows(size_t *n);
/* The row named name, or NULL. */
const ob_row_t *ob_row_find(const char *name);

/* ---- the NumPy child (numpy_child.c) ---- */
typedef struct ob_numpy ob_numpy_t;

/* Starts the first python3 that imports numpy (python3 on PATH, else
 * /usr/bin/python3) on the timing script; NULL (with a note on stderr) when
 * there is none or the script is missing. Free with ob_numpy_stop. */
ob_numpy_t *ob_numpy_start(void);
/* Times row->numpy on the inputs in[0..row->n_in) with reps repetitions
 * (median, ms) and compares its result with ref (weft's result). false when
 * the child failed (its message went to stderr); the child is then stopped
 * and later calls return false at once. */
bool ob_numpy_time(ob_numpy_t *py, const ob_row_t *row, weft_tensor_t *const *in,
                   weft_tensor_t *ref, int reps, double *ms, bool *agree);
void ob_numpy_stop(ob_numpy_t *py);

/* ---- running a row (ops_run.c) ---- */
typedef struct ob_config {
    int64_t n;           /* elements of a, a multiple of OB_COLS */
    int reps;            /* timed repetitions (medians) */
    weft_pool_t *pool;   /* the compiled functions' pool (its size is threads=) */
    ob_numpy_t *numpy;   /* NULL: numpy_ms=na */
} ob_config_t;

/* Measures row (weft's compiled op alternated with memcpy, then NumPy) and
 * prints its line. Exits on weft errors. */
void ob_run_row(const ob_row_t *row, const ob_config_t *cfg);

/* ---- solve against LAPACKE_dgesv (solve_ref.c) ---- */
/* Prints `opsbench op=solve_ref n=512 ms=X ref=lapacke_dgesv ref_ms=Y
 * ratio=X/Y`: weft's compiled Solve (a one-worker pool, caller-supplied
 * output) alternated with LAPACKE_dgesv on copies of the same a and b (it
 * overwrites them), one BLAS thread each; medians of reps. */
void ob_bench_solve_ref(int reps);

#endif /* OPSBENCH_H */

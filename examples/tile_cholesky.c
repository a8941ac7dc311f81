/* A tile Cholesky factorization, A = L L^T, as a graph of per-tile ops.
 *
 * The n x n matrix is cut into T x T tiles of B x B. The right-looking
 * algorithm, written once as a graph (weft/linalg.h ops on tiles):
 *
 *   for k in 0..T-1:
 *     L[k][k] = cholesky(A[k][k])
 *     for i > k:      L[i][k] = A[i][k] L[k][k]^-T         (trsm, right, transposed)
 *     for i > k:      A[i][i] = A[i][i] - L[i][k] L[i][k]^T  (syrk)
 *     for k < j < i:  A[i][j] = A[i][j] - L[i][k] L[j][k]^T  (gemm)
 *
 * Compiled once, the graph is a DAG of tile ops that the pool runs as many at
 * once as their dependencies allow (the trsm's of one column, the updates of
 * one step). Each call factors a new matrix: the tile inputs are views into
 * the caller's n x n array (strides, no copy) and the outputs are written
 * into views of the caller's L. The check: ||A - L L^T||_F / ||A||_F.
 *
 * Build: see examples/CMakeLists.txt. Run: ./example_tile_cholesky */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>

#define T 4                    /* tiles per side */
#define B 48                   /* tile order */
#define N (T * B)              /* matrix order */
#define NT (T * (T + 1) / 2)   /* tiles on and below the diagonal */

/* Stops at the first failing call, naming it. */
#define CHECK(call)                                                                          \
    do {                                                                                     \
        weft_status_t st_ = (call);                                                          \
        if (st_ != WEFT_OK) {                                                                \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,             \
                    weft_status_name(st_));                                                  \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* Position of tile (i, j), i >= j, in the lists of inputs and outputs. */
static int tile(int i, int j)
{
    return i * (i + 1) / 2 + j;
}

/* The graph: one input per lower tile of A, one output per lower tile of L.
 * Constructors nest; an error is kept on g and reported by the compile. */
static void build(weft_graph_t *g, weft_var_t *a[NT], weft_var_t *l[NT])
{
    const weft_type_t *tile_type;
    CHECK(weft_type_tensor(g, WEFT_FLOAT64, 2, (int64_t[]){B, B}, &tile_type));
    weft_var_t *cur[NT]; /* the current value of each tile */
    for (int i = 0; i < T; i++) {
        for (int j = 0; j <= i; j++) {
            char name[16];
            snprintf(name, sizeof name, "A%d%d", i, j);
            cur[tile(i, j)] = a[tile(i, j)] = weft_var_create(g, tile_type, name);
        }
    }
    weft_var_t *minus1 = weft_constant_scalar(g, WEFT_FLOAT64, -1.0);
    weft_var_t *one = weft_constant_scalar(g, WEFT_FLOAT64, 1.0);
    for (int k = 0; k < T; k++) {
        weft_var_t *lkk = l[tile(k, k)] = weft_cholesky(g, cur[tile(k, k)]);
        for (int i = k + 1; i < T; i++) /* X L[k][k]^T = A[i][k] */
            l[tile(i, k)] = weft_trsm(g, lkk, cur[tile(i, k)], WEFT_TRSM_RIGHT | WEFT_TRSM_TRANS);
        for (int i = k + 1; i < T; i++) {
            weft_var_t **aii = &cur[tile(i, i)], *lik = l[tile(i, k)];
            *aii = weft_add(g, *aii, weft_syrk(g, lik, false, -1.0));
            for (int j = k + 1; j < i; j++) {
                weft_var_t **aij = &cur[tile(i, j)], *ljk_t = weft_transpose(g, l[tile(j, k)]);
                *aij = weft_gemm(g, *aij, minus1, lik, ljk_t, one, false);
            }
        }
    }
}

/* A symmetric positive definite matrix: symmetric entries in [-1, 1), and n
 * on the diagonal (diagonally dominant). The seed picks the entries. */
static void make_spd(double *a, unsigned seed)
{
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < i; j++) {
            seed = seed * 1664525u + 1013904223u;
            a[i * N + j] = a[j * N + i] = (double)(seed >> 8) / (double)(1u << 23) - 1.0;
        }
        a[i * N + i] = N;
    }
}

/* ||A - L L^T||_F / ||A||_F, L lower triangular. */
static double residual(const double *a, const double *l)
{
    double diff = 0, norm = 0;
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int p = 0; p <= (i < j ? i : j); p++) s += l[i * N + p] * l[j * N + p];
            diff += (a[i * N + j] - s) * (a[i * N + j] - s);
            norm += a[i * N + j] * a[i * N + j];
        }
    }
    return sqrt(diff / norm);
}

/* One tensor per lower tile, each a view into the row-major n x n `m`
 * (strides {N, 1} in elements: no copy). */
static void tile_views(double *m, weft_tensor_t *views[NT])
{
    for (int i = 0; i < T; i++)
        for (int j = 0; j <= i; j++)
            CHECK(weft_tensor_from_data(WEFT_FLOAT64, 2, (int64_t[]){B, B}, (int64_t[]){N, 1},
                                        m + (size_t)i * B * N + (size_t)j * B,
                                        &views[tile(i, j)]));
}

int main(void)
{
    weft_graph_t *g;
    CHECK(weft_graph_create(NULL, &g));
    weft_var_t *a[NT], *l[NT];
    build(g, a, l);

    weft_pool_t *pool; /* two workers; outputs are the same bits on any number */
    CHECK(weft_pool_create(2, NULL, &pool));
    weft_function_options_t opts = WEFT_FUNCTION_OPTIONS_INIT;
    opts.pool = pool;
    opts.name = "tile_cholesky";
    opts.node_threads = 1; /* tile ops are many and small: no splitting inside them */
    weft_function_t *f; /* the one check: a construction error is reported here */
    if (weft_function_compile(NT, a, NT, l, 0, NULL, &opts, &f) != WEFT_OK) {
        fprintf(stderr, "compile: %s\n", weft_function_last_error(NULL));
        return 1;
    }
    weft_graph_destroy(g); /* f keeps its own copy of the graph */

    static double A[N * N], L[N * N]; /* L's upper tiles stay zero */
    weft_tensor_t *a_tiles[NT], *l_tiles[NT];
    tile_views(A, a_tiles);
    tile_views(L, l_tiles);
    printf("tile Cholesky: %dx%d matrix, %dx%d tiles of %dx%d\n", N, N, T, T, B, B);
    for (unsigned seed = 1; seed <= 3; seed++) { /* compiled once, called per matrix */
        make_spd(A, seed);
        CHECK(weft_function_call(f, NT, a_tiles, NT, l_tiles));
        double r = residual(A, L), logdet = 0;
        for (int i = 0; i < N; i++) logdet += 2 * log(L[i * N + i]);
        printf("matrix %u: log det A = %.6f, residual below 1e-14: %s\n", seed, logdet,
               r < 1e-14 ? "yes" : "NO");
    }

    for (int k = 0; k < NT; k++) {
        weft_tensor_release(a_tiles[k]);
        weft_tensor_release(l_tiles[k]);
    }
    CHECK(weft_function_destroy(f));
    CHECK(weft_pool_destroy(pool));
    return 0;
}

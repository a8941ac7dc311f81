/* Values whose shape is not static crossing ranks (docs/distributed.md
 * §3.4), under mpirun -np 2, 3 and 4: a boolean-mask take computed on rank
 * 0 and read on the last rank, and an input of unknown length owned by rank
 * 0 read on the last rank; lengths change from call to call (zero
 * included). Results are compared bit for bit with the single-process
 * function. A failed call and a length the type forbids are covered too. A
 * watchdog (alarm) ends a rank that hangs. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mpi_test_util.h"

#include "weft/elemwise.h"
#include "weft/function.h"
#include "weft/index_ops.h"
#include "weft/mpi.h"
#include "weft/reduce.h"

#define LEN 8
#define COLS 3
#define N_OUT 3

static int rank, nranks;

typedef struct dgraph {
    weft_graph_t *g;
    weft_var_t *in[2];     /* x [LEN], u [?, COLS] */
    weft_var_t *out[N_OUT]; /* z = 2 x[x > 0], sum(z), u + 1 */
} dgraph_t;

static weft_var_t *input(weft_graph_t *g, const char *name, int nd, const int64_t *shape)
{
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, nd, shape, &t), WEFT_OK);
    return weft_var_create(g, t, name);
}

static void build(dgraph_t *d)
{
    assert_int_equal(weft_graph_create(NULL, &d->g), WEFT_OK);
    weft_graph_t *g = d->g;
    int64_t xs[1] = {LEN}, us[2] = {WEFT_DIM_UNKNOWN, COLS};
    weft_var_t *x = d->in[0] = input(g, "x", 1, xs);
    /* y = picky(x[x > 0]) on rank 0, z = 2 y on the last rank */
    weft_var_t *u = d->in[1] = input(g, "u", 2, us);
    weft_var_t *zero = weft_constant_scalar(g, WEFT_FLOAT64, 0.0);
    weft_var_t *y = mpi_test_picky(g, weft_mask_take(g, x, weft_gt(g, x, zero)));
    weft_var_t *z = weft_mul(g, y, weft_constant_scalar(g, WEFT_FLOAT64, 2.0));
    weft_var_t *w = weft_add(g, u, weft_constant_scalar(g, WEFT_FLOAT64, 1.0));
    assert_non_null(z);
    assert_non_null(w);
    weft_var_set_name(y, "y");
    weft_var_set_name(z, "z");
    weft_var_set_name(w, "w");
    d->out[0] = z;
    d->out[1] = weft_sum(g, z, 0, NULL, false);
    d->out[2] = w;
}

/* Inputs on rank 0, z and w on the last rank, the rest follows: y (its
 * length the count of positive x) and u cross from rank 0. */
static int owner(void *user, const weft_var_t *v)
{
    (void)user;
    const char *n = weft_var_name(v);
    if (n && (strcmp(n, "z") == 0 || strcmp(n, "w") == 0)) return nranks - 1;
    return weft_var_owner(v) ? WEFT_MPI_FOLLOW : 0;
}

/* Call c's inputs: x with c positive entries (c = 0 .. LEN), u with c rows. */
static void inputs(int c, weft_tensor_t **x, weft_tensor_t **u)
{
    int64_t xs[1] = {LEN}, us[2] = {c, COLS};
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, xs, x), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, us, u), WEFT_OK);
    double *xd = weft_tensor_data(*x), *ud = weft_tensor_data(*u);
    for (int i = 0; i < LEN; i++) xd[i] = (i * 5 % LEN < c ? 1.0 : -1.0) * (0.25 + i);
    for (int i = 0; i < c * COLS; i++) ud[i] = 0.5 * i - c;
}

static void assert_same(const weft_tensor_t *got, const weft_tensor_t *want)
{
    assert_non_null(got);
    assert_int_equal(weft_tensor_ndim(got), weft_tensor_ndim(want));
    for (int i = 0; i < weft_tensor_ndim(want); i++)
        assert_int_equal(weft_tensor_dim(got, i), weft_tensor_dim(want, i));
    size_t n = weft_tensor_size(want) * sizeof(double);
    if (n) assert_memory_equal(weft_tensor_data(got), weft_tensor_data(want), n);
}

static weft_mpi_function_t *compile(dgraph_t *d, bool to_root, weft_function_options_t *fo)
{
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    mo.owner = owner;
    mo.function = fo;
    mo.outputs_to_root = to_root;
    mo.timeout_s = 30;
    weft_mpi_function_t *f;
    weft_status_t st = weft_mpi_function_compile(MPI_COMM_WORLD, 2, d->in, N_OUT, d->out, &mo, &f);
    if (st != WEFT_OK) fail_msg("compile: %s", weft_mpi_last_error());
    return f;
}

/* Lengths 3, 8, 0, 5, 1, 8 on successive calls, owners' outputs (and with
 * outputs_to_root every output on rank 0), against the single process. */
static void lengths_change(void **state)
{
    (void)state;
    dgraph_t d;
    build(&d);
    weft_function_options_t fo = WEFT_FUNCTION_OPTIONS_INIT;
    fo.threads = 1;
    weft_function_t *ref;
    assert_int_equal(weft_function_compile(2, d.in, N_OUT, d.out, 0, NULL, &fo, &ref), WEFT_OK);
    static const int counts[] = {3, 8, 0, 5, 1, 8};
    for (int to_root = 0; to_root < 2; to_root++) {
        weft_mpi_function_t *f = compile(&d, to_root, &fo);
        weft_mpi_stats_t s;
        memset(&s, 0, sizeof s);
        s.size = sizeof s;
        assert_int_equal(weft_mpi_function_stats(f, &s), WEFT_OK);
        /* y and u go from rank 0 to the last rank; z and w back with to_root */
        assert_int_equal(s.messages_in, rank == nranks - 1 ? 2 : rank == 0 && to_root ? 3 : 0);
        for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
            weft_tensor_t *x, *u, *want[N_OUT] = {NULL}, *got[N_OUT] = {NULL};
            inputs(counts[k], &x, &u);
            weft_tensor_t *in[2] = {x, u}, *given[2] = {rank == 0 ? x : NULL, rank == 0 ? u : NULL};
            assert_int_equal(weft_function_call(ref, 2, in, N_OUT, want), WEFT_OK);
            weft_status_t st = weft_mpi_function_call(f, 2, given, N_OUT, got);
            if (st != WEFT_OK) fail_msg("call %zu: %s", k, weft_mpi_last_error());
            assert_int_equal(weft_tensor_dim(want[0], 0), counts[k]);
            for (int o = 0; o < N_OUT; o++) {
                if (weft_mpi_function_gets_output(f, (size_t)o)) assert_same(got[o], want[o]);
                else assert_null(got[o]);
                weft_tensor_release(got[o]);
                weft_tensor_release(want[o]);
            }
            weft_tensor_release(x);
            weft_tensor_release(u);
        }
        assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    }
    weft_function_destroy(ref);
    weft_graph_destroy(d.g);
}

/* y's node fails on rank 0 (an element 2e6), so y is never sent: the last
 * rank's wait for it fails, every rank returns rank 0's message, and the
 * next calls (other lengths) work. */
static void failure_before_send(void **state)
{
    (void)state;
    dgraph_t d;
    build(&d);
    weft_function_options_t fo = WEFT_FUNCTION_OPTIONS_INIT;
    fo.threads = 1;
    weft_mpi_function_t *f = compile(&d, false, &fo);
    for (int call = 0; call < 4; call++) {
        weft_tensor_t *x, *u, *got[N_OUT] = {NULL};
        inputs(call + 2, &x, &u);
        if (call % 2 == 0) ((double *)weft_tensor_data(x))[0] = 2e6;
        weft_tensor_t *given[2] = {rank == 0 ? x : NULL, rank == 0 ? u : NULL};
        weft_status_t st = weft_mpi_function_call(f, 2, given, N_OUT, got);
        if (call % 2 == 0) {
            assert_int_equal(st, WEFT_ERANGE);
            const char *e = weft_mpi_last_error();
            assert_non_null(strstr(e, "rank 0: "));
            assert_non_null(strstr(e, "MpiTestPickyBig"));
            assert_non_null(strstr(e, "picky: 2e+06 at 0"));
            for (int o = 0; o < N_OUT; o++) assert_null(got[o]);
        } else {
            if (st != WEFT_OK) fail_msg("call %d: %s", call, weft_mpi_last_error());
            if (rank == nranks - 1) {
                /* call + 2 positive entries of x, doubled; u + 1 */
                assert_int_equal(weft_tensor_dim(got[0], 0), call + 2);
                assert_int_equal(weft_tensor_dim(got[2], 0), call + 2);
                assert_true(((double *)weft_tensor_data(got[2]))[0] == 1.0 - (call + 2));
            }
        }
        for (int o = 0; o < N_OUT; o++) weft_tensor_release(got[o]);
        weft_tensor_release(x);
        weft_tensor_release(u);
    }
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    weft_graph_destroy(d.g);
}

/* A collective on a value of unknown shape is refused, naming it. */
static void collective_needs_static_shape(void **state)
{
    (void)state;
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t us[1] = {WEFT_DIM_UNKNOWN};
    weft_var_t *u = input(g, "u", 1, us);
    weft_var_t *s = weft_mpi_allreduce(g, u);
    weft_mpi_function_t *f = NULL;
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, 1, &u, 1, &s, NULL, &f),
                     WEFT_ENOTIMPL);
    assert_null(f);
    assert_non_null(strstr(weft_mpi_last_error(), "a collective's input needs a static shape"));
    assert_non_null(strstr(weft_mpi_last_error(), "test_mpi_dynamic.c:"));
    weft_graph_destroy(g);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lengths_change),
        cmocka_unit_test(failure_before_send),
        cmocka_unit_test(collective_needs_static_shape),
    };
    return mpi_test_run(argc, argv, "mpi_dynamic", tests, sizeof tests / sizeof *tests, &rank,
                        &nranks);
}

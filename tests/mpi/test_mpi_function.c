/* Distributed compiled functions (weft/mpi.h), run under mpirun -np 2, 3 and
 * 4: every rank builds the same graphs; results are compared bit for bit
 * with the single-process compiled function (fast_math excluded on both:
 * the partition cuts the graph before rewriting, docs/distributed.md §5). A
 * watchdog (alarm) ends a rank that hangs. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <math.h>
#include <pthread.h>

#include <cmocka.h>

#include "weft/custom_op.h"
#include "weft/elemwise.h"
#include "weft/function.h"
#include "weft/linalg.h"
#include "weft/mpi.h"
#include "weft/shape_ops.h"

#define LEN 6
#define N_IN 4

static int rank, nranks, provided;
static int rep(void *user, const weft_var_t *v);
static int bad(void *u, const weft_var_t *v);
static const char *const no_fast_math[] = {"fast_math"};

static weft_function_options_t fn_opts(void)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    o.n_exclude = 1;
    o.exclude = no_fast_math;
    return o;
}

/* ---- a random graph, the same on every rank (seeded) ---- */

typedef struct rgraph {
    weft_graph_t *g;
    weft_var_t *in[N_IN];
    weft_var_t *out[3];
    int *owner; /* per variable id: a random rank, REPLICATED or FOLLOW */
} rgraph_t;

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static weft_var_t *vec(weft_graph_t *g, const char *name, weft_dtype_t dt)
{
    int64_t shape[1] = {LEN};
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, dt, 1, shape, &t), WEFT_OK);
    return weft_var_create(g, t, name);
}

static void build_random(rgraph_t *r, uint64_t seed, int n_nodes, bool replicated_ok)
{
    assert_int_equal(weft_graph_create(NULL, &r->g), WEFT_OK);
    weft_var_t *pool[256];
    int n = 0;
    char name[8];
    for (int k = 0; k < N_IN; k++) {
        snprintf(name, sizeof name, "x%d", k);
        pool[n++] = r->in[k] = vec(r->g, name, WEFT_FLOAT64);
    }
    uint64_t s = seed * 2654435761u + 1;
    for (int k = 0; k < n_nodes; k++) {
        weft_var_t *a = pool[rng_next(&s) % (uint64_t)n], *b = pool[rng_next(&s) % (uint64_t)n];
        weft_var_t *y;
        switch (rng_next(&s) % 5) {
        case 0: y = weft_add(r->g, a, b); break;
        case 1: y = weft_mul(r->g, a, b); break;
        case 2: y = weft_sub(r->g, a, b); break;
        case 3: y = weft_tanh(r->g, a); break;
        default: y = weft_mul(r->g, weft_constant_scalar(r->g, WEFT_FLOAT64, 0.5), a); break;
        }
        assert_non_null(y);
        pool[n++] = y;
    }
    r->out[0] = pool[n - 1];
    r->out[1] = pool[n - 2];
    r->out[2] = pool[N_IN + (n - N_IN) / 2];
    size_t nv = weft_graph_n_vars(r->g);
    r->owner = malloc(nv * sizeof *r->owner);
    for (size_t v = 0; v < nv; v++) {
        uint64_t x = rng_next(&s) % 10;
        r->owner[v] = x < 7 ? (int)(rng_next(&s) % (uint64_t)nranks)
                    : x < 9 || !replicated_ok ? WEFT_MPI_FOLLOW : WEFT_MPI_REPLICATED;
    }
}

static int owner_of(void *user, const weft_var_t *v)
{
    return ((rgraph_t *)user)->owner[weft_var_id(v)];
}

static void fill_inputs(weft_tensor_t **x, uint64_t seed)
{
    int64_t shape[1] = {LEN};
    for (int k = 0; k < N_IN; k++) {
        assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, shape, &x[k]), WEFT_OK);
        double *d = weft_tensor_data(x[k]);
        for (int i = 0; i < LEN; i++) d[i] = 0.1 * (double)((seed * 7 + (uint64_t)(k * LEN + i) * 13) % 17) - 0.8;
    }
}

static void release_all(weft_tensor_t **t, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        weft_tensor_release(t[k]);
        t[k] = NULL;
    }
}

/* Distributed vs single-process, three calls with different inputs. */
static void check_against_local(rgraph_t *r, const weft_mpi_options_t *mo)
{
    weft_function_options_t fo = fn_opts();
    weft_function_t *ref;
    assert_int_equal(weft_function_compile(N_IN, r->in, 3, r->out, 0, NULL, &fo, &ref), WEFT_OK);
    weft_mpi_function_t *f;
    weft_status_t st = weft_mpi_function_compile(MPI_COMM_WORLD, N_IN, r->in, 3, r->out, mo, &f);
    if (st != WEFT_OK) fail_msg("compile: %s", weft_mpi_last_error());
    for (uint64_t call = 0; call < 3; call++) {
        weft_tensor_t *x[N_IN], *want[3] = {NULL, NULL, NULL}, *got[3] = {NULL, NULL, NULL};
        fill_inputs(x, call + 1);
        assert_int_equal(weft_function_call(ref, N_IN, x, 3, want), WEFT_OK);
        weft_tensor_t *given[N_IN];
        for (size_t k = 0; k < N_IN; k++) given[k] = weft_mpi_function_gives_input(f, k) ? x[k] : NULL;
        st = weft_mpi_function_call(f, N_IN, given, 3, got);
        if (st != WEFT_OK) fail_msg("call: %s", weft_mpi_last_error());
        for (size_t k = 0; k < 3; k++) {
            if (!weft_mpi_function_gets_output(f, k)) {
                assert_null(got[k]);
                continue;
            }
            assert_non_null(got[k]);
            assert_memory_equal(weft_tensor_data(got[k]), weft_tensor_data(want[k]), LEN * sizeof(double));
        }
        release_all(x, N_IN);
        release_all(want, 3);
        release_all(got, 3);
    }
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    weft_function_destroy(ref);
}

/* Options placing r by its random owners, compiling locally with fo. */
static weft_mpi_options_t owner_options(rgraph_t *r, weft_function_options_t *fo)
{
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    mo.owner = owner_of;
    mo.owner_user = r;
    mo.function = fo;
    return mo;
}

static void free_random(rgraph_t *r)
{
    free(r->owner);
    weft_graph_destroy(r->g);
}

static void random_owner_placements(void **state)
{
    (void)state;
    uint64_t s0 = getenv("SEED") ? strtoull(getenv("SEED"), NULL, 10) : 1;
    uint64_t s1 = getenv("SEED") ? s0 : 12;
    for (uint64_t seed = s0; seed <= s1; seed++) {
        rgraph_t r;
        build_random(&r, seed, 40, true);
        weft_function_options_t fo = fn_opts();
        weft_mpi_options_t mo = owner_options(&r, &fo);
        mo.timeout_s = getenv("SEED") ? 3 : 30;
        mo.outputs_to_root = seed % 3 == 0;
        mo.inputs_on_root = seed % 4 == 0;
        check_against_local(&r, &mo);
        free_random(&r);
    }
}

/* Every output gathered on rank 0, every input given there. */
/* r's random graph compiled with inputs from and outputs to rank 0. */
static weft_mpi_function_t *root_io_compile(rgraph_t *r, uint64_t seed, weft_function_options_t *fo,
                                            weft_mpi_options_t *mo)
{
    build_random(r, seed, 30, false);
    *fo = fn_opts();
    *mo = owner_options(r, fo);
    mo->inputs_on_root = true;
    mo->outputs_to_root = true;
    weft_mpi_function_t *f;
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, N_IN, r->in, 3, r->out, mo, &f), WEFT_OK);
    return f;
}

static void root_io(void **state)
{
    (void)state;
    rgraph_t r;
    weft_function_options_t fo;
    weft_mpi_options_t mo;
    weft_mpi_function_t *f = root_io_compile(&r, 99, &fo, &mo);
    for (size_t k = 0; k < N_IN; k++) assert_int_equal(weft_mpi_function_gives_input(f, k), rank == 0);
    for (size_t k = 0; k < 3 && rank == 0; k++) assert_true(weft_mpi_function_gets_output(f, k));
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    check_against_local(&r, &mo);
    free_random(&r);
}

/* A receive's output is its message buffer (no copy, docs/distributed.md
 * §3.1). Gathered on rank 0, such an output leaves the call: the caller
 * keeps it, so the next call must receive into a fresh buffer. Rank 0
 * keeps the first call's new output tensors and checks them after a second
 * call with other inputs. */
static void received_outputs_survive_next_call(void **state)
{
    (void)state;
    rgraph_t r;
    weft_function_options_t fo;
    weft_mpi_options_t mo;
    weft_mpi_function_t *f = root_io_compile(&r, 41, &fo, &mo);
    weft_tensor_t *x[N_IN], *first[3] = {NULL, NULL, NULL}, *second[3] = {NULL, NULL, NULL};
    double keep[3][LEN];
    fill_inputs(x, 1);
    assert_int_equal(weft_mpi_function_call(f, N_IN, rank == 0 ? x : (weft_tensor_t *[N_IN]){0}, 3,
                                            first), WEFT_OK);
    for (int k = 0; k < 3 && rank == 0; k++)
        for (int i = 0; i < LEN; i++) keep[k][i] = weft_tensor_flat_get(first[k], i);
    release_all(x, N_IN);
    fill_inputs(x, 2);
    assert_int_equal(weft_mpi_function_call(f, N_IN, rank == 0 ? x : (weft_tensor_t *[N_IN]){0}, 3,
                                            second), WEFT_OK);
    int changed = 0;
    for (int k = 0; k < 3 && rank == 0; k++)
        for (int i = 0; i < LEN; i++) {
            assert_true(weft_tensor_flat_get(first[k], i) == keep[k][i]);
            changed += weft_tensor_flat_get(second[k], i) != keep[k][i];
        }
    if (rank == 0) assert_true(changed > 0); /* the inputs did change the results */
    release_all(x, N_IN);
    release_all(first, 3);
    release_all(second, 3);
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    free_random(&r);
}

static void metis_placement(void **state)
{
    (void)state;
    rgraph_t r;
    build_random(&r, 7, 120, false);
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    weft_function_options_t fo = fn_opts();
    mo.placement = WEFT_MPI_PLACE_METIS;
    mo.metis_seed = 5;
    mo.function = &fo;
    check_against_local(&r, &mo);
    /* the ranks agree on the partition, and every rank gets work */
    weft_mpi_function_t *f;
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, N_IN, r.in, 3, r.out, &mo, &f), WEFT_OK);
    weft_mpi_stats_t s;
    memset(&s, 0, sizeof s);
    s.size = sizeof s;
    assert_int_equal(weft_mpi_function_stats(f, &s), WEFT_OK);
    assert_true(s.nodes > 0);
    /* messages agree: every one sent is received somewhere */
    unsigned io[2] = {s.messages_out, s.messages_in}, sum[2] = {0, 0}, least = 0;
    MPI_Allreduce(io, sum, 2, MPI_UNSIGNED, MPI_SUM, MPI_COMM_WORLD);
    assert_int_equal(sum[0], sum[1]);
    assert_true(sum[0] > 0);
    MPI_Allreduce(&s.nodes, &least, 1, MPI_UNSIGNED, MPI_MIN, MPI_COMM_WORLD);
    assert_true(least > 0);
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    free_random(&r);
}

/* allreduce, broadcast and gather: integer-valued doubles, so any summation
 * order gives the same bits. */
static void collectives(void **state)
{
    (void)state;
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *x = vec(g, "x", WEFT_FLOAT64);
    weft_var_t *sum = weft_mpi_allreduce(g, weft_mul(g, x, weft_constant_scalar(g, WEFT_FLOAT64, 2.0)));
    weft_var_t *bc = weft_mpi_broadcast(g, weft_add(g, x, x), nranks - 1);
    weft_var_t *ga = weft_mpi_gather(g, x, 0, nranks);
    weft_var_t *outs[3] = {weft_add(g, sum, sum), bc, ga};
    assert_non_null(outs[0]);
    assert_non_null(outs[2]);
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    weft_function_options_t fo = fn_opts();
    mo.function = &fo;
    mo.owner = rep; /* x replicated: every rank gives its own */
    weft_mpi_function_t *f;
    weft_status_t st = weft_mpi_function_compile(MPI_COMM_WORLD, 1, &x, 3, outs, &mo, &f);
    if (st != WEFT_OK) fail_msg("compile: %s", weft_mpi_last_error());
    for (int call = 0; call < 3; call++) {
        int64_t shape[1] = {LEN};
        weft_tensor_t *xt, *got[3] = {NULL, NULL, NULL};
        assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, shape, &xt), WEFT_OK);
        for (int i = 0; i < LEN; i++) ((double *)weft_tensor_data(xt))[i] = rank + 1 + i + call;
        st = weft_mpi_function_call(f, 1, &xt, 3, got);
        if (st != WEFT_OK) fail_msg("call: %s", weft_mpi_last_error());
        for (int i = 0; i < LEN; i++) {
            double want = 0;
            for (int r = 0; r < nranks; r++) want += 2.0 * (r + 1 + i + call);
            assert_true(((double *)weft_tensor_data(got[0]))[i] == 2 * want);
            assert_true(((double *)weft_tensor_data(got[1]))[i] == 2.0 * (nranks + i + call));
        }
        if (rank == 0) {
            assert_int_equal(weft_tensor_dim(got[2], 0), nranks);
            for (int r = 0; r < nranks; r++)
                for (int i = 0; i < LEN; i++)
                    assert_true(((double *)weft_tensor_data(got[2]))[r * LEN + i] == r + 1 + i + call);
        } else {
            assert_null(got[2]);
        }
        weft_tensor_release(xt);
        release_all(got, 3);
    }
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    weft_graph_destroy(g);
}

static int rep(void *user, const weft_var_t *v)
{
    (void)user;
    return weft_var_owner(v) ? WEFT_MPI_FOLLOW : WEFT_MPI_REPLICATED;
}

/* ---- failure propagation ---- */

static weft_status_t picky_kernel(weft_kernel_ctx_t *ctx, size_t n_in, weft_tensor_t *const *in,
                                  size_t n_out, weft_tensor_t *const *out, void *user)
{
    (void)n_in, (void)n_out, (void)user;
    const double *x = weft_tensor_data(in[0]);
    if (x[0] < 0) return weft_kernel_error(ctx, WEFT_ERANGE, "picky: negative %g", x[0]);
    memcpy(weft_tensor_data(out[0]), x, LEN * sizeof(double));
    return WEFT_OK;
}

/* The variable named `user` (a string) on the last rank, the rest on rank 0. */
static int last_if_named(void *user, const weft_var_t *v)
{
    const char *n = weft_var_name(v);
    return n && strcmp(n, (const char *)user) == 0 ? nranks - 1 : 0;
}

static void failure_propagates(void **state)
{
    (void)state;
    static const weft_op_class_t *cls;
    if (!cls) {
        weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
        d.name = "MpiTestPicky";
        d.kernel = picky_kernel;
        assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_OK);
    }
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *x = vec(g, "x", WEFT_FLOAT64);
    weft_var_t *p = weft_custom_call(g, cls, 1, &x);
    weft_var_set_name(p, "picky");
    weft_var_t *y = weft_tanh(g, weft_add(g, p, x)); /* back on rank 0 */
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    weft_function_options_t fo = fn_opts();
    mo.function = &fo;
    mo.owner = last_if_named; /* the picky node on the last rank */
    mo.owner_user = (void *)"picky";
    mo.timeout_s = 20;
    weft_mpi_function_t *f;
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, 1, &x, 1, &y, &mo, &f), WEFT_OK);
    for (int call = 0; call < 4; call++) {
        int64_t shape[1] = {LEN};
        weft_tensor_t *xt = NULL, *got = NULL;
        if (rank == 0) {
            assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, shape, call % 2 ? 1.0 : -1.0, &xt),
                             WEFT_OK);
        }
        weft_status_t st = weft_mpi_function_call(f, 1, &xt, 1, &got);
        if (call % 2 == 0) {
            assert_int_equal(st, WEFT_ERANGE);
            char want[64];
            snprintf(want, sizeof want, "rank %d: node ", nranks - 1);
            const char *msg = weft_mpi_last_error();
            assert_non_null(strstr(msg, want));
            assert_non_null(strstr(msg, "MpiTestPicky"));
            assert_non_null(strstr(msg, "picky: negative -1"));
            assert_null(got);
        } else {
            if (st != WEFT_OK) fail_msg("call after failure: %s", weft_mpi_last_error());
            if (rank == 0) {
                assert_non_null(got);
                assert_true(((double *)weft_tensor_data(got))[0] == tanh(2.0));
            }
        }
        weft_tensor_release(xt);
        weft_tensor_release(got);
    }
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    weft_graph_destroy(g);
}

/* ---- argument errors ---- */

static void bad_arguments(void **state)
{
    (void)state;
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *x = vec(g, "x", WEFT_FLOAT64), *y = weft_tanh(g, x);
    weft_mpi_function_t *f = (weft_mpi_function_t *)&f;
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, 1, &x, 1, &y, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, 1, &x, 0, &y, NULL, &f), WEFT_EINVAL);
    assert_null(f);
    /* an owner out of range */
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    mo.owner = bad;
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, 1, &x, 1, &y, &mo, &f), WEFT_EINVAL);
    assert_non_null(strstr(weft_mpi_last_error(), "is not a rank of"));
    /* allreduce of a value living on one rank */
    weft_var_t *s = weft_mpi_allreduce(g, y);
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, 1, &x, 1, &s, NULL, &f), WEFT_EINVAL);
    assert_non_null(strstr(weft_mpi_last_error(), "not on every rank"));
    /* wrong call counts */
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, 1, &x, 1, &y, NULL, &f), WEFT_OK);
    weft_tensor_t *none[1] = {NULL};
    assert_int_equal(weft_mpi_function_call(f, 2, none, 1, none), WEFT_EINVAL);
    if (rank == 0) {
        assert_int_equal(weft_mpi_function_call(f, 1, none, 1, none), WEFT_EINVAL);
        assert_non_null(strstr(weft_mpi_last_error(), "owns input 0 but got NULL"));
    }
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    /* a dtype allreduce cannot sum */
    weft_var_t *b = vec(g, "b", WEFT_BOOL);
    assert_null(weft_mpi_allreduce(g, b));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    weft_graph_destroy(g);
}

static int bad(void *u, const weft_var_t *v)
{
    (void)u, (void)v;
    return 1000;
}

/* ---- a stuck peer: every rank returns within its timeouts ---- */

static void stuck_peer_times_out(void **state)
{
    (void)state;
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *x = vec(g, "x", WEFT_FLOAT64);
    weft_var_t *p = weft_tanh(g, x);
    weft_var_set_name(p, "picky"); /* last_if_named: on the last rank */
    weft_var_t *y = weft_add(g, p, x);
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    weft_function_options_t fo = fn_opts();
    mo.function = &fo;
    mo.owner = last_if_named; /* the picky node on the last rank */
    mo.owner_user = (void *)"picky";
    mo.timeout_s = 0.5;
    weft_mpi_function_t *f;
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, 1, &x, 1, &y, &mo, &f), WEFT_OK);
    int64_t shape[1] = {LEN};
    weft_tensor_t *xt = NULL, *got = NULL;
    if (rank == 0) assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, shape, 1.0, &xt), WEFT_OK);
    if (rank == nranks - 1) /* stuck for 3 timeouts */
        nanosleep(&(struct timespec){1, 500000000}, NULL);
    double t0 = MPI_Wtime();
    weft_status_t st = weft_mpi_function_call(f, 1, &xt, 1, &got);
    double t = MPI_Wtime() - t0;
    assert_int_equal(st, WEFT_ESYSTEM);
    assert_non_null(strstr(weft_mpi_last_error(), "timed out"));
    assert_null(got);
    assert_true(t < 5.0);
    /* the communicators' state is unknown now: refused */
    assert_int_equal(weft_mpi_function_call(f, 1, &xt, 1, &got), WEFT_ESTATE);
    assert_non_null(strstr(weft_mpi_last_error(), "timed out in an earlier call"));
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    weft_tensor_release(xt);
    weft_graph_destroy(g);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- a receive does not hold its worker (docs/distributed.md §3.1) ---- */

static uint64_t stamp_ns[2]; /* rank 0: when "local" and "after" ran */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static weft_status_t stamp_kernel(weft_kernel_ctx_t *ctx, size_t n_in, weft_tensor_t *const *in,
                                  size_t n_out, weft_tensor_t *const *out, void *user)
{
    (void)ctx, (void)n_in, (void)n_out;
    *(uint64_t *)user = mono_ns();
    memcpy(weft_tensor_data(out[0]), weft_tensor_data(in[0]), LEN * sizeof(double));
    return WEFT_OK;
}

static const weft_op_class_t *stamp_class(const char *name, uint64_t *slot)
{
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    d.name = name;
    d.n_inputs = 1;
    d.kernel = stamp_kernel;
    d.user = slot;
    const weft_op_class_t *cls = NULL;
    assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_OK);
    return cls;
}

static int late_owner(void *user, const weft_var_t *v)
{
    (void)user;
    const char *n = weft_var_name(v);
    return n && (strcmp(n, "x") == 0 || strcmp(n, "s") == 0) ? 1 : 0;
}

/* Rank 0, one worker, reads s from rank 1, which calls one second late;
 * "local" (rank 0's own work, built after s's reader) runs before rank 1
 * even started its call, "after" (s's reader's reader) only after. */
static void receive_does_not_hold_worker(void **state)
{
    (void)state;
    const weft_op_class_t *local_cls = stamp_class("MpiTestStampLocal", &stamp_ns[0]);
    const weft_op_class_t *after_cls = stamp_class("MpiTestStampAfter", &stamp_ns[1]);
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *x = vec(g, "x", WEFT_FLOAT64), *b = vec(g, "b", WEFT_FLOAT64);
    weft_var_t *s = weft_tanh(g, x);
    weft_var_set_name(s, "s");
    weft_var_t *c = weft_add(g, s, b);                       /* the receive's reader */
    weft_var_t *after = weft_custom_call(g, after_cls, 1, &c);
    weft_var_t *local = weft_custom_call(g, local_cls, 1, &b);
    weft_var_t *outs[2] = {after, local}, *ins[2] = {x, b};
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    weft_function_options_t fo = fn_opts(); /* one worker per rank */
    mo.function = &fo;
    mo.owner = late_owner;
    weft_mpi_function_t *f;
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, 2, ins, 2, outs, &mo, &f), WEFT_OK);
    int64_t shape[1] = {LEN};
    weft_tensor_t *xt[2] = {NULL, NULL}, *got[2] = {NULL, NULL};
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, shape, 0.5, &xt[0]), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, shape, 2.0, &xt[1]), WEFT_OK);
    if (rank == 1) nanosleep(&(struct timespec){1, 0}, NULL);
    uint64_t t_call = mono_ns(); /* rank 1: nothing is sent before this */
    assert_int_equal(weft_mpi_function_call(f, 2, xt, 2, got), WEFT_OK);
    MPI_Bcast(&t_call, 1, MPI_UINT64_T, 1, MPI_COMM_WORLD);
    if (rank == 0) {
        assert_true(stamp_ns[0] < t_call);  /* ran while the receive was pending */
        assert_true(stamp_ns[1] > t_call);  /* the reader waited for the message */
        assert_true(weft_tensor_flat_get(got[0], 0) == tanh(0.5) + 2.0);
        assert_true(weft_tensor_flat_get(got[1], LEN - 1) == 2.0);
    }
    release_all(got, 2);
    release_all(xt, 2);
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    weft_graph_destroy(g);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- the MPI thread level ---- */

typedef struct compile_job {
    weft_var_t *x, *y;
    weft_status_t st;
    char msg[256];
} compile_job_t;

static void *compile_off_main(void *arg)
{
    compile_job_t *j = arg;
    weft_mpi_function_t *f = NULL;
    j->st = weft_mpi_function_compile(MPI_COMM_WORLD, 1, &j->x, 1, &j->y, NULL, &f);
    snprintf(j->msg, sizeof j->msg, "%s", weft_mpi_last_error());
    weft_mpi_function_destroy(f);
    return NULL;
}

/* weft_mpi_init asks for FUNNELED (Debian's Open MPI gives what is asked):
 * enough on the main thread; off it, SERIALIZED is needed and refused. */
static void thread_level(void **state)
{
    (void)state;
    assert_true(provided >= MPI_THREAD_FUNNELED);
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    compile_job_t j = {vec(g, "x", WEFT_FLOAT64), NULL, WEFT_OK, ""};
    j.y = weft_tanh(g, j.x);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, compile_off_main, &j), 0);
    pthread_join(th, NULL);
    if (provided < MPI_THREAD_SERIALIZED) {
        assert_int_equal(j.st, WEFT_ESTATE);
        assert_non_null(strstr(j.msg, "MPI_THREAD_SERIALIZED"));
        assert_non_null(strstr(j.msg, "off MPI's main thread"));
    } else {
        assert_int_equal(j.st, WEFT_OK);
    }
    weft_graph_destroy(g);
}

/* ---- profiling: report and merged trace ---- */

static size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

static char *slurp(FILE *fp)
{
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    rewind(fp);
    char *t = calloc((size_t)n + 1, 1);
    assert_int_equal(fread(t, 1, (size_t)n, fp), (size_t)n);
    return t;
}

static void profiling(void **state)
{
    (void)state;
    rgraph_t r;
    build_random(&r, 5, 30, false);
    weft_function_options_t fo = fn_opts();
    fo.profile = true;
    weft_mpi_options_t mo = owner_options(&r, &fo);
    weft_mpi_function_t *f;
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, N_IN, r.in, 3, r.out, &mo, &f), WEFT_OK);
    weft_tensor_t *x[N_IN], *got[3] = {NULL, NULL, NULL}, *given[N_IN];
    fill_inputs(x, 3);
    for (size_t k = 0; k < N_IN; k++) given[k] = weft_mpi_function_gives_input(f, k) ? x[k] : NULL;
    assert_int_equal(weft_mpi_function_call(f, N_IN, given, 3, got), WEFT_OK);
    weft_mpi_stats_t s;
    memset(&s, 0, sizeof s);
    s.size = sizeof s;
    assert_int_equal(weft_mpi_function_stats(f, &s), WEFT_OK);
    /* the report: a header and a line per message of this rank */
    FILE *tmp = tmpfile();
    assert_int_equal(weft_mpi_function_print_report(f, tmp), WEFT_OK);
    char *rep = slurp(tmp);
    fclose(tmp);
    char head[64];
    snprintf(head, sizeof head, "rank %d of %d: %u nodes", rank, nranks, s.nodes);
    assert_non_null(strstr(rep, head));
    assert_int_equal(count(rep, "\nmsg "), s.messages_in + s.messages_out);
    free(rep);
    /* the trace, on rank 0: one process per rank, a flow per message */
    char path[64];
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "/tmp/weft_mpi_trace_%d.json", pid);
    assert_int_equal(weft_mpi_function_write_trace(f, path), WEFT_OK);
    unsigned sent = 0;
    MPI_Allreduce(&s.messages_out, &sent, 1, MPI_UNSIGNED, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *fp = fopen(path, "r");
        assert_non_null(fp);
        char *t = slurp(fp);
        fclose(fp);
        remove(path);
        for (int q = 0; q < nranks; q++) {
            char name[32];
            snprintf(name, sizeof name, "\"name\":\"rank %d\"", q);
            assert_int_equal(count(t, name), 1);
        }
        assert_int_equal(count(t, "\"ph\":\"s\""), sent);
        assert_int_equal(count(t, "\"ph\":\"f\""), sent);
        assert_true(count(t, "\"ph\":\"X\"") >= 2 * sent); /* nodes too */
        free(t);
    }
    release_all(x, N_IN);
    release_all(got, 3);
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    free_random(&r);
}

/* Views read on another rank: x (4 x 6) and its transpose and a slice of
 * rows 1-2 live on rank 0; the last rank reads x, the transpose and the
 * slice, and gets the transpose itself as an output. The transpose is
 * computed there from x, which it receives anyway: one message for both,
 * and rank 0, where nothing reads the transpose, does not compute it; the
 * slice (smaller than x) goes itself. Results equal the single-process
 * function's bit for bit. */
static int view_owner(void *user, const weft_var_t *v)
{
    (void)user;
    const char *n = weft_var_name(v);
    bool far = n && n[0] == 'y';
    return far ? nranks - 1 : 0;
}

static weft_mpi_stats_t stats_of(const weft_mpi_function_t *f)
{
    weft_mpi_stats_t s;
    memset(&s, 0, sizeof s);
    s.size = sizeof s;
    assert_int_equal(weft_mpi_function_stats(f, &s), WEFT_OK);
    return s;
}

static void views_recomputed_where_read(void **state)
{
    (void)state;
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t shape[2] = {4, 6};
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, shape, &t), WEFT_OK);
    weft_var_t *x = weft_var_create(g, t, "x");
    weft_slice_t rows[1] = {WEFT_SLICE(1, 3, 1)};
    weft_var_t *xt = weft_transpose(g, x), *sl = weft_subtensor(g, x, 1, rows);
    weft_var_t *out[4] = {weft_add(g, x, x), weft_add(g, xt, xt), weft_add(g, sl, sl), xt};
    const char *names[4] = {"y1", "y2", "y3", "yt"};
    for (int k = 0; k < 4; k++) {
        assert_non_null(out[k]);
        weft_var_set_name(out[k], names[k]);
    }
    weft_function_options_t fo = fn_opts();
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    mo.owner = view_owner;
    mo.function = &fo;
    mo.timeout_s = 30;
    weft_mpi_function_t *f;
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, 1, &x, 4, out, &mo, &f), WEFT_OK);
    weft_mpi_stats_t s = stats_of(f);
    bool far = rank == nranks - 1;
    assert_int_equal(s.messages_in, far ? 2 : 0); /* x and the slice */
    assert_int_equal(s.bytes_in, far ? (4 * 6 + 2 * 6) * 8 : 0);
    assert_int_equal(s.messages_out, rank == 0 ? 2 : 0);
    assert_int_equal(s.nodes, far ? 4 : rank == 0 ? 1 : 0); /* the transpose on far only */
    weft_function_t *ref;
    assert_int_equal(weft_function_compile(1, &x, 4, out, 0, NULL, &fo, &ref), WEFT_OK);
    weft_tensor_t *xv, *want[4] = {NULL, NULL, NULL, NULL}, *got[4] = {NULL, NULL, NULL, NULL};
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, shape, &xv), WEFT_OK);
    for (int i = 0; i < 24; i++) ((double *)weft_tensor_data(xv))[i] = 0.5 * i - 3.0;
    assert_int_equal(weft_function_call(ref, 1, &xv, 4, want), WEFT_OK);
    weft_tensor_t *args[1] = {rank == 0 ? xv : NULL};
    weft_status_t st = weft_mpi_function_call(f, 1, args, 4, got);
    if (st != WEFT_OK) fail_msg("call: %s", weft_mpi_last_error());
    for (int k = 0; k < 4; k++) {
        assert_true((got[k] != NULL) == far);
        for (size_t i = 0; far && i < weft_tensor_size(want[k]); i++)
            assert_true(weft_tensor_flat_get(got[k], i) == weft_tensor_flat_get(want[k], i));
    }
    release_all(want, 4);
    release_all(got, 4);
    weft_tensor_release(xv);
    weft_function_destroy(ref);
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    weft_graph_destroy(g);
}

/* A view placed (by the owner function) on a rank that does not read it
 * runs where it is read instead: x on rank 0, w = reshape(x) placed on the
 * last rank, read only by y on rank 0: no message, nothing on the last
 * rank. */
static void view_runs_where_read_not_where_placed(void **state)
{
    (void)state;
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t shape[2] = {4, 6}, flat[1] = {24};
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, shape, &t), WEFT_OK);
    weft_var_t *x = weft_var_create(g, t, "x"), *w = weft_reshape(g, x, 1, flat);
    assert_non_null(w);
    weft_var_set_name(w, "w");
    weft_var_t *y = weft_add(g, w, w);
    weft_function_options_t fo = fn_opts();
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    mo.owner = last_if_named;
    mo.owner_user = (void *)"w";
    mo.function = &fo;
    mo.timeout_s = 30;
    weft_mpi_function_t *f;
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, 1, &x, 1, &y, &mo, &f), WEFT_OK);
    assert_int_equal(weft_mpi_function_node_rank(f, weft_var_owner(w)), nranks - 1);
    weft_mpi_stats_t s = stats_of(f);
    assert_int_equal(s.messages_in + s.messages_out, 0);
    assert_int_equal(s.nodes, rank == 0 ? 2 : 0);
    weft_tensor_t *xv, *got = NULL;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, shape, &xv), WEFT_OK);
    for (int i = 0; i < 24; i++) ((double *)weft_tensor_data(xv))[i] = i;
    weft_tensor_t *args[1] = {rank == 0 ? xv : NULL};
    weft_status_t st = weft_mpi_function_call(f, 1, args, 1, &got);
    if (st != WEFT_OK) fail_msg("call: %s", weft_mpi_last_error());
    assert_true((got != NULL) == (rank == 0));
    for (size_t i = 0; got && i < 24; i++) assert_true(weft_tensor_flat_get(got, i) == 2.0 * (double)i);
    weft_tensor_release(got);
    weft_tensor_release(xv);
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    weft_graph_destroy(g);
}

int main(int argc, char **argv)
{
    alarm(240); /* watchdog: a hung rank dies, and mpirun ends the others */
    if (weft_mpi_init(&argc, &argv, &provided) != WEFT_OK) return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_owner_placements),
        cmocka_unit_test(root_io),
        cmocka_unit_test(received_outputs_survive_next_call),
        cmocka_unit_test(metis_placement),
        cmocka_unit_test(views_recomputed_where_read),
        cmocka_unit_test(view_runs_where_read_not_where_placed),
        cmocka_unit_test(collectives),
        cmocka_unit_test(failure_propagates),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(profiling),
        cmocka_unit_test(receive_does_not_hold_worker),
        cmocka_unit_test(thread_level),
        cmocka_unit_test(stuck_peer_times_out), /* last: leaves requests behind */
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return failed;
}

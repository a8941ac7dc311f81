/* Gradients through the collectives and their JSON codec (weft/mpi.h,
 * docs/distributed.md §5), under mpirun -np 2, 3 and 4. The gradient is the
 * SPMD one: of J = the sum over ranks of each rank's cost. It is checked by
 * central finite differences of J on each rank (every rank perturbs its
 * own x in turn, J summed with MPI_Allreduce), in the style of
 * weft_verify_grad. A watchdog (alarm) ends a rank that hangs. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_test_util.h"

#include "weft/elemwise.h"
#include "weft/function.h"
#include "weft/grad.h"
#include "weft/graph_io.h"
#include "weft/mpi.h"
#include "weft/reduce.h"

#define LEN 4

static int rank, nranks;

static weft_var_t *const_vec(weft_graph_t *g, int nd, const int64_t *shape, double scale)
{
    double d[64];
    size_t n = 1;
    for (int i = 0; i < nd; i++) n *= (size_t)shape[i];
    for (size_t i = 0; i < n; i++) d[i] = scale * (0.5 + 0.25 * (double)i);
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, nd, shape, &t), WEFT_OK);
    return weft_constant_create(g, t, d, n * sizeof *d);
}

static weft_var_t *vsum(weft_graph_t *g, weft_var_t *x)
{
    return weft_sum(g, x, 0, NULL, false);
}

typedef struct cgraph {
    weft_graph_t *g;
    weft_var_t *x, *cost, *grad;
} cgraph_t;

/* Every collective on x (replicated, each rank its own): the cost is
 * sum(w1 a x) + sum(w2 b) + sum(r x) + sum(s x) with a = allreduce(x x),
 * b = broadcast(tanh x, last), r = reduce(w3 x, 0) and s = scatter(w4 *
 * gather(x x, 0), 0): each term couples the ranks differently. */
static void build(cgraph_t *c)
{
    assert_int_equal(weft_graph_create(NULL, &c->g), WEFT_OK);
    weft_graph_t *g = c->g;
    int64_t s1[1] = {LEN}, s2[2] = {nranks, LEN};
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 1, s1, &t), WEFT_OK);
    weft_var_t *x = c->x = weft_var_create(g, t, "x");
    weft_var_t *xx = weft_mul(g, x, x);
    weft_var_t *a = weft_mpi_allreduce(g, xx);
    weft_var_t *b = weft_mpi_broadcast(g, weft_tanh(g, x), nranks - 1);
    weft_var_t *r = weft_mpi_reduce(g, weft_mul(g, const_vec(g, 1, s1, 0.3), x), 0);
    weft_var_t *ga = weft_mul(g, const_vec(g, 2, s2, 0.7), weft_mpi_gather(g, xx, 0, nranks));
    weft_var_t *s = weft_mpi_scatter(g, ga, 0);
    weft_var_t *t1 = vsum(g, weft_mul(g, weft_mul(g, const_vec(g, 1, s1, 1.0), a), x));
    weft_var_t *t2 = vsum(g, weft_mul(g, const_vec(g, 1, s1, -0.4), b));
    weft_var_t *t3 = vsum(g, weft_mul(g, r, x));
    weft_var_t *t4 = vsum(g, weft_mul(g, s, x));
    c->cost = weft_add(g, weft_add(g, t1, t2), weft_add(g, t3, t4));
    c->grad = weft_grad(g, c->cost, x);
    if (!c->grad) fail_msg("grad: %s", weft_graph_error_message(g));
}

static int rep(void *user, const weft_var_t *v)
{
    (void)user;
    return weft_var_owner(v) ? WEFT_MPI_FOLLOW : WEFT_MPI_REPLICATED;
}

static weft_mpi_function_t *compile(weft_var_t *x, weft_var_t *cost, weft_var_t *grad)
{
    weft_function_options_t fo = WEFT_FUNCTION_OPTIONS_INIT;
    fo.threads = 1;
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    mo.owner = rep;
    mo.function = &fo;
    mo.timeout_s = 30;
    weft_var_t *outs[2] = {cost, grad};
    weft_mpi_function_t *f;
    weft_status_t st = weft_mpi_function_compile(MPI_COMM_WORLD, 1, &x, 2, outs, &mo, &f);
    if (st != WEFT_OK) fail_msg("compile: %s", weft_mpi_last_error());
    return f;
}

/* Each rank's x, perturbed by h at element i on rank s; returns this
 * rank's cost and (grad non-NULL) its gradient. */
static double run(weft_mpi_function_t *f, int s, int i, double h, double *grad)
{
    int64_t shape[1] = {LEN};
    weft_tensor_t *x, *out[2] = {NULL, NULL};
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, shape, &x), WEFT_OK);
    double *d = weft_tensor_data(x);
    for (int k = 0; k < LEN; k++) d[k] = sin(1.0 + rank * LEN + k) + (rank == s && k == i ? h : 0);
    weft_status_t st = weft_mpi_function_call(f, 1, &x, 2, out);
    if (st != WEFT_OK) fail_msg("call: %s", weft_mpi_last_error());
    double cost = *(double *)weft_tensor_data(out[0]);
    if (grad) memcpy(grad, weft_tensor_data(out[1]), LEN * sizeof *grad);
    weft_tensor_release(x);
    weft_tensor_release(out[0]);
    weft_tensor_release(out[1]);
    return cost;
}

static double total(double c)
{
    double j = 0;
    MPI_Allreduce(&c, &j, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return j;
}

/* The distributed gradient against central differences of J. */
static void check_grad(weft_mpi_function_t *f)
{
    double grad[LEN];
    run(f, -1, 0, 0, grad);
    const double h = 1e-6;
    for (int s = 0; s < nranks; s++) {
        for (int i = 0; i < LEN; i++) {
            double jp = total(run(f, s, i, h, NULL)), jm = total(run(f, s, i, -h, NULL));
            double num = (jp - jm) / (2 * h);
            if (rank == s && fabs(num - grad[i]) > 1e-6 * fmax(1.0, fabs(num)))
                fail_msg("rank %d: dJ/dx[%d] = %.12g by finite differences, %.12g by weft_grad",
                         rank, i, num, grad[i]);
        }
    }
}

static void grad_through_collectives(void **state)
{
    (void)state;
    cgraph_t c;
    build(&c);
    weft_mpi_function_t *f = compile(c.x, c.cost, c.grad);
    check_grad(f);
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    weft_graph_destroy(c.g);
}

/* Saved and loaded, the graph (its gradient included) prints the same ops
 * and computes the same bits distributed. */
static void json_round_trip(void **state)
{
    (void)state;
    cgraph_t c;
    build(&c);
    weft_var_t *outs[2] = {c.cost, c.grad};
    weft_graph_io_t io = {1, &c.x, NULL, 2, outs, 0, NULL};
    char *text = NULL;
    if (weft_graph_io_save(&io, &text) != WEFT_OK) fail_msg("save: %s", weft_graph_last_error(c.g));
    assert_non_null(strstr(text, "\"MpiCollective\""));
    assert_non_null(strstr(text, "\"scatter\""));
    /* for the schema check (tests/mpi/CMakeLists.txt: mpi_graph_schema) */
    if (rank == 0) {
        char path[64];
        snprintf(path, sizeof path, "mpi_collectives_np%d.json", nranks);
        FILE *fp = fopen(path, "w");
        assert_non_null(fp);
        assert_int_equal(fputs(text, fp) >= 0, 1);
        assert_int_equal(fclose(fp), 0);
    }
    weft_graph_t *g2;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    weft_graph_io_t back;
    if (weft_graph_io_load(g2, text, strlen(text), "mpi.json", &back) != WEFT_OK)
        fail_msg("load: %s", weft_graph_last_error(g2));
    /* saved again, the loaded graph gives the same text: every collective
     * (five forward, five in the gradient) with the same props */
    weft_graph_io_t io2 = {1, back.inputs, NULL, 2, back.outputs, 0, NULL};
    char *text2 = NULL;
    assert_int_equal(weft_graph_io_save(&io2, &text2), WEFT_OK);
    assert_string_equal(text, text2);
    weft_graph_io_free_text(text2);
    size_t seen = 0;
    for (const char *q = text; (q = strstr(q, "\"MpiCollective\"")); q++) seen++;
    assert_int_equal(seen, 10);
    weft_mpi_function_t *f1 = compile(c.x, c.cost, c.grad);
    weft_mpi_function_t *f2 = compile(back.inputs[0], back.outputs[0], back.outputs[1]);
    double g1[LEN], gl[LEN];
    double c1 = run(f1, -1, 0, 0, g1), c2 = run(f2, -1, 0, 0, gl);
    assert_memory_equal(&c1, &c2, sizeof c1);
    assert_memory_equal(g1, gl, sizeof g1);
    assert_int_equal(weft_mpi_function_destroy(f1), WEFT_OK);
    assert_int_equal(weft_mpi_function_destroy(f2), WEFT_OK);
    weft_graph_io_clear(&back);
    /* a bad kind is refused, naming the key path and the value */
    char *k = strstr(text, "\"scatter\"");
    memcpy(k, "\"scattor\"", 9);
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), "mpi.json", &back), WEFT_EPARSE);
    assert_non_null(strstr(weft_graph_last_error(g2), "props: kind 'scattor' is not allreduce"));
    weft_graph_io_free_text(text);
    weft_graph_destroy(g2);
    weft_graph_destroy(c.g);
}

/* Compiled plainly (one rank): reduce is x, scatter of a gather is x; bad
 * arguments are refused with the constructor's site. */
static void single_rank_and_errors(void **state)
{
    (void)state;
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t s1[1] = {LEN};
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 1, s1, &t), WEFT_OK);
    weft_var_t *x = weft_var_create(g, t, "x");
    weft_var_t *outs[2] = {weft_mpi_reduce(g, x, 0),
                           weft_mpi_scatter(g, weft_mpi_gather(g, x, 0, 1), 0)};
    weft_function_t *fn;
    if (weft_function_compile(1, &x, 2, outs, 0, NULL, NULL, &fn) != WEFT_OK)
        fail_msg("compile: %s", weft_function_last_error(NULL));
    weft_tensor_t *xt, *got[2] = {NULL, NULL};
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, s1, &xt), WEFT_OK);
    for (int i = 0; i < LEN; i++) ((double *)weft_tensor_data(xt))[i] = i - 1.5;
    assert_int_equal(weft_function_call(fn, 1, &xt, 2, got), WEFT_OK);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(weft_tensor_ndim(got[k]), 1);
        assert_memory_equal(weft_tensor_data(got[k]), weft_tensor_data(xt), LEN * sizeof(double));
        weft_tensor_release(got[k]);
    }
    weft_tensor_release(xt);
    weft_function_destroy(fn);
    assert_null(weft_mpi_scatter(g, weft_constant_scalar(g, WEFT_FLOAT64, 1.0), 0));
    assert_int_equal(weft_graph_error(g), WEFT_ESHAPE);
    assert_non_null(strstr(weft_graph_error_message(g), "MpiScatter: the input needs a static "
                                                        "leading axis"));
    assert_non_null(strstr(weft_graph_error_message(g), "test_mpi_grad.c:"));
    weft_graph_clear_error(g);
    assert_null(weft_mpi_gather(g, x, 5, 2));
    assert_int_equal(weft_graph_error(g), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_error_message(g), "MpiGather: root 5 outside 2 ranks"));
    assert_non_null(strstr(weft_graph_error_message(g), "test_mpi_grad.c:"));
    weft_graph_destroy(g);
    /* a scatter over a number of ranks other than the communicator's */
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t s2[2] = {nranks + 1, LEN};
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, s2, &t), WEFT_OK);
    x = weft_var_create(g, t, "x");
    weft_var_t *y = weft_mpi_scatter(g, x, 0);
    weft_mpi_function_t *f = NULL;
    assert_int_equal(weft_mpi_function_compile(MPI_COMM_WORLD, 1, &x, 1, &y, NULL, &f),
                     WEFT_EINVAL);
    assert_non_null(strstr(weft_mpi_last_error(), "(MpiCollective{scatter, root=0, ranks="));
    assert_non_null(strstr(weft_mpi_last_error(), "test_mpi_grad.c:"));
    assert_non_null(strstr(weft_mpi_last_error(), "ranks, the communicator has"));
    weft_graph_destroy(g);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grad_through_collectives),
        cmocka_unit_test(json_round_trip),
        cmocka_unit_test(single_rank_and_errors),
    };
    return mpi_test_run(argc, argv, "mpi_grad", tests, sizeof tests / sizeof *tests, &rank,
                        &nranks);
}

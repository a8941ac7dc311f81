/* Updates in a distributed function (weft_mpi_function_compile_updates,
 * docs/distributed.md §2, item 5), under mpirun -np 2, 3 and 4: data-parallel SGD
 * written with updates of a shared weight vector (the gradient allreduced
 * in the graph), a shared step counter computed on one rank and sent to the
 * others, and an input updated on its owner from a value computed on
 * another rank; compared with the single-process function on the whole
 * batch. A failing call changes no state on any rank. A mutable input's
 * update is applied on its owner by the local function, in place (no copy
 * node), also in a function without outputs. A watchdog (alarm) ends a rank
 * that hangs. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mpi_test_util.h"

#include "weft/elemwise.h"
#include "weft/function.h"
#include "weft/grad.h"
#include "weft/linalg.h"
#include "weft/mpi.h"
#include "weft/reduce.h"
#include "weft/shared.h"

#define ROWS 4 /* per rank */
#define DIM 3
#define STEPS 5

static int rank, nranks;

typedef struct sgd {
    weft_graph_t *g;
    weft_var_t *x, *y, *acc; /* inputs */
    weft_var_t *w, *step;    /* shared */
    weft_var_t *loss;        /* output: the summed loss */
    weft_update_t upd[3];
} sgd_t;

static weft_tensor_t *tensor(int nd, const int64_t *shape, const double *v)
{
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, nd, shape, &t), WEFT_OK);
    size_t n = weft_tensor_size(t);
    for (size_t i = 0; i < n; i++) ((double *)weft_tensor_data(t))[i] = v ? v[i] : 0.0;
    return t;
}

static weft_var_t *input(weft_graph_t *g, const char *name, int nd, const int64_t *shape)
{
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, nd, shape, &t), WEFT_OK);
    return weft_var_create(g, t, name);
}

/* Least squares on `rows` rows: loss = allreduce(sum((x w - y)^2)),
 * w <- w - 0.01 allreduce(grad), step <- step + 1 ("step_next"),
 * acc <- picky(acc + loss) ("acc_next"). */
static void build(sgd_t *s, int64_t rows)
{
    assert_int_equal(weft_graph_create(NULL, &s->g), WEFT_OK);
    weft_graph_t *g = s->g;
    int64_t xs[2] = {rows, DIM}, ws[1] = {DIM};
    double w0[DIM] = {0.5, -0.25, 0.125};
    s->x = input(g, "x", 2, xs);
    s->y = input(g, "y", 1, xs);
    s->acc = input(g, "acc", 0, NULL);
    weft_tensor_t *wt = tensor(1, ws, w0), *st = tensor(0, NULL, NULL);
    s->w = weft_shared(g, wt, "w");
    s->step = weft_shared(g, st, "step");
    weft_tensor_release(wt);
    weft_tensor_release(st);
    weft_var_t *err = weft_sub(g, weft_dot(g, s->x, s->w), s->y);
    weft_var_t *local = weft_sum(g, weft_sqr(g, err), 0, NULL, false);
    weft_var_t *grad = weft_mpi_allreduce(g, weft_grad(g, local, s->w));
    s->loss = weft_mpi_allreduce(g, local);
    weft_var_t *lr = weft_constant_scalar(g, WEFT_FLOAT64, 0.01);
    weft_var_t *one = weft_constant_scalar(g, WEFT_FLOAT64, 1.0);
    weft_var_t *step_next = weft_add(g, s->step, one);
    weft_var_t *acc_next = mpi_test_picky(g, weft_add(g, s->acc, s->loss));
    assert_non_null(step_next);
    assert_non_null(acc_next);
    weft_var_set_name(step_next, "step_next");
    weft_var_set_name(acc_next, "acc_next");
    s->upd[0] = (weft_update_t){s->w, weft_sub(g, s->w, weft_mul(g, lr, grad))};
    s->upd[1] = (weft_update_t){s->step, step_next};
    s->upd[2] = (weft_update_t){s->acc, acc_next};
    assert_non_null(s->upd[0].value);
}

/* x, y replicated (each rank its rows), acc on rank 0, the step counter's
 * and acc's new values computed on the last rank, the rest follows. */
static int owner(void *user, const weft_var_t *v)
{
    (void)user;
    const char *n = weft_var_name(v);
    if (n && (strcmp(n, "step_next") == 0 || strcmp(n, "acc_next") == 0)) return nranks - 1;
    if (n && strcmp(n, "acc") == 0) return 0;
    return weft_var_owner(v) ? WEFT_MPI_FOLLOW : WEFT_MPI_REPLICATED;
}

/* Rows r0 .. r0 + rows of the whole batch. */
static void batch(int64_t r0, int64_t rows, int step, weft_tensor_t **x, weft_tensor_t **y)
{
    int64_t xs[2] = {rows, DIM};
    double xv[64 * DIM], yv[64];
    for (int64_t i = 0; i < rows; i++) {
        int64_t r = r0 + i;
        for (int j = 0; j < DIM; j++) xv[i * DIM + j] = sin(0.7 * (double)(r * DIM + j) + step);
        yv[i] = cos(0.3 * (double)r + step);
    }
    *x = tensor(2, xs, xv);
    *y = tensor(1, xs, yv);
}

static double shared_at(weft_var_t *v, int i)
{
    weft_tensor_t *t;
    assert_int_equal(weft_shared_get(v, &t), WEFT_OK);
    double d = ((double *)weft_tensor_data(t))[i];
    weft_tensor_release(t);
    return d;
}

static void assert_close(double got, double want, const char *what, int step)
{
    if (fabs(got - want) > 1e-12 * fmax(1.0, fabs(want)))
        fail_msg("rank %d step %d: %s %.17g, single process %.17g", rank, step, what, got, want);
}

static weft_mpi_function_t *compile(sgd_t *s, weft_function_options_t *fo)
{
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    mo.owner = owner;
    mo.function = fo;
    mo.timeout_s = 30;
    weft_var_t *in[3] = {s->x, s->y, s->acc};
    weft_mpi_function_t *f;
    weft_status_t st = weft_mpi_function_compile_updates(MPI_COMM_WORLD, 3, in, 1, &s->loss, 3,
                                                         s->upd, &mo, &f);
    if (st != WEFT_OK) fail_msg("compile: %s", weft_mpi_last_error());
    return f;
}

static void sgd_with_updates(void **state)
{
    (void)state;
    sgd_t d, r;
    build(&d, ROWS);
    build(&r, (int64_t)ROWS * nranks);
    weft_function_options_t fo = WEFT_FUNCTION_OPTIONS_INIT;
    fo.threads = 1;
    weft_var_t *rin[3] = {r.x, r.y, r.acc};
    weft_function_t *ref;
    assert_int_equal(weft_function_compile(3, rin, 1, &r.loss, 3, r.upd, &fo, &ref), WEFT_OK);
    weft_mpi_function_t *f = compile(&d, &fo);
    assert_int_equal(weft_mpi_function_gives_input(f, 2), rank == 0);
    weft_tensor_t *acc = tensor(0, NULL, NULL), *racc = tensor(0, NULL, NULL);
    for (int step = 0; step < STEPS; step++) {
        weft_tensor_t *x, *y, *rx, *ry, *loss = NULL, *rloss = NULL;
        batch((int64_t)rank * ROWS, ROWS, step, &x, &y);
        batch(0, (int64_t)ROWS * nranks, step, &rx, &ry);
        weft_tensor_t *rargs[3] = {rx, ry, racc}, *args[3] = {x, y, rank == 0 ? acc : NULL};
        assert_int_equal(weft_function_call(ref, 3, rargs, 1, &rloss), WEFT_OK);
        weft_status_t st = weft_mpi_function_call(f, 3, args, 1, &loss);
        if (st != WEFT_OK) fail_msg("call %d: %s", step, weft_mpi_last_error());
        assert_close(*(double *)weft_tensor_data(loss), *(double *)weft_tensor_data(rloss),
                     "loss", step);
        for (int i = 0; i < DIM; i++) assert_close(shared_at(d.w, i), shared_at(r.w, i), "w", step);
        assert_true(shared_at(d.step, 0) == step + 1);
        if (rank == 0)
            assert_close(*(double *)weft_tensor_data(acc), *(double *)weft_tensor_data(racc),
                         "acc", step);
        weft_tensor_t *rel[6] = {x, y, rx, ry, loss, rloss};
        for (int k = 0; k < 6; k++) weft_tensor_release(rel[k]);
    }
    /* the parameters moved: the test compares a trained w, not the start */
    assert_true(fabs(shared_at(d.w, 0) - 0.5) > 1e-3);
    weft_tensor_release(acc);
    weft_tensor_release(racc);
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    weft_function_destroy(ref);
    weft_graph_destroy(d.g);
    weft_graph_destroy(r.g);
}

/* A call failing on the last rank (acc_next's node, given an acc of 1e7
 * by rank 0): no rank's w, step or acc changes. */
static void failed_call_changes_nothing(void **state)
{
    (void)state;
    sgd_t d;
    build(&d, ROWS);
    weft_function_options_t fo = WEFT_FUNCTION_OPTIONS_INIT;
    fo.threads = 1;
    weft_mpi_function_t *f = compile(&d, &fo);
    double big = 1e7;
    weft_tensor_t *x, *y, *acc = tensor(0, NULL, &big), *loss = NULL;
    batch((int64_t)rank * ROWS, ROWS, 0, &x, &y);
    weft_tensor_t *args[3] = {x, y, rank == 0 ? acc : NULL};
    weft_status_t st = weft_mpi_function_call(f, 3, args, 1, &loss);
    assert_int_equal(st, WEFT_ERANGE);
    assert_non_null(strstr(weft_mpi_last_error(), "MpiTestPickyBig"));
    assert_non_null(strstr(weft_mpi_last_error(), "picky: 1e+07"));
    assert_null(loss);
    assert_true(shared_at(d.w, 0) == 0.5);
    assert_true(shared_at(d.step, 0) == 0.0);
    assert_true(*(double *)weft_tensor_data(acc) == big);
    /* the function stays usable and then updates */
    *(double *)weft_tensor_data(acc) = 0.0;
    st = weft_mpi_function_call(f, 3, args, 1, &loss);
    if (st != WEFT_OK) fail_msg("call: %s", weft_mpi_last_error());
    assert_true(shared_at(d.step, 0) == 1.0);
    assert_true(shared_at(d.w, 0) != 0.5);
    assert_true(rank != 0 || *(double *)weft_tensor_data(acc) > 0.0);
    weft_tensor_t *rel[4] = {x, y, acc, loss};
    for (int k = 0; k < 4; k++) weft_tensor_release(rel[k]);
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    weft_graph_destroy(d.g);
}

/* Bad updates fail on every rank alike, naming the variable. */
static void bad_updates(void **state)
{
    (void)state;
    sgd_t d;
    build(&d, ROWS);
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    weft_var_t *in[3] = {d.x, d.y, d.acc};
    weft_mpi_function_t *f = NULL;
    weft_update_t u[2] = {{d.w, d.loss}, {d.w, d.upd[0].value}};
    assert_int_equal(weft_mpi_function_compile_updates(MPI_COMM_WORLD, 3, in, 1, &d.loss, 1, u,
                                                       &mo, &f), WEFT_ETYPE);
    assert_null(f);
    assert_non_null(strstr(weft_mpi_last_error(), "does not have the type of variable 'w'"));
    assert_int_equal(weft_mpi_function_compile_updates(MPI_COMM_WORLD, 3, in, 1, &d.loss, 2,
                                                       (weft_update_t[]){u[1], u[1]}, &mo, &f),
                     WEFT_EINVAL);
    assert_non_null(strstr(weft_mpi_last_error(), "updates 0 and 1 both update variable 'w'"));
    u[0] = (weft_update_t){d.upd[1].value, d.upd[1].value};
    assert_int_equal(weft_mpi_function_compile_updates(MPI_COMM_WORLD, 3, in, 1, &d.loss, 1, u,
                                                       &mo, &f), WEFT_EINVAL);
    assert_non_null(strstr(weft_mpi_last_error(), "variable 'step_next' (built at "));
    assert_non_null(strstr(weft_mpi_last_error(), "is neither a shared variable nor an input"));
    assert_int_equal(weft_mpi_function_compile_updates(MPI_COMM_WORLD, 3, in, 1, &d.loss, 1, NULL,
                                                       &mo, &f), WEFT_EINVAL);
    weft_graph_destroy(d.g);
}

/* Tiles a (on rank 0) and b (on the last rank), both mutable, each updated
 * from its own old value in place, and b also from a's new value: a <- a + 1,
 * b <- b * 3 + sum(a + 1). No outputs. Each owner's tensor holds the new
 * value in the same memory, and no local function copies a value
 * (no DeepCopyOp: the updates were computed in place). */
static int tile_owner(void *user, const weft_var_t *v)
{
    (void)user;
    const char *n = weft_var_name(v);
    if (n && (strcmp(n, "a") == 0 || strcmp(n, "a_next") == 0)) return 0;
    if (n && (strcmp(n, "b") == 0 || strcmp(n, "b_next") == 0)) return nranks - 1;
    return WEFT_MPI_FOLLOW;
}

static bool local_copies(weft_mpi_function_t *f)
{
    weft_function_t *lf = weft_mpi_function_local(f);
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    assert_non_null(fp);
    if (lf) assert_int_equal(weft_function_print(lf, fp), WEFT_OK);
    fclose(fp);
    bool copies = strstr(text, "DeepCopyOp") != NULL;
    free(text);
    return copies;
}

static void mutable_inputs_updated_in_place(void **state)
{
    (void)state;
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t n4[1] = {4};
    weft_var_t *in[2] = {input(g, "a", 1, n4), input(g, "b", 1, n4)};
    weft_var_t *a1 = weft_add(g, in[0], weft_constant_scalar(g, WEFT_FLOAT64, 1.0));
    weft_var_t *b1 = weft_add(g, weft_mul(g, in[1], weft_constant_scalar(g, WEFT_FLOAT64, 3.0)),
                              weft_sum(g, a1, 0, NULL, false));
    assert_non_null(b1);
    weft_var_set_name(a1, "a_next");
    weft_var_set_name(b1, "b_next");
    weft_update_t u[2] = {{in[0], a1}, {in[1], b1}};
    bool mut[2] = {true, true};
    weft_function_options_t fo = WEFT_FUNCTION_OPTIONS_INIT;
    fo.threads = 1;
    fo.input_mutable = mut;
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    mo.owner = tile_owner;
    mo.function = &fo;
    mo.timeout_s = 30;
    weft_mpi_function_t *f = NULL;
    weft_status_t st = weft_mpi_function_compile_updates(MPI_COMM_WORLD, 2, in, 0, NULL, 2, u,
                                                         &mo, &f);
    if (st != WEFT_OK) fail_msg("compile: %s", weft_mpi_last_error());
    assert_false(local_copies(f));
    double av[4] = {1, 2, 3, 4}, bv[4] = {10, 20, 30, 40};
    weft_tensor_t *a = tensor(1, n4, av), *b = tensor(1, n4, bv);
    const double *ad = weft_tensor_data(a), *bd = weft_tensor_data(b);
    weft_tensor_t *args[2] = {rank == 0 ? a : NULL, rank == nranks - 1 ? b : NULL};
    for (int call = 1; call <= 2; call++) {
        st = weft_mpi_function_call(f, 2, args, 0, NULL);
        if (st != WEFT_OK) fail_msg("call %d: %s", call, weft_mpi_last_error());
        assert_ptr_equal(weft_tensor_data(a), ad);
        assert_ptr_equal(weft_tensor_data(b), bd);
    }
    /* a: +1 twice; b: 3b + sum(a + 1), with sum(a + 1) = 14, then 18 */
    for (int i = 0; i < 4 && rank == 0; i++) assert_true(ad[i] == av[i] + 2);
    for (int i = 0; i < 4 && rank == nranks - 1; i++)
        assert_true(bd[i] == 3 * (3 * bv[i] + 14) + 18);
    weft_tensor_release(a);
    weft_tensor_release(b);
    assert_int_equal(weft_mpi_function_destroy(f), WEFT_OK);
    /* neither outputs nor updates: refused on every rank */
    assert_int_equal(weft_mpi_function_compile_updates(MPI_COMM_WORLD, 2, in, 0, NULL, 0, NULL,
                                                       &mo, &f), WEFT_EINVAL);
    assert_non_null(strstr(weft_mpi_last_error(), "neither outputs nor updates"));
    weft_graph_destroy(g);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sgd_with_updates),
        cmocka_unit_test(failed_call_changes_nothing),
        cmocka_unit_test(bad_updates),
        cmocka_unit_test(mutable_inputs_updated_in_place),
    };
    return mpi_test_run(argc, argv, "mpi_updates", tests, sizeof tests / sizeof *tests, &rank,
                        &nranks);
}

/* mlp_train_mpi (mlp_train --mpi): data-parallel training of the demo MLP
 * (mlp_train_core.h) with libweft_mpi. Every rank holds the parameters
 * (replicated) and its own rows of the batch; the step graph computes the
 * local squared error, its gradients, sums both over the ranks with
 * weft_mpi_allreduce inside the graph, and returns the new parameters.
 * Rank 0 also trains the same model on the whole batch with a plain
 * single-process function, and compares the loss curves. Run under mpirun:
 *
 *   mpirun -np 2 mlp_train_mpi [--batch B] [--steps S] [--reps R]
 *
 * (B: rows per rank, default 1024). Rank 0 prints
 *
 *   mlp_mpi ranks=P batch_per_rank=B steps=S max_rel_loss_diff=D
 *   mlp_mpi impl=weft_mpi ranks=P threads=1 batch=P*B samples_per_s=X
 *   mlp_mpi impl=weft ranks=1 threads=1 batch=B samples_per_s=Y
 *   mlp_mpi ranks=P speedup=X/Y
 *
 * max_rel_loss_diff: the largest |loss_mpi - loss_single| / loss_single over
 * the steps (the single-process run on all P*B rows); exit status 1 above
 * 1e-12. samples_per_s: rows trained per second, median step time over R
 * timed steps (after 2 warm-up steps); the one-rank line is a plain weft
 * function at batch B with one worker, timed on rank 0 in the same run while
 * the other ranks wait. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlp_train_int.h"
#include "demo_median.h"
#include "weft/mpi.h"

typedef struct step_graph {
    weft_graph_t *g;
    weft_var_t *in[MLP_N_INPUTS];
    weft_var_t *out[1 + MLP_N_PARAMS]; /* loss, new parameters */
} step_graph_t;

static int rank, size;

/* loss = sum over ranks of sum((net(x) - y)^2) / (total rows * width); the
 * gradients likewise summed over the ranks (allreduce: identity on one). */
static weft_status_t build_step(step_graph_t *s, int rows, int total_rows, int width, double lr)
{
    memset(s, 0, sizeof *s);
    weft_status_t st = weft_graph_create(NULL, &s->g);
    if (st != WEFT_OK) return st;
    weft_graph_t *g = s->g;
    const weft_type_t *tx, *tw, *tb;
    int64_t xs[2] = {rows, width}, ws[2] = {width, width}, bs[1] = {width};
    weft_type_tensor(g, WEFT_FLOAT64, 2, xs, &tx);
    weft_type_tensor(g, WEFT_FLOAT64, 2, ws, &tw);
    weft_type_tensor(g, WEFT_FLOAT64, 1, bs, &tb);
    s->in[0] = weft_var_create(g, tx, "x");
    s->in[1] = weft_var_create(g, tx, "y");
    for (int k = 0; k < MLP_LAYERS; k++) {
        s->in[2 + 2 * k] = weft_var_create(g, tw, "W");
        s->in[3 + 2 * k] = weft_var_create(g, tb, "b");
    }
    weft_var_t *h = s->in[0];
    for (int k = 0; k < MLP_LAYERS; k++) {
        h = weft_add(g, weft_dot(g, h, s->in[2 + 2 * k]), s->in[3 + 2 * k]);
        if (k < MLP_LAYERS - 1) h = weft_tanh(g, h);
    }
    weft_var_t *d = weft_sub(g, h, s->in[1]);
    weft_var_t *local = weft_mul_scalar(g, weft_sum(g, weft_sqr(g, d), 0, NULL, false),
                                        1.0 / ((double)total_rows * width));
    weft_var_t *grads[MLP_N_PARAMS];
    weft_grads(g, local, MLP_N_PARAMS, s->in + 2, NULL, grads);
    s->out[0] = weft_mpi_allreduce(g, local);
    for (int i = 0; i < MLP_N_PARAMS; i++)
        s->out[1 + i] = weft_sub(g, s->in[2 + i], weft_mul_scalar(g, weft_mpi_allreduce(g, grads[i]), lr));
    if (weft_graph_error(g) != WEFT_OK) {
        fprintf(stderr, "mlp_train_mpi: %s\n", weft_graph_error_message(g));
        return weft_graph_error(g);
    }
    return WEFT_OK;
}

static int replicated(void *user, const weft_var_t *v)
{
    (void)user;
    return weft_var_owner(v) ? WEFT_MPI_FOLLOW : WEFT_MPI_REPLICATED;
}

/* Tensors: x, y rows [r0, r0 + rows) of the data; the parameters (two sets,
 * swapped after each step: the new values become the next inputs). */
typedef struct state {
    weft_tensor_t *in[MLP_N_INPUTS];
    weft_tensor_t *out[1 + MLP_N_PARAMS];
} state_t;

static weft_status_t state_create(state_t *s, const mlp_data_t *d, int r0, int rows)
{
    int w = d->cfg.width;
    int64_t xs[2] = {rows, w}, ws[2] = {w, w}, bs[1] = {w};
    memset(s, 0, sizeof *s);
    weft_status_t st = weft_tensor_from_data(WEFT_FLOAT64, 2, xs, NULL, d->x + (size_t)r0 * w, &s->in[0]);
    if (st == WEFT_OK) st = weft_tensor_from_data(WEFT_FLOAT64, 2, xs, NULL, d->y + (size_t)r0 * w, &s->in[1]);
    for (int k = 0; k < MLP_LAYERS && st == WEFT_OK; k++) {
        const int64_t *sh = ws;
        for (int b = 0; b < 2 && st == WEFT_OK; b++, sh = bs) {
            int i = 2 + 2 * k + b;
            st = weft_tensor_empty(WEFT_FLOAT64, b ? 1 : 2, sh, &s->in[i]);
            if (st == WEFT_OK) st = weft_tensor_empty(WEFT_FLOAT64, b ? 1 : 2, sh, &s->out[i - 1]);
            if (st == WEFT_OK)
                memcpy(weft_tensor_data(s->in[i]), b ? d->b0[k] : d->w0[k],
                       weft_tensor_size(s->in[i]) * sizeof(double));
        }
    }
    if (st == WEFT_OK) st = weft_tensor_empty(WEFT_FLOAT64, 0, NULL, &s->out[0]);
    return st;
}

static void state_swap(state_t *s)
{
    for (int i = 0; i < MLP_N_PARAMS; i++) {
        weft_tensor_t *t = s->in[2 + i];
        s->in[2 + i] = s->out[1 + i];
        s->out[1 + i] = t;
    }
}

static void state_destroy(state_t *s)
{
    for (int i = 0; i < MLP_N_INPUTS; i++) weft_tensor_release(s->in[i]);
    for (int i = 0; i < 1 + MLP_N_PARAMS; i++) weft_tensor_release(s->out[i]);
}

static weft_function_options_t fn_opts(void)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    o.name = "mlp_train_mpi";
    return o;
}

/* The loss curve of the distributed step (every rank) and its step times. */
static int run_mpi(const mlp_data_t *d, int rows, int steps, double *loss, double *times)
{
    step_graph_t s;
    weft_mpi_function_t *f = NULL;
    state_t st;
    weft_function_options_t fo = fn_opts();
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    mo.owner = replicated;
    mo.function = &fo;
    int bad = build_step(&s, rows, rows * size, d->cfg.width, d->cfg.lr) != WEFT_OK;
    if (!bad) bad = weft_mpi_function_compile(MPI_COMM_WORLD, MLP_N_INPUTS, s.in, 1 + MLP_N_PARAMS,
                                              s.out, &mo, &f) != WEFT_OK;
    if (!bad) bad = state_create(&st, d, rank * rows, rows) != WEFT_OK;
    for (int k = 0; k < steps && !bad; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        bad = weft_mpi_function_call(f, MLP_N_INPUTS, st.in, 1 + MLP_N_PARAMS, st.out) != WEFT_OK;
        times[k] = MPI_Wtime() - t0;
        loss[k] = *(double *)weft_tensor_data(st.out[0]);
        state_swap(&st);
    }
    if (bad) fprintf(stderr, "rank %d: %s\n", rank, weft_mpi_last_error());
    if (f) state_destroy(&st);
    weft_mpi_function_destroy(f);
    weft_graph_destroy(s.g);
    return bad;
}

/* The same model, plain weft, one worker, on `rows` rows from row 0. */
static int run_single(const mlp_data_t *d, int rows, int steps, double *loss, double *times)
{
    step_graph_t s;
    weft_function_t *f = NULL;
    state_t st;
    weft_function_options_t fo = fn_opts();
    int bad = build_step(&s, rows, rows, d->cfg.width, d->cfg.lr) != WEFT_OK;
    if (!bad) bad = weft_function_compile(MLP_N_INPUTS, s.in, 1 + MLP_N_PARAMS, s.out, 0, NULL, &fo, &f) != WEFT_OK;
    if (!bad) bad = state_create(&st, d, 0, rows) != WEFT_OK;
    for (int k = 0; k < steps && !bad; k++) {
        double t0 = MPI_Wtime();
        bad = weft_function_call(f, MLP_N_INPUTS, st.in, 1 + MLP_N_PARAMS, st.out) != WEFT_OK;
        times[k] = MPI_Wtime() - t0;
        loss[k] = *(double *)weft_tensor_data(st.out[0]);
        state_swap(&st);
    }
    if (f) state_destroy(&st);
    weft_function_destroy(f);
    weft_graph_destroy(s.g);
    return bad;
}

/* A barrier that sleeps while it waits (MPI_Barrier polls a core: the ranks
 * waiting for rank 0's one-rank timing must not slow it down). */
static void sleepy_barrier(void)
{
    MPI_Request req;
    int flag = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    while (!flag) {
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (!flag) nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

int main(int argc, char **argv)
{
    if (weft_mpi_init(&argc, &argv, NULL) != WEFT_OK) return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rows = 1024, steps = 10, reps = 10;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--batch")) rows = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--steps")) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
    }
    if (rows < 1 || steps < 1 || reps < 1) return 2;
    mlp_config_t cfg = {rows * size, 256, 0.05, 1, 0, NULL};
    mlp_data_t *d = NULL;
    weft_blas_scope_t scope;
    weft_blas_scope_enter(&scope, 1);
    int bad = mlp_data_create(&cfg, &d) != WEFT_OK;
    int n = steps > reps + 2 ? steps : reps + 2;
    double *lm = calloc((size_t)n, sizeof *lm), *tm = calloc((size_t)n, sizeof *tm);
    double *ls = calloc((size_t)n, sizeof *ls), *ts = calloc((size_t)n, sizeof *ts);
    if (!bad) bad = run_mpi(d, rows, n, lm, tm);
    if (!bad && rank == 0) bad = run_single(d, rows * size, steps, ls, ts); /* the loss curve */
    sleepy_barrier();
    if (getenv("MLP_MPI_DEBUG") && rank == 0)
        for (int k = 0; k < n; k++) fprintf(stderr, "step %d: %.4f s\n", k, tm[k]);
    double t_mpi = demo_median(tm + 2, reps), t_one = 0, diff = 0;
    sleepy_barrier();
    if (!bad && rank == 0) {
        for (int k = 0; k < steps; k++) diff = fmax(diff, fabs(lm[k] - ls[k]) / ls[k]);
        bad = run_single(d, rows, reps + 2, ls, ts); /* one rank at batch `rows` */
        t_one = demo_median(ts + 2, reps);
    }
    sleepy_barrier();
    if (!bad && rank == 0) {
        double sm = (double)rows * size / t_mpi, s1 = (double)rows / t_one;
        printf("mlp_mpi ranks=%d batch_per_rank=%d steps=%d max_rel_loss_diff=%.3e\n", size, rows, steps, diff);
        printf("mlp_mpi impl=weft_mpi ranks=%d threads=1 batch=%d samples_per_s=%.0f\n", size, rows * size, sm);
        printf("mlp_mpi impl=weft ranks=1 threads=1 batch=%d samples_per_s=%.0f\n", rows, s1);
        printf("mlp_mpi ranks=%d speedup=%.3f\n", size, sm / s1);
        if (!(diff <= 1e-12)) bad = 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(lm);
    free(tm);
    free(ls);
    free(ts);
    mlp_data_destroy(d);
    weft_blas_scope_exit(&scope);
    MPI_Finalize();
    return bad;
}

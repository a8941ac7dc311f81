/* tile_cholesky_mpi (tile_cholesky --mpi): the tile Cholesky graph of
 * tile_cholesky_core.h distributed over the MPI ranks with libweft_mpi, the
 * tiles 2-D block-cyclic on a p x q grid (ScaLAPACK's layout), each node on
 * the rank owning the tile it writes; timed in the same run against
 * ScaLAPACK's pdpotrf on the same grid and block size. Run under mpirun:
 *
 *   mpirun -np 2 tile_cholesky_mpi [--n N] [--nb NB] [--scalapack-nb NB]
 *                                  [--reps R] [--threads T] [--trace PATH]
 *
 * (--scalapack-nb: pdpotrf's block size when it should differ from weft's,
 * to set each side at its best in one run; pdpotrf is fastest at nb 96-128
 * here, weft at 384-512, docs/distributed.md §8.
 * --trace: the weft side is profiled and rank 0 writes the merged Chrome
 * trace of its last factorization to PATH, weft_mpi_function_write_trace.
 * --profile-json PATH: the weft side is profiled and rank 0 writes its local
 * function's profile over all calls (weft_profile_write_json) to PATH: the
 * node costs cholesky_mpi_sim --profile replays; a PATH holding "%d" is
 * written by every rank, its rank number in place of the %d.)
 *
 * Rank 0 prints
 *
 *   cholesky_mpi impl=weft n=N nb=NB ranks=P threads=T gflops=X residual=R mean_s=M
 *   cholesky_mpi impl=scalapack n=N nb=NB ranks=P threads=T gflops=X residual=R
 *   cholesky_mpi n=N ranks=P weft_over_scalapack=S
 *
 * gflops: n^3/3 flops over the median of R timed factorizations (from a
 * barrier to a barrier), the two alternated, after one untimed call of each
 * (first-call set-up). Both factor in place: each tile input is updated
 * with its factor tile (weft_mpi_function_compile_updates on mutable
 * inputs), as pdpotrf overwrites its matrix; residual: ||A - L L^T||_F /
 * ||A||_F of the last factor, gathered on rank 0; mean_s: the mean of the R
 * weft times (what a profile over the R calls averages: sim_validate.sh). Exit status 1 when a
 * residual exceeds 1e-12 or a call fails. Defaults: n 4096, nb 256, 3 reps,
 * one worker per rank (one-thread BLAS in both). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile_cholesky_core.h"
#include "demo_median.h"
#include "weft/mpi.h"
#include "weft/profile.h"

/* ScaLAPACK / BLACS (libscalapack-openmpi: no header) */
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int p, int q);
void Cblacs_gridinfo(int ctxt, int *p, int *q, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ctxt, const int *lld, int *info);
void pdpotrf_(const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desc, int *info);

typedef struct opts {
    int n, nb, reps, threads;
    int scal_nb; /* --scalapack-nb: pdpotrf's block size (default: nb) */
    const char *trace; /* --trace PATH: profile on, merged trace of the last call */
    const char *profile_json; /* --profile-json PATH: profile on, rank 0's profile */
} opts_t;

static int rank, size, grid_p, grid_q;

/* ---- the distributed graph ----------------------------------------------------------- */

typedef struct dist {
    int nt;
    int *owner;      /* by variable id */
    size_t cap;
    weft_graph_t *g;
    weft_var_t **in, **cur, **tr;
    weft_mpi_function_t *f;
} dist_t;

static size_t tri(int i, int j)
{
    return (size_t)i * (size_t)(i + 1) / 2 + (size_t)j;
}

static void own(dist_t *d, weft_var_t *v, int i, int j)
{
    if (!v) return;
    size_t id = weft_var_id(v);
    while (id >= d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 1024;
        int *o = realloc(d->owner, cap * sizeof *o);
        if (!o) return;
        for (size_t k = d->cap; k < cap; k++) o[k] = WEFT_MPI_FOLLOW;
        d->owner = o;
        d->cap = cap;
    }
    d->owner[id] = weft_mpi_block_cyclic_owner(i, j, grid_p, grid_q);
}

static int owner_of(void *user, const weft_var_t *v)
{
    dist_t *d = user;
    size_t id = weft_var_id(v);
    return id < d->cap ? d->owner[id] : WEFT_MPI_FOLLOW;
}

static void build_graph(dist_t *d, int n, int nb)
{
    weft_graph_t *g = d->g;
    const weft_op_t *potrf, *potrf_inv, *trmm, *syrk;
    weft_op_create(g, &chol_potrf_class, NULL, &potrf);
    weft_op_create(g, &chol_potrf_inv_class, NULL, &potrf_inv);
    weft_op_create(g, &chol_trmm_class, NULL, &trmm);
    weft_op_create(g, &chol_syrk_class, NULL, &syrk);
    weft_var_t *minus1 = weft_constant_scalar(g, WEFT_FLOAT64, -1.0);
    weft_var_t *one = weft_constant_scalar(g, WEFT_FLOAT64, 1.0);
    int nt = d->nt;
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++) {
            int64_t shape[2] = {n - i * nb < nb ? n - i * nb : nb, n - j * nb < nb ? n - j * nb : nb};
            const weft_type_t *ty;
            weft_type_tensor(g, WEFT_FLOAT64, 2, shape, &ty);
            d->in[tri(i, j)] = d->cur[tri(i, j)] = weft_var_create(g, ty, NULL);
            own(d, d->in[tri(i, j)], i, j);
        }
    for (int k = 0; k < nt; k++) {
        weft_var_t *akk = d->cur[tri(k, k)];
        bool panel = k + 1 < nt;
        weft_apply_t *fac = weft_apply_create(g, panel ? potrf_inv : potrf, 1, &akk);
        own(d, d->cur[tri(k, k)] = fac ? weft_apply_output(fac, 0) : NULL, k, k);
        weft_var_t *inv = panel && fac ? weft_apply_output(fac, 1) : NULL;
        own(d, inv, k, k);
        for (int i = k + 1; i < nt; i++) {
            weft_var_t *ti[2] = {inv, d->cur[tri(i, k)]};
            own(d, d->cur[tri(i, k)] = weft_op_call(g, trmm, 2, ti), i, k);
            if (i + 1 < nt) own(d, d->tr[tri(i, k)] = weft_transpose(g, d->cur[tri(i, k)]), i, k);
        }
        for (int i = k + 1; i < nt; i++) {
            weft_var_t *si[2] = {d->cur[tri(i, i)], d->cur[tri(i, k)]};
            own(d, d->cur[tri(i, i)] = weft_op_call(g, syrk, 2, si), i, i);
            for (int j = k + 1; j < i; j++) {
                weft_var_t **c = &d->cur[tri(i, j)];
                *c = weft_gemm(g, *c, minus1, d->cur[tri(i, k)], d->tr[tri(j, k)], one, true);
                own(d, *c, i, j);
            }
        }
    }
}

static weft_status_t dist_create(dist_t *d, int n, int nb, int threads, bool profile)
{
    memset(d, 0, sizeof *d);
    d->nt = (n + nb - 1) / nb;
    size_t nv = tri(d->nt, 0);
    d->in = calloc(nv, sizeof *d->in);
    d->cur = calloc(nv, sizeof *d->cur);
    d->tr = calloc(nv, sizeof *d->tr);
    if (!d->in || !d->cur || !d->tr || weft_graph_create(NULL, &d->g) != WEFT_OK) return WEFT_ENOMEM;
    build_graph(d, n, nb);
    if (weft_graph_error(d->g) != WEFT_OK) {
        fprintf(stderr, "tile_cholesky_mpi: %s\n", weft_graph_error_message(d->g));
        return weft_graph_error(d->g);
    }
    bool *mut = malloc(nv * sizeof *mut);
    if (!mut) return WEFT_ENOMEM;
    for (size_t v = 0; v < nv; v++) mut[v] = true;
    weft_function_options_t fo = WEFT_FUNCTION_OPTIONS_INIT;
    fo.threads = threads;
    fo.accept_inplace = true;
    fo.input_mutable = mut;
    fo.node_threads = 1;
    fo.name = "tile_cholesky_mpi";
    fo.profile = profile;
    weft_mpi_options_t mo = WEFT_MPI_OPTIONS_INIT;
    mo.owner = owner_of;
    mo.owner_user = d;
    mo.function = &fo;
    mo.timeout_s = 300;
    /* tile <- its factor: on the tile's owner, in place (no copy) */
    weft_update_t *upd = malloc(nv * sizeof *upd);
    if (!upd) {
        free(mut);
        return WEFT_ENOMEM;
    }
    for (size_t v = 0; v < nv; v++) upd[v] = (weft_update_t){d->in[v], d->cur[v]};
    weft_status_t st =
        weft_mpi_function_compile_updates(MPI_COMM_WORLD, nv, d->in, 0, NULL, nv, upd, &mo, &d->f);
    free(upd);
    free(mut);
    if (st != WEFT_OK) fprintf(stderr, "tile_cholesky_mpi: %s\n", weft_mpi_last_error());
    return st;
}

static void dist_destroy(dist_t *d)
{
    weft_mpi_function_destroy(d->f);
    weft_graph_destroy(d->g);
    free(d->in);
    free(d->cur);
    free(d->tr);
    free(d->owner);
}

/* ---- tiles of this rank ------------------------------------------------------------------ */

static int tlen(int n, int nb, int i)
{
    return n - i * nb < nb ? n - i * nb : nb;
}

static void load_tiles(const dist_t *d, weft_tensor_t **x, const double *a, int n, int nb)
{
    for (int i = 0; i < d->nt; i++)
        for (int j = 0; j <= i; j++) {
            size_t v = tri(i, j);
            if (!weft_mpi_function_gives_input(d->f, v)) continue;
            int r = tlen(n, nb, i), c = tlen(n, nb, j);
            if (!x[v]) {
                int64_t shape[2] = {r, c};
                weft_tensor_empty(WEFT_FLOAT64, 2, shape, &x[v]);
            }
            double *t = weft_tensor_data(x[v]);
            for (int p = 0; p < r; p++)
                memcpy(t + (size_t)p * c, a + (size_t)(i * nb + p) * n + (size_t)j * nb,
                       (size_t)c * sizeof *t);
        }
}

/* The factor on rank 0 (lower, zeros above): every rank sends the tiles it
 * factored in place. */
static void gather_factor(const dist_t *d, weft_tensor_t **x, double *l, int n, int nb)
{
    for (int i = 0; i < d->nt; i++)
        for (int j = 0; j <= i; j++) {
            size_t v = tri(i, j);
            int r = tlen(n, nb, i), c = tlen(n, nb, j), src = weft_mpi_block_cyclic_owner(i, j, grid_p, grid_q);
            double *buf = malloc((size_t)r * c * sizeof *buf);
            if (rank == src && src != 0) MPI_Send(weft_tensor_data(x[v]), r * c, MPI_DOUBLE, 0, (int)v, MPI_COMM_WORLD);
            if (rank == 0) {
                if (src == 0) memcpy(buf, weft_tensor_data(x[v]), (size_t)r * c * sizeof *buf);
                else MPI_Recv(buf, r * c, MPI_DOUBLE, src, (int)v, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int p = 0; p < r; p++)
                    for (int q = 0; q < c; q++)
                        l[(size_t)(i * nb + p) * n + (size_t)j * nb + q] = j < i || q <= p ? buf[(size_t)p * c + q] : 0.0;
            }
            free(buf);
        }
}

/* ---- ScaLAPACK ------------------------------------------------------------------------------ */

typedef struct scal {
    int ctxt, desc[9], mloc, nloc;
    double *a;
} scal_t;

static void scal_create(scal_t *s, int n, int nb)
{
    int zero = 0, info, myrow, mycol, p, q;
    Cblacs_get(0, 0, &s->ctxt);
    Cblacs_gridinit(&s->ctxt, "Row", grid_p, grid_q);
    Cblacs_gridinfo(s->ctxt, &p, &q, &myrow, &mycol);
    s->mloc = numroc_(&n, &nb, &myrow, &zero, &grid_p);
    s->nloc = numroc_(&n, &nb, &mycol, &zero, &grid_q);
    int lld = s->mloc > 1 ? s->mloc : 1;
    descinit_(s->desc, &n, &n, &nb, &nb, &zero, &zero, &s->ctxt, &lld, &info);
    s->a = malloc((size_t)lld * (size_t)(s->nloc > 0 ? s->nloc : 1) * sizeof *s->a);
}

static void scal_load(scal_t *s, const double *a, int n, int nb)
{
    int myrow = rank / grid_q, mycol = rank % grid_q, lld = s->mloc > 1 ? s->mloc : 1;
    for (int lj = 0; lj < s->nloc; lj++) {
        int gj = (lj / nb * grid_q + mycol) * nb + lj % nb;
        for (int li = 0; li < s->mloc; li++) {
            int gi = (li / nb * grid_p + myrow) * nb + li % nb;
            s->a[(size_t)lj * lld + li] = a[(size_t)gi * n + gj];
        }
    }
}

static int scal_run(scal_t *s, int n)
{
    int one = 1, info = 0;
    pdpotrf_("L", &n, s->a, &one, &one, s->desc, &info);
    return info;
}

/* The factor on rank 0, from the local column-major blocks. */
static void scal_gather(const scal_t *s, double *l, int n, int nb)
{
    int lld = s->mloc > 1 ? s->mloc : 1;
    for (int r = 0; r < size; r++) {
        int pr = r / grid_q, pc = r % grid_q, zero = 0;
        int ml = numroc_(&n, &nb, &pr, &zero, &grid_p), nl = numroc_(&n, &nb, &pc, &zero, &grid_q);
        size_t cnt = (size_t)(ml > 1 ? ml : 1) * (size_t)(nl > 0 ? nl : 1);
        double *buf = rank == r ? s->a : malloc(cnt * sizeof *buf);
        if (rank == r && r != 0) MPI_Send(s->a, (int)cnt, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
        if (rank == 0 && r != 0) MPI_Recv(buf, (int)cnt, MPI_DOUBLE, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 0)
            for (int lj = 0; lj < nl; lj++)
                for (int li = 0; li < ml; li++) {
                    int gj = (lj / nb * grid_q + pc) * nb + lj % nb, gi = (li / nb * grid_p + pr) * nb + li % nb;
                    l[(size_t)gi * n + gj] = gi >= gj ? buf[(size_t)lj * (ml > 1 ? ml : 1) + li] : 0.0;
                }
        if (rank != r) free(buf);
    }
    (void)lld;
}

/* ---- driver ---------------------------------------------------------------------------------- */

/* This rank's local function's profile over every call, as JSON, to pattern
 * with the rank in place of a "%d" (parse checked there is at most one). */
static int write_profile(const dist_t *d, const char *pattern)
{
    char path[4096];
    const char *at = strstr(pattern, "%d");
    if (at) snprintf(path, sizeof path, "%.*s%d%s", (int)(at - pattern), pattern, rank, at + 2);
    else snprintf(path, sizeof path, "%s", pattern);
    weft_profile_t *p = NULL;
    FILE *fp = fopen(path, "w");
    weft_function_t *lf = weft_mpi_function_local(d->f);
    int bad = !fp || !lf || weft_profile_create(lf, WEFT_PROFILE_TOTAL, &p) != WEFT_OK ||
              weft_profile_write_json(p, fp) != WEFT_OK;
    weft_profile_destroy(p);
    if (fp && fclose(fp) != 0) bad = 1;
    if (bad) fprintf(stderr, "tile_cholesky_mpi: cannot write the profile to %s\n", path);
    return bad;
}

static int parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){4096, 256, 3, 1, 0, NULL, NULL};
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--n")) o->n = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--nb")) o->nb = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--scalapack-nb")) o->scal_nb = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--reps")) o->reps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--threads")) o->threads = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--trace")) o->trace = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--profile-json")) o->profile_json = argv[++i];
        else if (!strcmp(argv[i], "--mpi")) continue;
        else {
            if (rank == 0) fprintf(stderr, "usage: tile_cholesky_mpi [--n N] [--nb NB] [--scalapack-nb NB] [--reps R] [--threads T] [--trace PATH] [--profile-json PATH]\n");
            return 2;
        }
    }
    const char *pct = o->profile_json ? strchr(o->profile_json, '%') : NULL;
    if (pct && (strncmp(pct, "%d", 2) != 0 || strchr(pct + 1, '%'))) return 2; /* one %d at most */
    if (o->scal_nb == 0) o->scal_nb = o->nb;
    return o->n > 0 && o->nb > 0 && o->scal_nb > 0 && o->reps > 0 && o->threads > 0 ? 0 : 2;
}

static void grid(void)
{
    grid_p = 1;
    for (int p = 1; p * p <= size; p++)
        if (size % p == 0) grid_p = p;
    grid_q = size / grid_p;
}

static double timed_weft(dist_t *d, weft_tensor_t **x, const double *a, const opts_t *o, int *failed)
{
    size_t nv = tri(d->nt, 0);
    load_tiles(d, x, a, o->n, o->nb); /* the call factors them in place */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    weft_status_t st = weft_mpi_function_call(d->f, nv, x, 0, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    if (st != WEFT_OK) {
        fprintf(stderr, "rank %d: %s\n", rank, weft_mpi_last_error());
        *failed = 1;
    }
    return t;
}

static double timed_scal(scal_t *s, const double *a, const opts_t *o, int *failed)
{
    scal_load(s, a, o->n, o->scal_nb);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int info = scal_run(s, o->n);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    if (info != 0) *failed = 1;
    return t;
}

int main(int argc, char **argv)
{
    if (weft_mpi_init(&argc, &argv, NULL) != WEFT_OK) return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc) {
        MPI_Finalize();
        return rc;
    }
    grid();
    weft_blas_scope_t scope;
    weft_blas_scope_enter(&scope, 1);
    double *a = NULL;
    chol_make_spd(o.n, 42, &a);
    dist_t d;
    int failed = dist_create(&d, o.n, o.nb, o.threads, o.trace || o.profile_json) != WEFT_OK;
    scal_t s;
    scal_create(&s, o.n, o.scal_nb);
    size_t nv = tri(d.nt, 0);
    weft_tensor_t **x = calloc(nv, sizeof *x);
    double *tw = calloc((size_t)o.reps, sizeof *tw), *ts = calloc((size_t)o.reps, sizeof *ts);
    /* one untimed call of each first: first-call set-up (weft's plans and
     * buffers, ScaLAPACK's and MPI's) is not what is compared */
    if (!failed) timed_weft(&d, x, a, &o, &failed);
    if (!failed) timed_scal(&s, a, &o, &failed);
    if (!failed && (o.profile_json || o.trace) && weft_mpi_function_local(d.f))
        failed = weft_profile_reset(weft_mpi_function_local(d.f)) != WEFT_OK; /* timed calls only */
    for (int r = 0; r < o.reps && !failed; r++) {
        tw[r] = timed_weft(&d, x, a, &o, &failed);
        ts[r] = timed_scal(&s, a, &o, &failed);
    }
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!failed && o.trace && weft_mpi_function_write_trace(d.f, o.trace) != WEFT_OK) failed = 1;
    if (!failed && o.profile_json && (rank == 0 || strstr(o.profile_json, "%d")) &&
        write_profile(&d, o.profile_json) != 0)
        failed = 1;
    double *l = rank == 0 ? calloc((size_t)o.n * o.n, sizeof *l) : NULL;
    double res_w = NAN, res_s = NAN;
    if (!failed) {
        gather_factor(&d, x, l, o.n, o.nb);
        if (rank == 0) res_w = chol_residual(a, l, o.n, 1);
        scal_gather(&s, l, o.n, o.scal_nb);
        if (rank == 0) res_s = chol_residual(a, l, o.n, 1);
    }
    if (rank == 0 && !failed) {
        double flops = (double)o.n * o.n * o.n / 3.0 * 1e-9;
        double mean = 0;
        for (int r = 0; r < o.reps; r++) mean += tw[r] / o.reps;
        double gw = flops / demo_median(tw, o.reps), gs = flops / demo_median(ts, o.reps);
        printf("cholesky_mpi impl=weft n=%d nb=%d ranks=%d threads=%d gflops=%.2f residual=%.2e "
               "mean_s=%.4f\n",
               o.n, o.nb, size, o.threads, gw, res_w, mean);
        printf("cholesky_mpi impl=scalapack n=%d nb=%d ranks=%d threads=%d gflops=%.2f residual=%.2e\n",
               o.n, o.scal_nb, size, o.threads, gs, res_s);
        printf("cholesky_mpi n=%d ranks=%d weft_over_scalapack=%.3f\n", o.n, size, gw / gs);
        if (!(res_w < 1e-12) || !(res_s < 1e-12)) failed = 1;
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (size_t v = 0; v < nv; v++) weft_tensor_release(x[v]);
    free(x);
    free(tw);
    free(ts);
    free(l);
    free(a);
    free(s.a);
    dist_destroy(&d);
    weft_blas_scope_exit(&scope);
    Cblacs_gridexit(s.ctxt);
    MPI_Finalize();
    return failed;
}

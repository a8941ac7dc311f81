/* Per-rank profiling of a distributed function (docs/distributed.md §7):
 * the text report and the merged Chrome trace (events built per rank,
 * gathered on rank 0). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_int.h"
#include "weft/profile.h"

weft_status_t weft_mpi_function_print_report(const weft_mpi_function_t *f, FILE *out)
{
    if (!f || !out) return wm__error(WEFT_EINVAL, "weft_mpi_function_print_report: NULL argument");
    weft_mpi_stats_t s;
    memset(&s, 0, sizeof s);
    s.size = sizeof s;
    weft_mpi_function_stats(f, &s);
    int ok = fprintf(out, "rank %d of %d: %u nodes, %u collectives, %llu calls; per call: %u "
                     "messages out (%llu bytes), %u in (%llu bytes)\n", f->rank, f->size, s.nodes,
                     s.collectives, (unsigned long long)s.calls, s.messages_out,
                     (unsigned long long)s.bytes_out, s.messages_in,
                     (unsigned long long)s.bytes_in) > 0;
    for (size_t m = 0; m < f->rt.n_msgs && ok; m++) {
        const wm_msg_t *g = &f->rt.msgs[m];
        if (g->src != f->rank && g->dst != f->rank) continue;
        double last = g->t_done > g->t_post ? 1e-6 * (double)(g->t_done - g->t_post) : 0.0;
        double mean = g->completions ? 1e-6 * (double)g->wait_ns / (double)g->completions : 0.0;
        ok = fprintf(out, "msg %zu %d->%d %zu bytes last_ms=%.3f mean_ms=%.3f %s\n", m, g->src,
                     g->dst, g->bytes, last, mean, g->name) > 0;
    }
    if (ok && f->local) {
        weft_profile_t *p = NULL;
        if (weft_profile_create(f->local, WEFT_PROFILE_TOTAL, &p) == WEFT_OK)
            ok = weft_profile_print(p, 20, out) == WEFT_OK;
        weft_profile_destroy(p);
    }
    return ok ? WEFT_OK : wm__error(WEFT_EIO, "weft_mpi_function_print_report: write failed");
}

/* A growing text buffer. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
    bool oom;
} sbuf_t;

static void put(sbuf_t *b, const char *fmt, ...) WEFT_PRINTF(2, 3);
static void put(sbuf_t *b, const char *fmt, ...)
{
    for (int tries = 0; tries < 2 && !b->oom; tries++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = 2 * (b->cap + (size_t)n) + 256;
        char *s = realloc(b->s, cap);
        if (!s) b->oom = true;
        else b->s = s, b->cap = cap;
    }
}

static double us(uint64_t ns)
{
    return 1e-3 * (double)ns;
}

/* The local function's nodes of the last call (profile on only). */
static void node_events(const weft_mpi_function_t *f, sbuf_t *b)
{
    weft_profile_t *p = NULL;
    if (!f->local || weft_profile_create(f->local, WEFT_PROFILE_LAST_CALL, &p) != WEFT_OK) return;
    for (size_t i = 0; i < p->n_applies; i++) {
        const weft_profile_apply_t *a = &p->applies[i];
        if (a->end_ns <= a->start_ns) continue;
        put(b, ",\n{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f}",
            a->op_class, f->rank, a->worker, us(f->t_local0 + a->start_ns),
            us(a->end_ns - a->start_ns));
    }
    weft_profile_destroy(p);
}

/* Messages: a slice per side on thread "messages", a flow from send to receive. */
static void message_events(const weft_mpi_function_t *f, sbuf_t *b)
{
    put(b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":1000000,"
        "\"args\":{\"name\":\"messages\"}}", f->rank);
    for (size_t m = 0; m < f->rt.n_msgs; m++) {
        const wm_msg_t *g = &f->rt.msgs[m];
        bool send = g->src == f->rank;
        if ((!send && g->dst != f->rank) || g->t_done < g->t_post || !g->t_post) continue;
        put(b, ",\n{\"name\":\"%s %zu\",\"ph\":\"X\",\"pid\":%d,\"tid\":1000000,\"ts\":%.3f,"
            "\"dur\":%.3f,\"args\":{\"bytes\":%zu,\"peer\":%d}}", send ? "send" : "recv", m,
            f->rank, us(g->t_post), us(g->t_done - g->t_post), g->bytes, send ? g->dst : g->src);
        put(b, ",\n{\"name\":\"msg %zu\",\"cat\":\"msg\",\"ph\":\"%s\",\"id\":%zu,\"pid\":%d,"
            "\"tid\":1000000,\"ts\":%.3f%s}", m, send ? "s" : "f", m, f->rank,
            us(send ? g->t_post : g->t_done), send ? "" : ",\"bp\":\"e\"");
    }
}

/* Rank 0: receives every rank's events and writes the file. */
static weft_status_t gather_write(const weft_mpi_function_t *f, const sbuf_t *b, const char *path)
{
    int len = (int)b->len, *lens = NULL, *offs = NULL, total = 0, io_ok = 1;
    char *all = NULL;
    if (f->rank == 0) {
        lens = calloc((size_t)f->size, sizeof *lens);
        offs = calloc((size_t)f->size, sizeof *offs);
    }
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, f->ctl);
    for (int r = 0; f->rank == 0 && lens && offs && r < f->size; r++) {
        offs[r] = total;
        total += lens[r];
    }
    if (f->rank == 0) all = malloc((size_t)total + 1);
    MPI_Gatherv(b->s, len, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, f->ctl);
    if (f->rank == 0) {
        FILE *out = all && path ? fopen(path, "w") : NULL;
        io_ok = out && fprintf(out, "{\"traceEvents\":[\n{\"name\":\"weft_mpi\",\"ph\":\"M\","
                               "\"pid\":0,\"tid\":0}%.*s\n]}\n", total, all) > 0;
        if (out && fclose(out) != 0) io_ok = 0;
    }
    MPI_Bcast(&io_ok, 1, MPI_INT, 0, f->ctl);
    free(lens);
    free(offs);
    free(all);
    return io_ok ? WEFT_OK : wm__error(WEFT_EIO, "weft_mpi_function_write_trace: cannot write %s",
                                       path ? path : "(NULL)");
}

weft_status_t weft_mpi_function_write_trace(const weft_mpi_function_t *f, const char *path)
{
    if (!f) return wm__error(WEFT_EINVAL, "weft_mpi_function_write_trace: NULL function");
    sbuf_t b = {NULL, 0, 0, false};
    put(&b, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}}",
        f->rank, f->rank);
    node_events(f, &b);
    message_events(f, &b);
    if (b.oom) {
        free(b.s);
        b = (sbuf_t){NULL, 0, 0, false}; /* still take part in the collective */
    }
    weft_status_t st = gather_write(f, &b, path);
    free(b.s);
    return st;
}

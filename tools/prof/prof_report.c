/* weft-prof's outputs (prof.h), one function per output: the text report
 * (stdout), the JSON report, the CSV Apply table, the Chrome trace of the
 * profiled calls, the dot graph with timings and the outputs as .npy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "prof.h"

/* Opens path, runs write, closes; a message naming the option on failure. */
static int to_file(const char *opt, const char *path,
                   weft_status_t (*write)(const void *a, const void *b, FILE *out), const void *a,
                   const void *b)
{
    FILE *out = fopen(path, "w");
    weft_status_t s = out ? write(a, b, out) : WEFT_EIO;
    if (out && fclose(out) != 0) s = WEFT_EIO;
    if (s != WEFT_OK)
        fprintf(stderr, "weft-prof: %s %s: %s\n", opt, path,
                out ? weft_status_name(s) : strerror(errno));
    return s != WEFT_OK;
}

/* The in-place nodes (docs/rewrites.md §6.6): per node the bytes it writes
 * into its destroyed input instead of a new buffer and the orderings (DAG
 * edges without data) it waits on; then the totals. */
static void print_inplace(const weft_profile_t *p, size_t rows, FILE *out)
{
    size_t n = 0, with_ord = 0, edges = 0;
    uint64_t bytes = 0;
    fprintf(out, "In-place\n--------\n<id> <bytes saved> <orderings added> <Apply name>\n");
    for (size_t i = 0; i < p->n_applies; i++) {
        const weft_profile_apply_t *r = &p->applies[i];
        if (r->destroys < 0) continue;
        if (n++ < rows)
            fprintf(out, "  %4u  %11llu  %3u  %s\n", r->index,
                    (unsigned long long)r->inplace_bytes, r->inplace_orderings, r->name);
        bytes += r->inplace_bytes;
        with_ord += r->inplace_orderings > 0;
        edges += r->inplace_orderings;
    }
    if (n > rows) fprintf(out, "   ... (%zu more in-place nodes)\n", n - rows);
    fprintf(out, "  %zu in-place nodes save %llu bytes; %zu of them add %zu orderings\n", n,
            (unsigned long long)bytes, with_ord, edges);
}

/* The nodes whose output the memory plan puts in their last-read input's
 * memory (docs/execution.md §4.6): no ordering, so only bytes. */
static void print_reuse(const weft_profile_t *p, size_t rows, FILE *out)
{
    size_t n = 0;
    uint64_t bytes = 0;
    for (size_t i = 0; i < p->n_applies; i++) {
        const weft_profile_apply_t *r = &p->applies[i];
        if (r->reuses_input < 0) continue;
        if (n++ < rows)
            fprintf(out, "  %4u  %11llu  reuses input %d's memory  %s\n", r->index,
                    (unsigned long long)r->out_bytes, r->reuses_input, r->name);
        bytes += r->out_bytes;
    }
    if (n > rows) fprintf(out, "   ... (%zu more slot reuses)\n", n - rows);
    fprintf(out, "  %zu nodes write %llu bytes over their last-read input (memory plan), "
                 "no orderings\n\n",
            n, (unsigned long long)bytes);
}

int prof_write_text(const prof_opts_t *o, const weft_profile_t *p)
{
    weft_status_t s = weft_profile_print(p, (size_t)o->rows, stdout);
    if (s == WEFT_OK) print_inplace(p, (size_t)o->rows, stdout);
    if (s == WEFT_OK) print_reuse(p, (size_t)o->rows, stdout);
    if (s != WEFT_OK) fprintf(stderr, "weft-prof: report: %s\n", weft_status_name(s));
    return s != WEFT_OK;
}

static weft_status_t json_cb(const void *p, const void *unused, FILE *out)
{
    (void)unused;
    return weft_profile_write_json(p, out);
}

int prof_write_json(const prof_opts_t *o, const weft_profile_t *p)
{
    return to_file("--json", o->json, json_cb, p, NULL);
}

static weft_status_t csv_cb(const void *p, const void *unused, FILE *out)
{
    (void)unused;
    return weft_profile_write_csv(p, out);
}

int prof_write_csv(const prof_opts_t *o, const weft_profile_t *p)
{
    return to_file("--csv", o->csv, csv_cb, p, NULL);
}

/* The kept calls in call order (the ring starts at next once full). */
static weft_status_t trace_cb(const void *calls, const void *unused, FILE *out)
{
    (void)unused;
    const prof_calls_t *c = calls;
    const weft_profile_t **snaps = malloc((c->n + 1) * sizeof *snaps);
    uint64_t *offs = malloc((c->n + 1) * sizeof *offs);
    size_t first = c->n == c->cap ? c->next : 0;
    for (size_t k = 0; snaps && offs && k < c->n; k++) {
        snaps[k] = c->snaps[(first + k) % c->cap];
        offs[k] = c->offset_ns[(first + k) % c->cap];
    }
    weft_status_t s = snaps && offs ? weft_profile_write_trace_calls(snaps, offs, c->n, out)
                                    : WEFT_ENOMEM;
    free(snaps);
    free(offs);
    return s;
}

int prof_write_trace(const prof_opts_t *o, const prof_calls_t *calls)
{
    return to_file("--trace", o->trace, trace_cb, calls, NULL);
}

static weft_status_t dot_cb(const void *f, const void *p, FILE *out)
{
    return weft_profile_write_dot(f, p, out);
}

int prof_write_dot(const prof_opts_t *o, const weft_function_t *f, const weft_profile_t *p)
{
    return to_file("--dot", o->dot, dot_cb, f, p);
}

int prof_write_outputs(const prof_opts_t *o, const weft_graph_io_t *gr, weft_tensor_t **outs)
{
    if (mkdir(o->outputs, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "weft-prof: --outputs %s: %s\n", o->outputs, strerror(errno));
        return 1;
    }
    for (size_t k = 0; k < gr->n_outputs; k++) {
        char path[4096], msg[512];
        snprintf(path, sizeof path, "%s/output_%zu.npy", o->outputs, k);
        if (weft_npy_save(path, outs[k], msg, sizeof msg) != WEFT_OK) {
            fprintf(stderr, "weft-prof: --outputs: %s\n", msg);
            return 1;
        }
    }
    return 0;
}

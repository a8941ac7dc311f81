/* weft-prof: profiles a graph stored in the JSON graph format
 * (docs/graph-format.md; usage and outputs: docs/profiling.md).
 *
 * Loads plugins (--plugin), then GRAPH.json (weft/graph_io.h), fills the
 * inputs with seeded random data (or .npy files given per input name),
 * compiles the graph with the chosen rewrite mode and thread count
 * (weft/function.h), runs it N times after warm-up calls and prints the
 * per-node profile report (weft/profile.h); optionally writes the report as
 * JSON or CSV, the Chrome trace of the profiled calls, a Graphviz dot with
 * timings and the last call's outputs as .npy. Exit status: 0 on success, 2
 * for a usage error, 1 for anything else (message on stderr). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prof.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A compile error, with what weft-prof offers against it. */
static void compile_hint(weft_status_t s)
{
    const char *m = weft_function_last_error(NULL);
    if (s == WEFT_EINVAL && strstr(m, "accept_inplace"))
        fprintf(stderr, "weft-prof: the graph holds in-place ops: --accept-inplace accepts "
                        "them\n");
    if (s == WEFT_EINCONSISTENT &&
        (strstr(m, "not declared mutable") || strstr(m, "protected variable")))
        fprintf(stderr, "weft-prof: an in-place op overwrites an input: store that input with "
                        "\"mutable\": true (docs/graph-format.md §3)\n");
}

static int compile_graph(const prof_opts_t *o, const weft_graph_io_t *gr, weft_function_t **f)
{
    weft_function_options_t fo = WEFT_FUNCTION_OPTIONS_INIT;
    fo.mode = o->mode;
    fo.n_include = o->n_include;
    fo.include = o->include;
    fo.n_exclude = o->n_exclude;
    fo.exclude = o->exclude;
    fo.threads = (int)o->threads;
    fo.input_mutable = gr->input_mutable;
    fo.accept_inplace = o->accept_inplace;
    fo.profile = true;
    fo.name = o->graph;
    weft_status_t s = weft_function_compile(gr->n_inputs, gr->inputs, gr->n_outputs, gr->outputs,
                                            gr->n_updates, gr->updates, &fo, f);
    if (s != WEFT_OK) {
        fprintf(stderr, "weft-prof: compiling %s: %s: %s\n", o->graph, weft_status_name(s),
                weft_function_last_error(NULL));
        compile_hint(s);
    }
    return s != WEFT_OK;
}

static void release_all(weft_tensor_t **t, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        weft_tensor_release(t[k]);
        t[k] = NULL;
    }
}

/* Keeps call k's LAST_CALL snapshot in the ring (when tracing). */
static int keep_call(const prof_opts_t *o, weft_function_t *f, prof_calls_t *c, uint64_t off)
{
    if (!o->trace) return 0;
    weft_profile_t *p = NULL;
    if (weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p) != WEFT_OK) {
        fprintf(stderr, "weft-prof: trace: %s\n", weft_function_last_error(f));
        return 1;
    }
    weft_profile_destroy(c->snaps[c->next]);
    c->snaps[c->next] = p;
    c->offset_ns[c->next] = off;
    c->next = (c->next + 1) % c->cap;
    c->n += c->n < c->cap;
    return 0;
}

/* n calls; the last call's outputs stay in outs. c: NULL for warm-up. */
static int call_n(const prof_opts_t *o, weft_function_t *f, const weft_graph_io_t *gr,
                  weft_tensor_t **vals, long n, prof_calls_t *c, weft_tensor_t **outs)
{
    weft_status_t s = WEFT_OK;
    uint64_t t0 = now_ns();
    for (long r = 0; r < n && s == WEFT_OK; r++) {
        release_all(outs, gr->n_outputs);
        uint64_t t = now_ns() - t0;
        s = weft_function_call(f, gr->n_inputs, vals, gr->n_outputs, outs);
        if (s == WEFT_OK && c && keep_call(o, f, c, t)) return 1;
    }
    if (s != WEFT_OK)
        fprintf(stderr, "weft-prof: call failed: %s: %s\n", weft_status_name(s),
                weft_function_last_error(f));
    return s != WEFT_OK;
}

/* Every requested output of the accumulated profile, one writer each. */
static int report(const prof_opts_t *o, weft_function_t *f, const prof_calls_t *c)
{
    weft_profile_t *p = NULL;
    weft_status_t s = weft_profile_create(f, WEFT_PROFILE_TOTAL, &p);
    if (s != WEFT_OK) {
        fprintf(stderr, "weft-prof: profile: %s: %s\n", weft_status_name(s),
                weft_function_last_error(f));
        return 1;
    }
    int rc = prof_write_text(o, p);
    if (!rc && o->json) rc = prof_write_json(o, p);
    if (!rc && o->csv) rc = prof_write_csv(o, p);
    if (!rc && o->trace) rc = prof_write_trace(o, c);
    if (!rc && o->dot) rc = prof_write_dot(o, f, p);
    weft_profile_destroy(p);
    return rc;
}

static int run_and_report(const prof_opts_t *o, const weft_graph_io_t *gr, weft_function_t *f,
                          weft_tensor_t **vals, weft_tensor_t **outs)
{
    size_t cap = o->trace_last ? (size_t)o->trace_last : (size_t)o->runs;
    prof_calls_t c = {calloc(cap, sizeof(weft_profile_t *)), calloc(cap, sizeof(uint64_t)), cap,
                      0, 0};
    int rc = !c.snaps || !c.offset_ns;
    if (!rc) rc = call_n(o, f, gr, vals, o->warmup, NULL, outs);
    if (!rc && weft_profile_reset(f) != WEFT_OK) rc = 1;
    if (!rc) rc = call_n(o, f, gr, vals, o->runs, &c, outs);
    if (!rc) rc = report(o, f, &c);
    if (!rc && o->outputs) rc = prof_write_outputs(o, gr, outs);
    for (size_t k = 0; c.snaps && k < cap; k++) weft_profile_destroy(c.snaps[k]);
    free(c.snaps);
    free(c.offset_ns);
    return rc;
}

static int profile_graph(const prof_opts_t *o, const weft_graph_io_t *gr)
{
    weft_tensor_t **vals = calloc(gr->n_inputs + 1, sizeof(*vals));
    weft_tensor_t **outs = calloc(gr->n_outputs + 1, sizeof(*outs));
    weft_function_t *f = NULL;
    int rc = !vals || !outs || prof_make_inputs(o, gr, vals);
    if (!rc) rc = compile_graph(o, gr, &f);
    if (!rc) rc = run_and_report(o, gr, f, vals, outs);
    weft_function_destroy(f);
    if (vals) release_all(vals, gr->n_inputs);
    if (outs) release_all(outs, gr->n_outputs);
    free(vals);
    free(outs);
    return rc;
}

int main(int argc, char **argv)
{
    prof_opts_t o;
    int rc = prof_parse_args(&o, argc, argv);
    if (rc == 0) rc = prof_load_plugins(&o);
    if (rc == 0) {
        weft_graph_t *g = NULL;
        weft_graph_io_t gr = {0};
        if (weft_graph_create(NULL, &g) != WEFT_OK) {
            rc = 1;
        } else if (weft_graph_io_load_file(g, o.graph, &gr) != WEFT_OK) {
            fprintf(stderr, "weft-prof: %s\n", weft_graph_last_error(g));
            rc = 1;
        } else {
            rc = profile_graph(&o, &gr);
        }
        weft_graph_io_clear(&gr);
        weft_graph_destroy(g);
    }
    prof_opts_free(&o);
    return rc < 0 ? 0 : rc; /* -1: --help or --version was printed */
}

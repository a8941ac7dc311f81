/* weft-prof: profiles a graph stored in the JSON graph format.
 *
 * Loads GRAPH.json (weft/graph_io.h), fills the inputs with seeded random
 * data (or .npy files given per input name), compiles the graph with the
 * chosen rewrite mode and thread count (weft/function.h), runs it N times
 * after warm-up calls and prints the per-node profile report
 * (weft/profile.h); optionally writes the Chrome trace of the last call and a
 * Graphviz dot of the compiled graph (weft_function_dot). Exit status: 0 on success, 2 for a
 * usage error, 1 for anything else (message on stderr). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

#define MAX_LIST 64

typedef struct opts {
    const char *graph, *mode, *trace, *dot;
    const char *include[MAX_LIST], *exclude[MAX_LIST];
    size_t n_include, n_exclude;
    const char *npy_name[MAX_LIST], *npy_path[MAX_LIST];
    size_t n_npy;
    long runs, warmup, threads, rows;
    uint64_t seed;
} opts_t;

static const char usage_text[] =
    "usage: weft-prof [options] GRAPH.json\n"
    "\n"
    "Loads a graph saved in weft's JSON graph format, fills its inputs, compiles it,\n"
    "calls it N times on T threads and prints the per-node profile (Function\n"
    "profiling block, Class / Ops / Apply tables, critical path).\n"
    "\n"
    "options:\n"
    "  -n, --runs N          profiled calls (default 10)\n"
    "  -w, --warmup N        calls before profiling starts, not counted (default 1)\n"
    "  -t, --threads T       pool workers (default 0: weft's default pool, one per core)\n"
    "  -m, --mode MODE       rewrite mode: fast_run (default), fast_compile or none\n"
    "  -i, --include NAME    also run rewrite or tag NAME (repeatable)\n"
    "  -x, --exclude NAME    never run rewrite or tag NAME (repeatable)\n"
    "  -s, --seed S          seed of the random inputs (default 42): floats uniform in\n"
    "                        [-1, 1), integers in [0, 10), booleans 0/1\n"
    "      --input NAME=FILE.npy\n"
    "                        take input NAME from a NumPy .npy file instead (repeatable;\n"
    "                        needed for inputs whose static shape has unknown lengths)\n"
    "  -r, --rows N          rows shown per table (default 20)\n"
    "      --trace FILE      write the last call as a Chrome trace (chrome://tracing,\n"
    "                        ui.perfetto.dev): one track per worker\n"
    "      --dot FILE        write a Graphviz dot of the compiled graph: nodes numbered\n"
    "                        as in the report, in-place nodes filled, DestroyHandler\n"
    "                        orderings dashed, outputs and updates\n"
    "  -h, --help            this text\n"
    "\n"
    "Updates stored in the graph are applied after every call, as in a training loop.\n"
    "Errors in the graph file name the line or the key at fault.\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "weft-prof: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(weft-prof --help lists the options)\n");
    return 2;
}

static bool parse_long(const char *s, long lo, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo) return false;
    *out = v;
    return true;
}

/* Options with a value: returns the value (argv[i+1] or after '='), or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *s, const char *l)
{
    size_t ll = strlen(l);
    if (strcmp(argv[*i], s) == 0 || strcmp(argv[*i], l) == 0)
        return *i + 1 < argc ? argv[++*i] : NULL;
    if (strncmp(argv[*i], l, ll) == 0 && argv[*i][ll] == '=') return argv[*i] + ll + 1;
    return NULL;
}

static int add_npy(opts_t *o, const char *v)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || !eq[1]) return usage_error("--input expects NAME=FILE.npy, got '%s'", v);
    if (o->n_npy == MAX_LIST) return usage_error("too many --input options%s", "");
    o->npy_name[o->n_npy] = strndup(v, (size_t)(eq - v));
    o->npy_path[o->n_npy++] = eq + 1;
    return 0;
}

static int add_list(const char **list, size_t *n, const char *v)
{
    if (*n == MAX_LIST) return usage_error("too many --include/--exclude options%s", "");
    list[(*n)++] = v;
    return 0;
}

/* One option at argv[*i]; 0 when handled, 2 on a usage error, 1 for --help. */
static int parse_one(opts_t *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) return 1;
    if ((v = opt_value(argc, argv, i, "-n", "--runs")))
        return parse_long(v, 1, &o->runs) ? 0 : usage_error("--runs expects N >= 1, got '%s'", v);
    if ((v = opt_value(argc, argv, i, "-w", "--warmup")))
        return parse_long(v, 0, &o->warmup) ? 0
                                            : usage_error("--warmup expects N >= 0, got '%s'", v);
    if ((v = opt_value(argc, argv, i, "-t", "--threads")))
        return parse_long(v, 0, &o->threads) ? 0
                                             : usage_error("--threads expects T >= 0, got '%s'", v);
    if ((v = opt_value(argc, argv, i, "-r", "--rows")))
        return parse_long(v, 1, &o->rows) ? 0 : usage_error("--rows expects N >= 1, got '%s'", v);
    if ((v = opt_value(argc, argv, i, "-s", "--seed"))) {
        long s;
        if (!parse_long(v, 0, &s)) return usage_error("--seed expects S >= 0, got '%s'", v);
        o->seed = (uint64_t)s;
        return 0;
    }
    if ((v = opt_value(argc, argv, i, "-m", "--mode"))) return (o->mode = v), 0;
    if ((v = opt_value(argc, argv, i, "-i", "--include")))
        return add_list(o->include, &o->n_include, v);
    if ((v = opt_value(argc, argv, i, "-x", "--exclude")))
        return add_list(o->exclude, &o->n_exclude, v);
    if ((v = opt_value(argc, argv, i, "--input", "--input"))) return add_npy(o, v);
    if ((v = opt_value(argc, argv, i, "--trace", "--trace"))) return (o->trace = v), 0;
    if ((v = opt_value(argc, argv, i, "--dot", "--dot"))) return (o->dot = v), 0;
    if (a[0] == '-' && a[1]) return usage_error("unknown option or missing value: '%s'", a);
    if (o->graph) return usage_error("more than one graph file ('%s')", a);
    o->graph = a;
    return 0;
}

static int parse_args(opts_t *o, int argc, char **argv)
{
    *o = (opts_t){.mode = "fast_run", .runs = 10, .warmup = 1, .rows = 20, .seed = 42};
    for (int i = 1; i < argc; i++) {
        int r = parse_one(o, argc, argv, &i);
        if (r == 1) {
            fputs(usage_text, stdout);
            return -1;
        }
        if (r) return r;
    }
    if (!o->graph) return usage_error("no graph file given%s", "");
    return 0;
}

/* ---- inputs ------------------------------------------------------------------ */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Seeded random tensor of v's static type; 1 with a message if a length is
 * unknown. */
static int random_input(const weft_var_t *v, uint64_t seed, weft_tensor_t **out)
{
    const weft_type_t *t = weft_var_type(v);
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < weft_type_ndim(t); d++) {
        shape[d] = weft_type_dim(t, d);
        if (shape[d] == WEFT_DIM_UNKNOWN) {
            fprintf(stderr,
                    "weft-prof: input '%s' has an unknown length on axis %d: give "
                    "--input %s=FILE.npy\n",
                    weft_var_name(v) ? weft_var_name(v) : "?", d,
                    weft_var_name(v) ? weft_var_name(v) : "NAME");
            return 1;
        }
    }
    weft_dtype_t dt = weft_type_dtype(t);
    weft_status_t s = dt == WEFT_FLOAT32 || dt == WEFT_FLOAT64
                          ? weft_verify_grad_random(dt, weft_type_ndim(t), shape, -1, 1, seed, out)
                          : weft_tensor_zeros(dt, weft_type_ndim(t), shape, out);
    if (s != WEFT_OK) {
        fprintf(stderr, "weft-prof: cannot make input data: %s\n", weft_tensor_last_error());
        return 1;
    }
    if (dt == WEFT_FLOAT32 || dt == WEFT_FLOAT64) return 0;
    uint64_t st = seed;
    for (size_t i = 0; i < weft_tensor_size(*out); i++) {
        int64_t idx[WEFT_MAX_NDIM];
        size_t r = i;
        for (int d = weft_type_ndim(t) - 1; d >= 0; d--) {
            idx[d] = (int64_t)(r % (size_t)shape[d]);
            r /= (size_t)shape[d];
        }
        weft_tensor_set(*out, idx, (double)(splitmix(&st) % (dt == WEFT_BOOL ? 2 : 10)));
    }
    return 0;
}

static int make_inputs(const opts_t *o, const weft_graph_io_t *gr, weft_tensor_t **vals)
{
    for (size_t n = 0; n < o->n_npy; n++) {
        bool found = false;
        for (size_t k = 0; k < gr->n_inputs; k++)
            found = found || (weft_var_name(gr->inputs[k]) &&
                              strcmp(weft_var_name(gr->inputs[k]), o->npy_name[n]) == 0);
        if (!found) {
            fprintf(stderr, "weft-prof: --input %s: the graph has no input of that name\n",
                    o->npy_name[n]);
            return 1;
        }
    }
    for (size_t k = 0; k < gr->n_inputs; k++) {
        const char *name = weft_var_name(gr->inputs[k]), *path = NULL;
        for (size_t n = 0; name && n < o->n_npy; n++)
            if (strcmp(name, o->npy_name[n]) == 0) path = o->npy_path[n];
        if (!path && random_input(gr->inputs[k], o->seed + 1000003u * k, &vals[k])) return 1;
        char msg[512];
        if (path && weft_npy_load(path, &vals[k], msg, sizeof(msg)) != WEFT_OK) {
            fprintf(stderr, "weft-prof: --input %s: %s\n", name, msg);
            return 1;
        }
    }
    return 0;
}

/* ---- dot of the compiled graph ------------------------------------------------------ */

static int write_dot(const opts_t *o, const weft_function_t *f)
{
    FILE *out = fopen(o->dot, "w");
    weft_status_t s = out ? weft_function_dot(f, out) : WEFT_EIO;
    if (out && fclose(out) != 0) s = WEFT_EIO;
    if (s != WEFT_OK)
        fprintf(stderr, "weft-prof: --dot %s: %s %s\n", o->dot, weft_status_name(s),
                out ? weft_function_last_error(f) : "cannot open the file");
    return s != WEFT_OK;
}

/* ---- compile, run, report ------------------------------------------------------------ */

static int compile_graph(const opts_t *o, const weft_graph_io_t *gr, weft_function_t **f)
{
    weft_function_options_t fo = WEFT_FUNCTION_OPTIONS_INIT;
    fo.mode = o->mode;
    fo.n_include = o->n_include;
    fo.include = o->include;
    fo.n_exclude = o->n_exclude;
    fo.exclude = o->exclude;
    fo.threads = (int)o->threads;
    fo.input_mutable = gr->input_mutable;
    fo.profile = true;
    fo.name = o->graph;
    weft_status_t s = weft_function_compile(gr->n_inputs, gr->inputs, gr->n_outputs, gr->outputs,
                                            gr->n_updates, gr->updates, &fo, f);
    if (s != WEFT_OK)
        fprintf(stderr, "weft-prof: compiling %s: %s: %s\n", o->graph, weft_status_name(s),
                weft_function_last_error(NULL));
    return s != WEFT_OK;
}

static int call_n(weft_function_t *f, const weft_graph_io_t *gr, weft_tensor_t **vals, long n)
{
    weft_tensor_t **outs = calloc(gr->n_outputs, sizeof(*outs));
    if (!outs) return 1;
    weft_status_t s = WEFT_OK;
    for (long r = 0; r < n && s == WEFT_OK; r++) {
        s = weft_function_call(f, gr->n_inputs, vals, gr->n_outputs, outs);
        for (size_t k = 0; k < gr->n_outputs; k++) {
            weft_tensor_release(outs[k]);
            outs[k] = NULL;
        }
    }
    free(outs);
    if (s != WEFT_OK)
        fprintf(stderr, "weft-prof: call failed: %s: %s\n", weft_status_name(s),
                weft_function_last_error(f));
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
        if (!r->in_place) continue;
        if (n++ < rows)
            fprintf(out, "  %4u  %11llu  %3u  %s\n", r->index,
                    (unsigned long long)r->inplace_bytes, r->inplace_orderings, r->name);
        bytes += r->inplace_bytes;
        with_ord += r->inplace_orderings > 0;
        edges += r->inplace_orderings;
    }
    if (n > rows) fprintf(out, "   ... (%zu more in-place nodes)\n", n - rows);
    fprintf(out, "  %zu in-place nodes save %llu bytes; %zu of them add %zu orderings\n\n", n,
            (unsigned long long)bytes, with_ord, edges);
}

static int report(const opts_t *o, weft_function_t *f)
{
    weft_profile_t *p = NULL;
    weft_status_t s = weft_profile_create(f, WEFT_PROFILE_TOTAL, &p);
    if (s == WEFT_OK) s = weft_profile_print(p, (size_t)o->rows, stdout);
    if (s == WEFT_OK) print_inplace(p, (size_t)o->rows, stdout);
    if (s == WEFT_OK && o->trace) {
        FILE *tf = fopen(o->trace, "w");
        s = tf ? weft_profile_write_trace(p, tf) : WEFT_EIO;
        if (tf && fclose(tf) != 0) s = WEFT_EIO;
        if (s != WEFT_OK) fprintf(stderr, "weft-prof: --trace %s: cannot write\n", o->trace);
    }
    if (s != WEFT_OK && s != WEFT_EIO)
        fprintf(stderr, "weft-prof: profile: %s\n", weft_status_name(s));
    weft_profile_destroy(p);
    return s != WEFT_OK;
}

static int profile_graph(const opts_t *o, const weft_graph_io_t *gr)
{
    weft_tensor_t **vals = calloc(gr->n_inputs + 1, sizeof(*vals));
    weft_function_t *f = NULL;
    int rc = !vals || make_inputs(o, gr, vals);
    if (!rc) rc = compile_graph(o, gr, &f);
    if (!rc && o->dot) rc = write_dot(o, f);
    if (!rc) rc = call_n(f, gr, vals, o->warmup);
    if (!rc && weft_profile_reset(f) != WEFT_OK) rc = 1;
    if (!rc) rc = call_n(f, gr, vals, o->runs);
    if (!rc) rc = report(o, f);
    weft_function_destroy(f);
    for (size_t k = 0; vals && k < gr->n_inputs; k++) weft_tensor_release(vals[k]);
    free(vals);
    return rc;
}

int main(int argc, char **argv)
{
    opts_t o;
    int rc = parse_args(&o, argc, argv);
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
    for (size_t n = 0; n < o.n_npy; n++) free((void *)o.npy_name[n]);
    return rc < 0 ? 0 : rc; /* -1: --help was printed */
}

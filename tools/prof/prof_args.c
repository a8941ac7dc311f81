/* weft-prof's command line (prof.h): options with a value take it as the
 * next argument or after '='; repeatable ones collect up to PROF_MAX_LIST. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"

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
    "      --trace-last N    the trace keeps only the last N profiled calls (default: all)\n"
    "      --dot FILE        write a Graphviz dot of the compiled graph after the runs:\n"
    "                        nodes numbered as in the report with their output types and\n"
    "                        time per call, coloured by time (white to red), in-place\n"
    "                        nodes double-bordered, DestroyHandler orderings dashed\n"
    "      --json FILE       write the report as JSON (docs/weft-profile.schema.json)\n"
    "      --csv FILE        write the Apply table as CSV, one row per node\n"
    "      --outputs DIR     write the outputs of the last call as DIR/output_K.npy\n"
    "      --plugin LIB.so   load a shared library that registers op classes (its\n"
    "                        weft_plugin_init, weft/plugin.h) before the graph (repeatable)\n"
    "      --accept-inplace  accept in-place ops stored in the graph (they may overwrite\n"
    "                        only inputs stored with \"mutable\": true, or updated ones)\n"
    "  -V, --version         print the version\n"
    "  -h, --help            this text\n"
    "\n"
    "Updates stored in the graph are applied after every call, as in a training loop.\n"
    "Errors in the graph file name the key at fault (\"nodes[6].props: ...\").\n";

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

static int add_npy(prof_opts_t *o, const char *v)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || !eq[1]) return usage_error("--input expects NAME=FILE.npy, got '%s'", v);
    if (o->n_npy == PROF_MAX_LIST) return usage_error("too many --input options%s", "");
    o->npy_name[o->n_npy] = strndup(v, (size_t)(eq - v));
    o->npy_path[o->n_npy++] = eq + 1;
    return 0;
}

static int add_list(const char **list, size_t *n, const char *v)
{
    if (*n == PROF_MAX_LIST) return usage_error("too many --include/--exclude/--plugin options%s", "");
    list[(*n)++] = v;
    return 0;
}

static int parse_more(prof_opts_t *o, int argc, char **argv, int *i);

/* One option at argv[*i]; 0 when handled, 2 on a usage error, 1 for --help,
 * 3 for --version. */
static int parse_one(prof_opts_t *o, int argc, char **argv, int *i)
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
    return parse_more(o, argc, argv, i);
}

/* The data and plugin options, else the graph file; 0 when handled, 2 on a
 * usage error, 3 for --version. */
static int parse_more(prof_opts_t *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) return 3;
    if (strcmp(a, "--accept-inplace") == 0) return (o->accept_inplace = true), 0;
    if ((v = opt_value(argc, argv, i, "--json", "--json"))) return (o->json = v), 0;
    if ((v = opt_value(argc, argv, i, "--csv", "--csv"))) return (o->csv = v), 0;
    if ((v = opt_value(argc, argv, i, "--outputs", "--outputs"))) return (o->outputs = v), 0;
    if ((v = opt_value(argc, argv, i, "--plugin", "--plugin")))
        return add_list(o->plugins, &o->n_plugins, v);
    if ((v = opt_value(argc, argv, i, "--trace-last", "--trace-last")))
        return parse_long(v, 1, &o->trace_last)
                   ? 0
                   : usage_error("--trace-last expects N >= 1, got '%s'", v);
    if (a[0] == '-' && a[1]) return usage_error("unknown option or missing value: '%s'", a);
    if (o->graph) return usage_error("more than one graph file ('%s')", a);
    o->graph = a;
    return 0;
}

int prof_parse_args(prof_opts_t *o, int argc, char **argv)
{
    *o = (prof_opts_t){.mode = "fast_run", .runs = 10, .warmup = 1, .rows = 20, .seed = 42};
    for (int i = 1; i < argc; i++) {
        int r = parse_one(o, argc, argv, &i);
        if (r == 1 || r == 3) {
            fputs(r == 1 ? usage_text : "weft-prof " WEFT_PROF_VERSION "\n", stdout);
            return -1;
        }
        if (r) return r;
    }
    if (!o->graph) return usage_error("no graph file given%s", "");
    return 0;
}


void prof_opts_free(prof_opts_t *o)
{
    for (size_t n = 0; n < o->n_npy; n++) free((void *)o->npy_name[n]);
}

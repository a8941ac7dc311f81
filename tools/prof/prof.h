/* weft-prof's parts (tools/prof): options (prof_args.c), plugins
 * (prof_plugin.c), input data (prof_inputs.c), the report writers, one per
 * output (prof_report.c), and the flow (weft_prof.c). Every function returns
 * 0 on success, 1 after printing a message to stderr (2: usage error). */
#ifndef WEFT_PROF_H
#define WEFT_PROF_H

#include <stdint.h>

#include "weft/weft.h"

#define PROF_MAX_LIST 64

typedef struct prof_opts {
    const char *graph, *mode, *trace, *dot, *json, *csv, *outputs;
    const char *include[PROF_MAX_LIST], *exclude[PROF_MAX_LIST], *plugins[PROF_MAX_LIST];
    size_t n_include, n_exclude, n_plugins;
    const char *npy_name[PROF_MAX_LIST], *npy_path[PROF_MAX_LIST];
    size_t n_npy;
    long runs, warmup, threads, rows, trace_last; /* trace_last 0: every profiled call */
    bool accept_inplace;
    uint64_t seed;
} prof_opts_t;

/* The profiled calls' LAST_CALL snapshots kept for the trace (the last
 * trace_last of them, a ring) and each call's start from the first's. */
typedef struct prof_calls {
    weft_profile_t **snaps;
    uint64_t *offset_ns;
    size_t cap, n, next; /* ring: n kept, next slot to write */
} prof_calls_t;

/* 0: run; -1: --help or --version printed; 2: usage error (printed). */
int prof_parse_args(prof_opts_t *o, int argc, char **argv);
void prof_opts_free(prof_opts_t *o);

int prof_load_plugins(const prof_opts_t *o);
int prof_make_inputs(const prof_opts_t *o, const weft_graph_io_t *gr, weft_tensor_t **vals);

int prof_write_text(const prof_opts_t *o, const weft_profile_t *p);
int prof_write_json(const prof_opts_t *o, const weft_profile_t *p);
int prof_write_csv(const prof_opts_t *o, const weft_profile_t *p);
int prof_write_trace(const prof_opts_t *o, const prof_calls_t *calls);
int prof_write_dot(const prof_opts_t *o, const weft_function_t *f, const weft_profile_t *p);
int prof_write_outputs(const prof_opts_t *o, const weft_graph_io_t *gr, weft_tensor_t **outs);

#endif /* WEFT_PROF_H */

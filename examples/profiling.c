/* Profiling and tracing a compiled function from the library API
 * (weft/profile.h).
 *
 * A function compiled with options.profile records every call: per node its
 * time, calls and worker, grouped by op and op class, plus what only a
 * parallel run tells (achieved parallelism, the critical path, idle time per
 * worker, peak memory). This program
 *   1. compiles a small two-branch graph with profiling on,
 *   2. calls it twice to warm up, discards that (weft_profile_reset), calls
 *      it five more times,
 *   3. writes the text report (the PyTensor-style "Function profiling"
 *      block, then the Class, Ops and Apply tables) to profile.txt and the
 *      same as data to profile.json (docs/profiling.md has the format),
 *   4. writes the last call as a Chrome trace to trace.json: open it in
 *      chrome://tracing or https://ui.perfetto.dev, one track per worker.
 * The files go to the folder given as the first argument (default: the
 * current folder). What it prints is what does not depend on timings: the
 * call and node counts and the op classes by name (its test then reads the
 * files back with check_profiling.py).
 *
 * Without changing a program: WEFT_PROFILE=1 ./app prints every function's
 * report to stderr when it is destroyed; the weft-prof tool profiles a graph
 * saved as JSON (weft-prof --help).
 *
 * Build: see examples/CMakeLists.txt. Run: ./example_profiling [DIR] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/weft.h>

/* Stops at the first failing call, naming it. */
#define CHECK(call)                                                                          \
    do {                                                                                     \
        weft_status_t st_ = (call);                                                          \
        if (st_ != WEFT_OK) {                                                                \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,             \
                    weft_status_name(st_));                                                  \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* out = [sum(tanh(x W1)), sum(relu(x W2))]: two independent branches, so the
 * trace shows nodes side by side on the two workers. */
static weft_function_t *compile_profiled(void)
{
    weft_graph_t *g;
    CHECK(weft_graph_create(NULL, &g));
    const weft_type_t *mat;
    CHECK(weft_type_tensor(g, WEFT_FLOAT64, 2, (int64_t[]){256, 256}, &mat));
    weft_var_t *in[3] = {weft_var_create(g, mat, "x"), weft_var_create(g, mat, "W1"),
                         weft_var_create(g, mat, "W2")};
    weft_var_t *out[2] = {
        weft_sum(g, weft_tanh(g, weft_dot(g, in[0], in[1])), 0, NULL, false),
        weft_sum(g, weft_relu(g, weft_dot(g, in[0], in[2])), 0, NULL, false)};

    weft_function_options_t opts = WEFT_FUNCTION_OPTIONS_INIT;
    opts.profile = true; /* record; costs two clock reads per node */
    opts.threads = 2;    /* a private pool of two workers */
    opts.name = "two_branches";
    weft_function_t *f;
    if (weft_function_compile(3, in, 2, out, 0, NULL, &opts, &f) != WEFT_OK) {
        fprintf(stderr, "compile: %s\n", weft_function_last_error(NULL));
        exit(1);
    }
    weft_graph_destroy(g);
    return f;
}

static void call_n(weft_function_t *f, weft_tensor_t *const in[3], int n)
{
    for (int k = 0; k < n; k++) {
        weft_tensor_t *out[2] = {NULL, NULL};
        CHECK(weft_function_call(f, 3, in, 2, out));
        weft_tensor_release(out[0]);
        weft_tensor_release(out[1]);
    }
}

static FILE *open_in(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    if (!fp) {
        perror(path);
        exit(1);
    }
    return fp;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The op classes of the Class table, sorted by name (the table itself is
 * sorted by time, which varies from run to run). */
static void print_classes(const weft_profile_t *p)
{
    const char *names[64];
    size_t n = p->n_classes < 64 ? p->n_classes : 64;
    for (size_t i = 0; i < n; i++) names[i] = p->classes[i].name;
    qsort(names, n, sizeof *names, by_name);
    printf("op classes:");
    for (size_t i = 0; i < n; i++) printf(" %s", names[i]);
    printf("\n");
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    weft_function_t *f = compile_profiled();
    weft_tensor_t *in[3];
    for (int k = 0; k < 3; k++)
        CHECK(weft_tensor_full(WEFT_FLOAT64, 2, (int64_t[]){256, 256}, 0.01 * (k + 1), &in[k]));

    call_n(f, in, 2); /* warm-up: buffers, caches */
    CHECK(weft_profile_reset(f));
    call_n(f, in, 5);

    weft_profile_t *total, *last;
    CHECK(weft_profile_create(f, WEFT_PROFILE_TOTAL, &total));
    CHECK(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &last));
    printf("%s: %llu calls profiled, %zu nodes per call\n", total->function,
           (unsigned long long)total->calls, total->n_applies);
    print_classes(total);

    FILE *report = open_in(dir, "profile.txt"), *json = open_in(dir, "profile.json");
    FILE *trace = open_in(dir, "trace.json");
    CHECK(weft_profile_print(total, 0, report)); /* 0: the first 20 rows of each table */
    CHECK(weft_profile_write_json(total, json));
    CHECK(weft_profile_write_trace(last, trace));

    fclose(report);
    fclose(json);
    fclose(trace);
    weft_profile_destroy(last);
    weft_profile_destroy(total);
    for (int k = 0; k < 3; k++) weft_tensor_release(in[k]);
    CHECK(weft_function_destroy(f));
    return 0;
}

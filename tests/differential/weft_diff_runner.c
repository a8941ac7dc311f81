/* weft_diff_runner: the C half of the NumPy differential test
 * (docs/testing.md). Writes cases first..first+cases-1 of a seed to stdout
 * for check_numpy.py, which starts it:
 *
 *   weft_diff_runner --seed S --cases N [--first K] [--print-functions]
 *
 * --print-functions prints every compiled function to stderr (reproducers).
 * Stream: "#runner {json}\n", then one record per case (diff.h), then
 * "#end\n". Exit status 0 unless the stream could not be written or the
 * arguments are wrong. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

static bool parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-') return false;
    *out = v;
    return true;
}

static int usage(void)
{
    fprintf(stderr, "usage: weft_diff_runner --seed S --cases N [--first K] [--print-functions]\n");
    return 2;
}

static bool make_pools(diff_env_t *env)
{
    weft_pool_options_t po = WEFT_POOL_OPTIONS_INIT;
    po.pin = WEFT_PIN_NONE; /* the CI machine is shared: never pin */
    for (int i = 0; i < 2; i++)
        if (weft_pool_create(i + 1, &po, &env->pools[i]) != WEFT_OK) return false;
    return true;
}

/* The fast_math tag when the rewrite database knows it: a function excluding
 * it compiles. */
static const char *probe_fast_math_tag(weft_pool_t *pool)
{
    const char *tag = getenv("WEFT_DIFF_FAST_MATH_TAG");
    if (!tag) tag = "fast_math";
    weft_graph_t *g;
    const weft_type_t *t;
    weft_var_t *x, *y = NULL;
    weft_function_t *f = NULL;
    weft_function_options_t opts = WEFT_FUNCTION_OPTIONS_INIT;
    opts.pool = pool;
    opts.n_exclude = 1;
    opts.exclude = &tag;
    if (weft_graph_create(NULL, &g) != WEFT_OK) return NULL;
    if (weft_type_tensor(g, WEFT_FLOAT64, 0, NULL, &t) == WEFT_OK &&
        (x = weft_var_create(g, t, "x")) != NULL && (y = weft_exp(g, x)) != NULL)
        weft_function_compile(1, &x, 1, &y, 0, NULL, &opts, &f);
    bool known = f != NULL;
    weft_function_destroy(f);
    weft_graph_destroy(g);
    return known ? tag : NULL;
}

static void header(const diff_env_t *env, uint64_t seed, uint64_t first, uint64_t cases)
{
    printf("#runner {\"seed\":%llu,\"first\":%llu,\"cases\":%llu,\"fast_math_tag\":",
           (unsigned long long)seed, (unsigned long long)first, (unsigned long long)cases);
    if (env->fast_math_tag) printf("\"%s\",\"skips\":[", env->fast_math_tag);
    else printf("null,\"skips\":[");
    const char *sep = "";
    if (DIFF_SKIP_ITEM2_NULL_EMPTY) {
        printf("\"item 2: empty inputs never get a NULL data pointer\"");
        sep = ",";
    }
    if (DIFF_SKIP_ITEM7_MUTABLE_BROADCAST)
        printf("%s\"item 7: stride-0 inputs are never declared mutable\"", sep);
    printf("]}\n");
}

int main(int argc, char **argv)
{
    uint64_t seed = 1, cases = 0, first = 0;
    bool have_seed = false, have_cases = false, print_functions = false;
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (!strcmp(argv[i], "--print-functions")) print_functions = true;
        else if (!strcmp(argv[i], "--seed") && more) have_seed = parse_u64(argv[++i], &seed);
        else if (!strcmp(argv[i], "--cases") && more) have_cases = parse_u64(argv[++i], &cases);
        else if (!strcmp(argv[i], "--first") && more) {
            if (!parse_u64(argv[++i], &first)) return usage();
        } else return usage();
    }
    if (!have_seed || !have_cases) return usage();
    static char buf[1 << 16];
    setvbuf(stdout, buf, _IOFBF, sizeof buf);
    diff_env_t env = { .out = stdout, .print_functions = print_functions };
    if (!make_pools(&env)) {
        fprintf(stderr, "weft_diff_runner: cannot create the pools\n");
        return 1;
    }
    env.fast_math_tag = probe_fast_math_tag(env.pools[0]);
    header(&env, seed, first, cases);
    bool ok = true;
    for (uint64_t k = first; k < first + cases && ok; k++) ok = diff_run_case(&env, seed, k);
    if (ok) ok = fputs("#end\n", stdout) >= 0 && fflush(stdout) == 0;
    for (int i = 0; i < 2; i++) weft_pool_destroy(env.pools[i]);
    if (!ok) fprintf(stderr, "weft_diff_runner: cannot write the stream\n");
    return ok ? 0 : 1;
}

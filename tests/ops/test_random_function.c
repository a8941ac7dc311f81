/* The random ops in compiled functions (weft/random.h, docs/random.md):
 * the same bits at 1, 2 and 4 workers and as the sequential evaluator; a
 * shared key updated by each call (new samples) and restarted from its
 * seed (the same samples again); merging of equal draws, no constant
 * folding; the JSON round trip of a graph with random ops and a key
 * update. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"
#include "weft/function.h"
#include "weft/graph_io.h"
#include "weft/shared.h"

#define N_OUT 5

static weft_var_t *f64(weft_graph_t *g, double v)
{
    return weft_constant_scalar(g, WEFT_FLOAT64, v);
}

/* Five chained draws from key, large enough to split over the pool:
 * uniform float64 [1000, 300], normal float32 [300000], integers
 * [300000], categorical with a p per row [1000, 300], bernoulli [300000];
 * *next: the last new key. */
static void build_draws(weft_graph_t *g, weft_var_t *key, weft_var_t **outs, weft_var_t **next)
{
    const int64_t mat[2] = {1000, 300}, vec = 300000, pshape[2] = {1000, 1}, pcat[3] = {1000, 1, 3};
    weft_var_t *k[N_OUT + 1] = {key};
    weft_tensor_t *lo = ck_random(WEFT_FLOAT64, 2, pshape, -5, 5, 1);
    weft_var_t *low = weft_constant_create(g, weft_var_type(ck_var(g, WEFT_FLOAT64, 2, pshape)),
                                           weft_tensor_data(lo), 1000 * sizeof(double));
    double p[3000];
    for (int r = 0; r < 1000; r++) {
        p[3 * r] = 0.25, p[3 * r + 1] = 0.25 + (r % 2) * 0.25, p[3 * r + 2] = 0.5 - (r % 2) * 0.25;
    }
    weft_var_t *pv = weft_constant_create(g, weft_var_type(ck_var(g, WEFT_FLOAT64, 3, pcat)), p,
                                          sizeof p);
    outs[0] = weft_random_uniform(g, k[0], low, f64(g, 10), WEFT_FLOAT64, 2, mat, &k[1]);
    outs[1] = weft_random_normal(g, k[1], f64(g, 0), f64(g, 1), WEFT_FLOAT32, 1, &vec, &k[2]);
    outs[2] = weft_random_integers(g, k[2], weft_constant_scalar(g, WEFT_INT32, -7),
                                   weft_constant_scalar(g, WEFT_INT64, 1000), 1, &vec, &k[3]);
    outs[3] = weft_random_categorical(g, k[3], pv, 2, mat, &k[4]);
    outs[4] = weft_random_bernoulli(g, k[4], f64(g, 0.7), 1, &vec, &k[5]);
    *next = k[5];
    if (!*next) print_error("build: %s\n", weft_graph_error_message(g));
    for (int i = 0; i < N_OUT; i++) assert_non_null(outs[i]);
    weft_tensor_release(lo);
}

static weft_function_t *compile(size_t n_out, weft_var_t *const *outs, size_t n_up,
                                const weft_update_t *up, int threads, const char *mode)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = threads;
    o.mode = mode;
    weft_function_t *f = NULL;
    weft_status_t st = weft_function_compile(0, NULL, n_out, outs, n_up, up, &o, &f);
    if (st != WEFT_OK) print_error("compile: %s\n", weft_function_last_error(NULL));
    assert_int_equal(st, WEFT_OK);
    return f;
}

static void call(weft_function_t *f, size_t n_out, weft_tensor_t **res)
{
    for (size_t i = 0; i < n_out; i++) res[i] = NULL;
    weft_status_t st = weft_function_call(f, 0, NULL, n_out, res);
    if (st != WEFT_OK) print_error("call: %s\n", weft_function_last_error(f));
    assert_int_equal(st, WEFT_OK);
}

static bool same_bits(const weft_tensor_t *a, const weft_tensor_t *b)
{
    size_t n = weft_tensor_size(a) * weft_dtype_size(weft_tensor_dtype(a));
    return weft_tensor_same_shape(a, b) && weft_tensor_dtype(a) == weft_tensor_dtype(b) &&
           memcmp(weft_tensor_data(a), weft_tensor_data(b), n) == 0;
}

static void release_all(size_t n, weft_tensor_t **t)
{
    for (size_t i = 0; i < n; i++) weft_tensor_release(t[i]);
}

static void test_same_bits_at_any_worker_count(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *outs[N_OUT + 1];
    build_draws(g, weft_random_key(g, 77), outs, &outs[N_OUT]);
    weft_tensor_t *ref[N_OUT + 1];
    assert_int_equal(weft_eval(g, 0, NULL, NULL, N_OUT + 1, outs, ref), WEFT_OK);
    const int threads[3] = {1, 2, 4};
    for (int t = 0; t < 3; t++) {
        weft_function_t *f = compile(N_OUT + 1, outs, 0, NULL, threads[t], NULL);
        for (int rep = 0; rep < 2; rep++) {
            weft_tensor_t *got[N_OUT + 1];
            call(f, N_OUT + 1, got);
            for (int i = 0; i <= N_OUT; i++) assert_true(same_bits(got[i], ref[i]));
            release_all(N_OUT + 1, got);
        }
        weft_function_destroy(f);
    }
    const int64_t *nk = weft_tensor_data(ref[N_OUT]);
    assert_true(nk[0] == 77 && nk[1] == N_OUT); /* five draws: stream 0 -> 5 */
    release_all(N_OUT + 1, ref);
    weft_graph_destroy(g);
}

/* docs/random.md §8, the example: the key is a shared variable updated by
 * the function; each call draws anew, a restart from the seed repeats. */
static void test_shared_key_update_and_restart(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_tensor_t *k0 = NULL;
    assert_int_equal(weft_random_key_tensor(42, &k0), WEFT_OK);
    weft_var_t *rng = weft_shared(g, k0, "rng"), *rng1 = NULL, *rng2 = NULL;
    const int64_t shape[1] = {1000};
    weft_var_t *x = weft_random_normal(g, rng, f64(g, 0), f64(g, 1), WEFT_FLOAT64, 1, shape,
                                       &rng1);
    weft_var_t *y = weft_random_uniform(g, rng1, f64(g, 0), f64(g, 1), WEFT_FLOAT64, 1, shape,
                                        &rng2);
    weft_var_t *outs[2] = {x, y};
    weft_update_t up = {rng, rng2};
    weft_function_t *f = compile(2, outs, 1, &up, 2, NULL);
    weft_tensor_t *a[2], *b[2], *c[2], *kv = NULL;
    call(f, 2, a);
    call(f, 2, b);
    assert_false(same_bits(a[0], b[0]));
    assert_false(same_bits(a[1], b[1]));
    assert_int_equal(weft_shared_get(rng, &kv), WEFT_OK); /* two draws per call, two calls */
    assert_true(((const int64_t *)weft_tensor_data(kv))[0] == 42);
    assert_true(((const int64_t *)weft_tensor_data(kv))[1] == 4);
    weft_tensor_release(kv);
    assert_int_equal(weft_shared_set(rng, k0), WEFT_OK); /* restart from the seed */
    call(f, 2, c);
    assert_true(same_bits(a[0], c[0]) && same_bits(a[1], c[1]));
    release_all(2, a);
    release_all(2, b);
    release_all(2, c);
    weft_tensor_release(k0);
    weft_function_destroy(f);
    weft_graph_destroy(g);
}

/* Nodes of op in f's printed form ("3: Op{...}(...)" per node). */
static int count_nodes(weft_function_t *f, const char *op)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    assert_int_equal(weft_function_print(f, m), WEFT_OK);
    fclose(m);
    int n = 0;
    for (const char *s = buf; (s = strstr(s, op)) != NULL; s += strlen(op)) n++;
    free(buf);
    return n;
}

/* Two equal draws on one constant key are one sample (merged); a draw on
 * the chained key is another; fast_run folds none of them into a constant. */
static void test_merge_equal_draws_never_fold(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    const int64_t n = 64;
    weft_var_t *key = weft_random_key(g, 9), *k1 = NULL, *outs[3];
    outs[0] = weft_random_uniform(g, key, f64(g, 0), f64(g, 1), WEFT_FLOAT64, 1, &n, &k1);
    outs[1] = weft_random_uniform(g, key, f64(g, 0), f64(g, 1), WEFT_FLOAT64, 1, &n, NULL);
    outs[2] = weft_random_uniform(g, k1, f64(g, 0), f64(g, 1), WEFT_FLOAT64, 1, &n, NULL);
    weft_function_t *f = compile(3, outs, 0, NULL, 1, "fast_run");
    assert_int_equal(count_nodes(f, ": RandomUniform{"), 2);
    weft_tensor_t *r[3];
    call(f, 3, r);
    assert_true(same_bits(r[0], r[1]));
    assert_false(same_bits(r[0], r[2]));
    release_all(3, r);
    weft_function_destroy(f);
    weft_graph_destroy(g);
}

/* Saved with its shared key and update, loaded, compiled: the same draws;
 * the props are {"dtype", "shape"}. */
static void test_json_round_trip(void **state)
{
    (void)state;
    weft_graph_t *g = NULL, *h = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    assert_int_equal(weft_graph_create(NULL, &h), WEFT_OK);
    weft_tensor_t *k0 = NULL;
    assert_int_equal(weft_random_key_tensor(5, &k0), WEFT_OK);
    weft_var_t *rng = weft_shared(g, k0, "rng"), *outs[N_OUT + 1];
    build_draws(g, rng, outs, &outs[N_OUT]);
    weft_update_t up = {rng, outs[N_OUT]};
    weft_graph_io_t io = {0, NULL, NULL, N_OUT, outs, 1, &up};
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    assert_non_null(strstr(text, "\"op\":\"RandomNormal\",\"props\":{\"dtype\":\"float32\","
                                 "\"shape\":[300000]}"));
    assert_non_null(strstr(text, "\"op\":\"RandomBernoulli\",\"props\":{\"dtype\":\"bool\","
                                 "\"shape\":[300000]}"));
    weft_graph_io_t back;
    weft_status_t st = weft_graph_io_load(h, text, strlen(text), "random.json", &back);
    if (st != WEFT_OK) print_error("load: %s\n", weft_graph_last_error(h));
    assert_int_equal(st, WEFT_OK);
    weft_function_t *f = compile(N_OUT, outs, 1, &up, 2, NULL);
    weft_function_t *fb = compile(back.n_outputs, back.outputs, back.n_updates, back.updates, 2,
                                  NULL);
    for (int rep = 0; rep < 2; rep++) { /* both update their own key: same streams */
        weft_tensor_t *a[N_OUT], *b[N_OUT];
        call(f, N_OUT, a);
        call(fb, N_OUT, b);
        for (int i = 0; i < N_OUT; i++) assert_true(same_bits(a[i], b[i]));
        release_all(N_OUT, a);
        release_all(N_OUT, b);
    }
    /* a bad props object is refused, naming the node and key */
    char *bad = strstr(text, "\"dtype\":\"float32\"");
    assert_non_null(bad);
    memcpy(bad, "\"dtype\":\"float99\"", 17);
    weft_graph_io_t none;
    st = weft_graph_io_load(h, text, strlen(text), "bad.json", &none);
    assert_int_equal(st, WEFT_ETYPE); /* as an unknown dtype anywhere in a file */
    assert_string_equal(weft_graph_last_error(h), "nodes[3].props: dtype: unknown dtype 'float99'");
    weft_graph_io_free_text(text);
    weft_graph_io_clear(&back);
    weft_function_destroy(f);
    weft_function_destroy(fb);
    weft_tensor_release(k0);
    weft_graph_destroy(g);
    weft_graph_destroy(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bits_at_any_worker_count),
        cmocka_unit_test(test_shared_key_update_and_restart),
        cmocka_unit_test(test_merge_equal_draws_never_fold),
        cmocka_unit_test(test_json_round_trip),
    };
    return cmocka_run_group_tests_name("random_function", tests, NULL, NULL);
}

/* Tests of tensordot and einsum (weft/einsum.h): values against a brute
 * force reference (every label combination visited, written independently
 * of the kernel) in mode none (the Einsum kernel) and fast_run (the
 * lowering, asserted to leave no Einsum node); the chosen contraction
 * order; exact error codes and messages; integer and complex dtypes; JSON
 * and merging; same bits at 1, 2 and 4 workers; gradients by verify_grad
 * through both the Einsum node and the lowering. Integer-valued float
 * inputs make every sum exact, so values are compared with tolerance 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"

/* ---- the reference --------------------------------------------------------- */

/* einsum by brute force: labels[i] are operand i's letters (no ellipsis),
 * out the output's; a length-1 axis broadcasts. */
static double *reference(int n, const char *const *labels, const char *out,
                         weft_tensor_t *const *vals, size_t *n_res)
{
    int64_t len[128] = {0};
    char all[64];
    int n_all = 0;
    for (int i = 0; i < n; i++) {
        for (int a = 0; labels[i][a]; a++) {
            int c = labels[i][a];
            int64_t d = weft_tensor_dim(vals[i], a);
            if (!memchr(all, c, (size_t)n_all)) {
                all[n_all++] = (char)c;
            }
            len[c] = d > len[c] ? d : len[c];
        }
    }
    size_t total = 1;
    for (int k = 0; out[k]; k++) {
        total *= (size_t)len[(int)out[k]];
    }
    double *res = calloc(total ? total : 1, sizeof *res);
    int64_t idx[128] = {0};
    for (;;) {
        double p = 1;
        for (int i = 0; i < n; i++) {
            int64_t at[WEFT_MAX_NDIM];
            for (int a = 0; labels[i][a]; a++) {
                at[a] = weft_tensor_dim(vals[i], a) == 1 ? 0 : idx[(int)labels[i][a]];
            }
            double v = 0;
            assert_int_equal(weft_tensor_get(vals[i], at, &v), WEFT_OK);
            p *= v;
        }
        size_t o = 0;
        for (int k = 0; out[k]; k++) {
            o = o * (size_t)len[(int)out[k]] + (size_t)idx[(int)out[k]];
        }
        if (total) {
            res[o] += p;
        }
        int k = n_all - 1;
        for (; k >= 0; k--) {
            int c = all[k];
            if (++idx[c] < len[c]) {
                break;
            }
            idx[c] = 0;
        }
        if (k < 0 || total == 0) {
            break;
        }
    }
    *n_res = total;
    return res;
}

/* ---- evaluation ------------------------------------------------------------ */

/* Einsum nodes in f's printed form (C11 has no memory streams). */
static int count_einsum(const weft_function_t *f)
{
    FILE *m = tmpfile();
    assert_non_null(m);
    assert_int_equal(weft_function_print(f, m), WEFT_OK);
    long sz = ftell(m);
    char *buf = calloc((size_t)sz + 1, 1);
    rewind(m);
    assert_int_equal(fread(buf, 1, (size_t)sz, m), (size_t)sz);
    fclose(m);
    int n = 0;
    for (const char *p = buf; (p = strstr(p, ": Einsum{")) != NULL; p++) { /* node lines */
        n++;
    }
    free(buf);
    return n;
}

/* Compiles out in mode (threads workers), calls it on vals; *einsum_nodes
 * (may be NULL) counts the Einsum nodes left in the function. */
static weft_tensor_t *run(const char *mode, int threads, size_t n, weft_var_t *const *in,
                          weft_tensor_t *const *vals, weft_var_t *out, int *einsum_nodes)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = mode;
    o.threads = threads;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(n, in, 1, &out, 0, NULL, &o, &f), WEFT_OK);
    weft_tensor_t *r = NULL;
    assert_int_equal(weft_function_call(f, n, vals, 1, &r), WEFT_OK);
    if (einsum_nodes) {
        *einsum_nodes = count_einsum(f);
    }
    weft_function_destroy(f);
    return r;
}

/* A tensor of dtype and shape holding small integers (exact sums). */
static weft_tensor_t *ints(weft_dtype_t dt, int nd, const int64_t *shape, int seed)
{
    double v[4096];
    size_t n = 1;
    for (int d = 0; d < nd; d++) {
        n *= (size_t)shape[d];
    }
    for (size_t i = 0; i < n; i++) {
        v[i] = (double)((int)((i * 7 + (size_t)seed * 13) % 11) - 5);
    }
    return ck_tensor(dt, nd, shape, v);
}

typedef struct ecase {
    const char *subscripts;
    int n;
    int nd[4];
    int64_t shape[4][4];
    const char *labels[4]; /* the reference's explicit form */
    const char *out;
} ecase_t;

/* Values in modes none and fast_run against the reference, exactly; the
 * float einsum is lowered in fast_run. */
static void check_case(const ecase_t *c, weft_dtype_t dt)
{
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *in[4];
    weft_tensor_t *vals[4];
    for (int i = 0; i < c->n; i++) {
        in[i] = ck_var(g, dt, c->nd[i], c->shape[i]);
        vals[i] = ints(dt, c->nd[i], c->shape[i], i);
    }
    weft_var_t *y = weft_einsum(g, c->subscripts, (size_t)c->n, in);
    if (!y) {
        fail_msg("%s: %s", c->subscripts, weft_graph_error_message(g));
    }
    size_t n_ref = 0;
    double *want = reference(c->n, c->labels, c->out, vals, &n_ref);
    const char *modes[2] = {"none", "fast_run"};
    for (int m = 0; m < 2; m++) {
        int left = -1;
        weft_tensor_t *r = run(modes[m], 1, (size_t)c->n, in, vals, y, &left);
        assert_int_equal(weft_tensor_dtype(r), dt);
        assert_int_equal(weft_tensor_size(r), n_ref);
        assert_int_equal(left, m == 0 || weft_dtype_kind(dt) != WEFT_KIND_FLOAT ? 1 : 0);
        for (size_t k = 0; k < n_ref; k++) {
            if (weft_tensor_flat_get(r, k) != want[k]) {
                fail_msg("%s (%s) element %zu: %g, want %g", c->subscripts, modes[m], k,
                         weft_tensor_flat_get(r, k), want[k]);
            }
        }
        weft_tensor_release(r);
    }
    free(want);
    for (int i = 0; i < c->n; i++) {
        weft_tensor_release(vals[i]);
    }
    weft_graph_destroy(g);
}

static const ecase_t cases[] = {
    {"ij,jk->ik", 2, {2, 2}, {{2, 3}, {3, 4}}, {"ij", "jk"}, "ik"},
    {"ij,jk", 2, {2, 2}, {{2, 3}, {3, 4}}, {"ij", "jk"}, "ik"},
    {"bij,bjk->bik", 2, {3, 3}, {{2, 2, 3}, {2, 3, 2}}, {"bij", "bjk"}, "bik"},
    {"ii", 1, {2}, {{3, 3}}, {"ii"}, ""},
    {"ii->i", 1, {2}, {{3, 3}}, {"ii"}, "i"},
    {"i,j->ij", 2, {1, 1}, {{3}, {4}}, {"i", "j"}, "ij"},
    {"ij->ji", 1, {2}, {{2, 3}}, {"ij"}, "ji"},
    {"...ij,...jk", 2, {3, 3}, {{2, 2, 3}, {2, 3, 2}}, {"aij", "ajk"}, "aik"},
    {"...ij,...jk->...ik", 2, {4, 3}, {{2, 1, 2, 3}, {3, 3, 2}}, {"abij", "bjk"}, "abik"},
    {"ij,jk,kl->il", 3, {2, 2, 2}, {{2, 5}, {5, 2}, {2, 6}}, {"ij", "jk", "kl"}, "il"},
    {"ab,bc,cd,de->ae", 4, {2, 2, 2, 2}, {{3, 4}, {4, 2}, {2, 5}, {5, 3}},
     {"ab", "bc", "cd", "de"}, "ae"},
    {"i,i->", 2, {1, 1}, {{5}, {5}}, {"i", "i"}, ""},
    {"ij->", 1, {2}, {{3, 4}}, {"ij"}, ""},
    {"ij->j", 1, {2}, {{3, 4}}, {"ij"}, "j"},
    {"bi,bi->b", 2, {2, 2}, {{3, 4}, {3, 4}}, {"bi", "bi"}, "b"},
    {"ij,ij->ij", 2, {2, 2}, {{2, 3}, {2, 3}}, {"ij", "ij"}, "ij"},
    {"iij,jk->ik", 2, {3, 2}, {{2, 2, 3}, {3, 2}}, {"iij", "jk"}, "ik"},
    {"ij,j->i", 2, {2, 1}, {{3, 1}, {4}}, {"ij", "j"}, "i"},
    {"ijk,kj->i", 2, {3, 2}, {{2, 3, 4}, {4, 3}}, {"ijk", "kj"}, "i"},
    {"i,->i", 2, {1, 0}, {{3}, {0}}, {"i", ""}, "i"},
};

static void test_values_against_brute_force(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        check_case(&cases[k], WEFT_FLOAT64);
    }
    check_case(&cases[0], WEFT_FLOAT32);
    check_case(&cases[9], WEFT_FLOAT32);
    check_case(&cases[0], WEFT_INT32); /* the direct kernel in both modes */
    check_case(&cases[3], WEFT_INT64);
}

/* int8 with int16 promotes to int16 (NumPy's result_type) and wraps. */
static void test_integer_promotion_and_wrap(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t s[1] = {3};
    weft_var_t *in[2] = {ck_var(g, WEFT_INT8, 1, s), ck_var(g, WEFT_INT16, 1, s)};
    weft_var_t *y = weft_einsum(g, "i,i", 2, in);
    assert_non_null(y);
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_INT16);
    weft_tensor_t *v[2] = {ck_tensor(WEFT_INT8, 1, s, (double[]){100, 100, 1}),
                           ck_tensor(WEFT_INT16, 1, s, (double[]){300, 100, 7})};
    weft_tensor_t *r = run("fast_run", 1, 2, in, v, y, NULL);
    /* 30000 + 10000 + 7 = 40007 wraps to 40007 - 65536 */
    assert_true(weft_tensor_flat_get(r, 0) == 40007.0 - 65536.0);
    weft_tensor_release(r);
    weft_tensor_release(v[0]);
    weft_tensor_release(v[1]);
    weft_graph_destroy(g);
}

static void test_complex_matrix_product(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t s[2] = {2, 2};
    weft_var_t *in[2] = {ck_var(g, WEFT_COMPLEX128, 2, s), ck_var(g, WEFT_COMPLEX128, 2, s)};
    weft_var_t *y = weft_einsum(g, "ij,jk->ik", 2, in);
    weft_tensor_t *v[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(weft_tensor_zeros(WEFT_COMPLEX128, 2, s, &v[i]), WEFT_OK);
        for (int64_t e = 0; e < 4; e++) {
            int64_t at[2] = {e / 2, e % 2};
            assert_int_equal(weft_tensor_set_complex(v[i], at, (double)(e + i), (double)(1 - i)),
                             WEFT_OK);
        }
    }
    /* a = [[0+i, 1+i], [2+i, 3+i]], b = [[1, 2], [3, 4]]: a@b[0][0] = (0+i) + 3(1+i) */
    const char *modes[2] = {"none", "fast_run"};
    for (int m = 0; m < 2; m++) {
        weft_tensor_t *r = run(modes[m], 1, 2, in, v, y, NULL);
        double re = 0, im = 0;
        int64_t at[2] = {0, 0};
        assert_int_equal(weft_tensor_get_complex(r, at, &re, &im), WEFT_OK);
        assert_true(re == 3.0 && im == 4.0);
        weft_tensor_release(r);
    }
    weft_tensor_release(v[0]);
    weft_tensor_release(v[1]);
    weft_graph_destroy(g);
}

/* bool: or of ands (NumPy); float16 summed in float32 (NumPy too): 4096
 * ones sum to 4096, where a float16 sum would stop at 2048. */
static void test_bool_and_float16_direct_kernel(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t s[2] = {2, 2}, n[1] = {4096};
    weft_var_t *b[2] = {ck_var(g, WEFT_BOOL, 2, s), ck_var(g, WEFT_BOOL, 2, s)};
    weft_var_t *h = ck_var(g, WEFT_FLOAT16, 1, n);
    weft_var_t *yb = weft_einsum(g, "ij,jk->ik", 2, b), *yh = weft_einsum(g, "i->", 1, &h);
    weft_tensor_t *vb[2] = {ck_tensor(WEFT_BOOL, 2, s, (double[]){1, 0, 0, 0}),
                            ck_tensor(WEFT_BOOL, 2, s, (double[]){1, 1, 1, 0})};
    weft_tensor_t *vh = NULL;
    assert_int_equal(weft_tensor_full(WEFT_FLOAT16, 1, n, 1.0, &vh), WEFT_OK);
    weft_tensor_t *r = run("fast_run", 1, 2, b, vb, yb, NULL);
    ck_expect(r, 2, s, (double[]){1, 1, 0, 0}, 0);
    weft_tensor_release(r);
    r = run("fast_run", 1, 1, &h, &vh, yh, NULL);
    ck_expect(r, 0, NULL, (double[]){4096}, 0);
    weft_tensor_release(r);
    for (int i = 0; i < 2; i++) {
        weft_tensor_release(vb[i]);
    }
    weft_tensor_release(vh);
    weft_graph_destroy(g);
}

/* fast_run without the "einsum" tag, or without "fast_math" (Dot sums in
 * another order: mode none's bits), keeps the Einsum node. */
static void test_rewrite_tags(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t s[2] = {3, 3};
    weft_var_t *in[2] = {ck_var(g, WEFT_FLOAT64, 2, s), ck_var(g, WEFT_FLOAT64, 2, s)};
    weft_var_t *y = weft_einsum(g, "ij,jk->ik", 2, in);
    const char *tags[3] = {"einsum", "fast_math", "local_einsum_lower"};
    for (int t = 0; t < 4; t++) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.n_exclude = t < 3 ? 1 : 0;
        o.exclude = t < 3 ? &tags[t] : NULL;
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(2, in, 1, &y, 0, NULL, &o, &f), WEFT_OK);
        assert_int_equal(count_einsum(f), t < 3 ? 1 : 0);
        weft_function_destroy(f);
    }
    /* a chain lowers to two Dots, the intermediate on the left: no transposes */
    weft_var_t *in3[3] = {in[0], in[1], in[0]};
    weft_var_t *y3 = weft_einsum(g, "ij,jk,kl->il", 3, in3);
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(2, in, 1, &y3, 0, NULL, NULL, &f), WEFT_OK);
    assert_int_equal(weft_function_n_nodes(f), 2);
    weft_function_destroy(f);
    weft_graph_destroy(g);
}

/* ---- the contraction order -------------------------------------------------- */

static void expect_path(const char *subs, int n, const int *nd, const int64_t *const *dims,
                        const int32_t *want)
{
    int32_t path[2 * (WEFT_EINSUM_MAX_OPERANDS - 1)];
    char msg[256];
    assert_int_equal(weft_einsum_path(subs, (size_t)n, nd, dims, path, msg, sizeof msg), WEFT_OK);
    assert_memory_equal(path, want, 2 * (size_t)(n - 1) * sizeof *want);
}

static void test_path_chain_order(void **state)
{
    (void)state;
    int nd[3] = {2, 2, 2};
    /* A(10x1000) B(1000x10) C(10x1000): (AB) first costs 10^5 + 10^5,
     * (BC) first 10^7 + 10^7 */
    const int64_t a[2] = {10, 1000}, b[2] = {1000, 10}, c[2] = {10, 1000};
    const int64_t *abc[3] = {a, b, c};
    expect_path("ij,jk,kl->il", 3, nd, abc, (int32_t[]){0, 1, 0, 1});
    /* A(1000x10) B(10x1000) C(1000x10): (BC) first */
    const int64_t *cba[3] = {b, a, b};
    expect_path("ij,jk,kl->il", 3, nd, cba, (int32_t[]){1, 2, 0, 1});
    /* unknown lengths: left to right */
    const int64_t u[2] = {-1, 1000};
    const int64_t *ubc[3] = {u, b, c};
    expect_path("ij,jk,kl->il", 3, nd, ubc, (int32_t[]){0, 1, 0, 1});
    /* the node carries the path chosen when it was built */
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *in[3] = {ck_var(g, WEFT_FLOAT64, 2, b), ck_var(g, WEFT_FLOAT64, 2, a),
                         ck_var(g, WEFT_FLOAT64, 2, b)};
    weft_var_t *y = weft_einsum(g, "ij,jk,kl->il", 3, in);
    const char *subs = NULL;
    size_t n = 0, pairs = 0;
    int32_t path[2 * (WEFT_EINSUM_MAX_OPERANDS - 1)];
    assert_int_equal(weft_einsum_op_info(weft_apply_op(weft_var_owner(y)), &subs, &n, path,
                                         &pairs), WEFT_OK);
    assert_string_equal(subs, "ij,jk,kl->il");
    assert_int_equal(n, 3);
    assert_int_equal(pairs, 2);
    assert_memory_equal(path, ((int32_t[]){1, 2, 0, 1}), 4 * sizeof(int32_t));
    weft_graph_destroy(g);
}

/* Ten operands (greedy): a chain whose one cheap end is on the right;
 * each step contracts the cheapest pair, so the small vector is absorbed
 * from the right, and the values agree with the brute force. */
static void test_greedy_beyond_eight_operands(void **state)
{
    (void)state;
    const char *subs = "ab,bc,cd,de,ef,fg,gh,hi,ij,j->a";
    int nd[10] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 1};
    int64_t m[2] = {4, 4}, v[1] = {4};
    const int64_t *dims[10] = {m, m, m, m, m, m, m, m, m, v};
    int32_t path[18];
    assert_int_equal(weft_einsum_path(subs, 10, nd, dims, path, NULL, 0), WEFT_OK);
    /* first the matrix-vector product ij,j (16) rather than a matrix product (64) */
    assert_int_equal(path[0], 8);
    assert_int_equal(path[1], 9);
    for (int k = 1; k < 9; k++) { /* then each matrix with the vector, appended last */
        assert_int_equal(path[2 * k], 7 - (k - 1));
        assert_int_equal(path[2 * k + 1], 9 - k);
    }
}

/* ---- errors ------------------------------------------------------------------ */

static void expect_error(weft_graph_t *g, weft_var_t *y, weft_status_t st, const char *part)
{
    assert_null(y);
    assert_int_equal(weft_graph_error(g), st);
    if (!strstr(weft_graph_error_message(g), part)) {
        fail_msg("message \"%s\" lacks \"%s\"", weft_graph_error_message(g), part);
    }
}

/* A new graph in *g holding a float64 root of shape (2, 3) named name. */
static weft_var_t *fresh_graph_var(weft_graph_t **g, const char *name)
{
    int64_t s23[2] = {2, 3};
    const weft_type_t *t = NULL;
    assert_int_equal(weft_graph_create(NULL, g), WEFT_OK);
    assert_int_equal(weft_type_tensor(*g, WEFT_FLOAT64, 2, s23, &t), WEFT_OK);
    return weft_var_create(*g, t, name);
}

static void test_errors(void **state)
{
    (void)state;
    struct {
        const char *subs;
        size_t n;
        weft_status_t st;
        const char *part;
    } bad[] = {
        {"ij,jk->ik", 3, WEFT_EINVAL, "more operands (3) than the subscripts name (2)"},
        {"ij,jk,kl->il", 2, WEFT_EINVAL, "fewer operands (2) than the subscripts name"},
        {"i1,jk", 2, WEFT_EINVAL, "invalid subscript '1' in operand 0"},
        {"ij,jk->iq", 2, WEFT_EINVAL, "output subscript 'q' is in no operand"},
        {"ij,jk->ii", 2, WEFT_EINVAL, "output subscript 'i' appears more than once"},
        {"ij-jk", 2, WEFT_EINVAL, "proper '->' output"},
        {"ijk,jk", 2, WEFT_EINVAL, "operand 0 has 2 axes but 3 subscripts: x (built at"},
        {"i.j,jk", 2, WEFT_EINVAL, "'.' must be part of one '...'"},
        {"ij,jk", 0, WEFT_EINVAL, "0 operands"},
    };
    int64_t s23[2] = {2, 3}, s45[2] = {4, 5};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        weft_graph_t *g = NULL;
        weft_var_t *x = fresh_graph_var(&g, "x");
        weft_var_t *in[3] = {x, x, x};
        expect_error(g, weft_einsum(g, bad[k].subs, bad[k].n, in), bad[k].st, bad[k].part);
        weft_graph_destroy(g);
    }
    /* mismatched lengths name the operand, its site and the subscript */
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    const weft_type_t *t1 = NULL, *t2 = NULL;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, s23, &t1), WEFT_OK);
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, s45, &t2), WEFT_OK);
    weft_var_t *in[2] = {weft_var_create(g, t1, "a"), weft_var_create(g, t2, "b")};
    expect_error(g, weft_einsum(g, "ij,jk->ik", 2, in), WEFT_ESHAPE,
                 "operand 1 b (built at");
    assert_non_null(strstr(weft_graph_error_message(g), "has length 4 on axis 0, which does "
                                                        "not match the other lengths of its "
                                                        "subscript j"));
    /* a NULL operand (an earlier failure) adds no second error */
    weft_var_t *nul[2] = {NULL, in[1]};
    assert_null(weft_einsum(g, "ij,jk", 2, nul));
    assert_int_equal(weft_graph_error(g), WEFT_ESHAPE);
    weft_graph_destroy(g);
    /* tensordot: paired lengths that differ, both operands named */
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, s23, &t1), WEFT_OK);
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, s45, &t2), WEFT_OK);
    weft_var_t *a = weft_var_create(g, t1, "a"), *b = weft_var_create(g, t2, "b");
    expect_error(g, weft_tensordot_k(g, a, b, 1), WEFT_ESHAPE,
                 "axis 1 of a a (built at");
    assert_non_null(strstr(weft_graph_error_message(g), "has length 3 but axis 0 of b b"));
    weft_graph_destroy(g);
    a = fresh_graph_var(&g, "a");
    expect_error(g, weft_tensordot_k(g, a, a, 3), WEFT_EINVAL, "axes=3 for operands of 2 and 2");
    weft_graph_destroy(g);
    a = fresh_graph_var(&g, "a");
    expect_error(g, weft_tensordot(g, a, a, 2, ((int[]){0, 0}), ((int[]){0, 1})), WEFT_EINVAL,
                 "axis pair 1 (0, 1) is out of range or repeats an axis");
    weft_graph_destroy(g);
}

/* ---- tensordot ----------------------------------------------------------------- */

static void test_tensordot_values(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t sa[3] = {2, 3, 4}, sb[3] = {4, 3, 5};
    weft_var_t *in[2] = {ck_var(g, WEFT_FLOAT64, 3, sa), ck_var(g, WEFT_FLOAT64, 3, sb)};
    weft_tensor_t *v[2] = {ints(WEFT_FLOAT64, 3, sa, 0), ints(WEFT_FLOAT64, 3, sb, 1)};
    /* np.tensordot(a, b, axes=([1, 2], [1, 0])): (2, 5) */
    weft_var_t *y = weft_tensordot(g, in[0], in[1], 2, ((int[]){1, -1}), ((int[]){1, 0}));
    assert_non_null(y);
    size_t n = 0;
    double *want = reference(2, (const char *[]){"ijk", "kjl"}, "il", v, &n);
    weft_tensor_t *r = run("fast_run", 1, 2, in, v, y, NULL);
    ck_expect(r, 2, (int64_t[]){2, 5}, want, 0);
    weft_tensor_release(r);
    free(want);
    /* axes=0 is the outer product, (2,3,4,4,3,5) */
    y = weft_tensordot_k(g, in[0], in[1], 0);
    assert_int_equal(weft_type_ndim(weft_var_type(y)), 6);
    assert_int_equal(weft_type_dim(weft_var_type(y), 3), 4);
    /* integers: an Einsum node (Dot takes no integers) */
    weft_var_t *ia = ck_var(g, WEFT_INT64, 3, sa), *ib = ck_var(g, WEFT_INT64, 3, sb);
    weft_var_t *iy = weft_tensordot(g, ia, ib, 1, ((int[]){2}), ((int[]){0}));
    assert_string_equal(weft_op_name(weft_apply_op(weft_var_owner(iy))), "Einsum");
    weft_tensor_t *iv[2] = {ints(WEFT_INT64, 3, sa, 0), ints(WEFT_INT64, 3, sb, 1)};
    weft_var_t *iin[2] = {ia, ib};
    r = run("fast_run", 1, 2, iin, iv, iy, NULL);
    want = reference(2, (const char *[]){"ijk", "klm"}, "ijlm", iv, &n);
    ck_expect(r, 4, (int64_t[]){2, 3, 3, 5}, want, 0);
    weft_tensor_release(r);
    free(want);
    for (int i = 0; i < 2; i++) {
        weft_tensor_release(v[i]);
        weft_tensor_release(iv[i]);
    }
    weft_graph_destroy(g);
}

/* ---- JSON, merging, threads ---------------------------------------------------------- */

static void test_json_and_merge(void **state)
{
    (void)state;
    weft_graph_t *g = NULL, *g2 = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t s[2] = {3, 3};
    weft_var_t *x = ck_var(g, WEFT_FLOAT64, 2, s);
    weft_var_t *in[3] = {x, x, x};
    weft_var_t *outs[2] = {weft_einsum(g, "ij,jk,kl->il", 3, in),
                           weft_einsum(g, "ij,jk,kl->il", 3, in)};
    weft_graph_io_t io = {1, &x, NULL, 1, outs, 0, NULL}, back;
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    ck_write_saved_graph(text); /* tests/ops/data/einsum.json */
    assert_non_null(strstr(text, "\"op\":\"Einsum\",\"props\":{\"subscripts\":\"ij,jk,kl->il\","
                                 "\"n_operands\":3,\"path\":[0,1,0,1]}"));
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), NULL, &back), WEFT_OK);
    assert_true(weft_op_equal(weft_apply_op(weft_var_owner(outs[0])),
                              weft_apply_op(weft_var_owner(back.outputs[0]))));
    weft_graph_io_clear(&back);
    weft_graph_destroy(g2);
    /* a path that is not n - 1 valid pairs is refused at load */
    char *p = strstr(text, "\"path\":[0,1,0,1]");
    assert_non_null(p);
    memcpy(p, "\"path\":[1,0,0,1]", strlen("\"path\":[1,0,0,1]"));
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), NULL, &back), WEFT_EPARSE);
    assert_non_null(strstr(weft_graph_last_error(g2), "path: not 2 valid pairs for 3 operands"));
    weft_graph_io_free_text(text);
    weft_graph_destroy(g2);
    /* the two equal nodes merge (fast_compile merges, does not lower) */
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "fast_compile";
    weft_var_t *sum = weft_add(g, outs[0], outs[1]);
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &sum, 0, NULL, &o, &f), WEFT_OK);
    assert_int_equal(count_einsum(f), 1);
    weft_function_destroy(f);
    weft_graph_destroy(g);
}

static void test_same_bits_at_1_2_4_workers(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t sa[3] = {8, 64, 48}, sb[3] = {8, 48, 64};
    weft_var_t *in[2] = {ck_var(g, WEFT_FLOAT32, 3, sa), ck_var(g, WEFT_FLOAT32, 3, sb)};
    weft_tensor_t *v[2] = {ck_random(WEFT_FLOAT32, 3, sa, -1, 1, 7),
                           ck_random(WEFT_FLOAT32, 3, sb, -1, 1, 8)};
    weft_var_t *y = weft_einsum(g, "bij,bjk->ik", 2, in);
    const char *modes[2] = {"none", "fast_run"};
    for (int m = 0; m < 2; m++) {
        weft_tensor_t *r1 = run(modes[m], 1, 2, in, v, y, NULL);
        for (int t = 2; t <= 4; t += 2) {
            weft_tensor_t *rt = run(modes[m], t, 2, in, v, y, NULL);
            assert_memory_equal(weft_tensor_data(r1), weft_tensor_data(rt),
                                weft_tensor_size(r1) * sizeof(float));
            weft_tensor_release(rt);
        }
        weft_tensor_release(r1);
    }
    weft_tensor_release(v[0]);
    weft_tensor_release(v[1]);
    weft_graph_destroy(g);
}

/* ---- gradients ------------------------------------------------------------------- */

typedef struct gcase {
    const char *subs;
    int n;
    int nd[3];
    int64_t shape[3][3];
    bool lowered; /* build weft_einsum_lowered (the rewrite's graph) instead */
} gcase_t;

static weft_var_t *grad_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    const gcase_t *c = user;
    if (!c->lowered) {
        return weft_einsum(g, c->subs, n_in, in);
    }
    int32_t path[4];
    const int64_t *dims[3] = {c->shape[0], c->shape[1], c->shape[2]};
    assert_int_equal(weft_einsum_path(c->subs, n_in, c->nd, dims, path, NULL, 0), WEFT_OK);
    return weft_einsum_lowered(g, c->subs, n_in, in, path);
}

static void test_gradients_verify(void **state)
{
    (void)state;
    static const gcase_t gc[] = {
        {"ij,jk->ik", 2, {2, 2}, {{2, 3}, {3, 4}}, false},
        {"ij,jk->ik", 2, {2, 2}, {{2, 3}, {3, 4}}, true},
        {"ii->i", 1, {2}, {{3, 3}}, false},
        {"ii->i", 1, {2}, {{3, 3}}, true},
        {"ii", 1, {2}, {{3, 3}}, false},
        {"ij->", 1, {2}, {{2, 3}}, false},
        {"i,j->ij", 2, {1, 1}, {{3}, {2}}, false},
        {"bij,bjk->bik", 2, {3, 3}, {{2, 2, 3}, {2, 3, 2}}, false},
        {"bij,bjk->bik", 2, {3, 3}, {{2, 2, 3}, {2, 3, 2}}, true},
        {"...ij,...jk", 2, {3, 3}, {{1, 2, 3}, {2, 3, 2}}, false},
        {"ij,jk,kl->il", 3, {2, 2, 2}, {{2, 3}, {3, 2}, {2, 4}}, false},
        {"ij,jk,kl->il", 3, {2, 2, 2}, {{2, 3}, {3, 2}, {2, 4}}, true},
        {"iij,jk->ik", 2, {3, 2}, {{2, 2, 3}, {3, 2}}, true},
        {"bi,bi->b", 2, {2, 2}, {{3, 4}, {3, 4}}, true},
    };
    for (size_t k = 0; k < sizeof gc / sizeof *gc; k++) {
        weft_tensor_t *pts[3];
        for (int i = 0; i < gc[k].n; i++) {
            pts[i] = ck_random(WEFT_FLOAT64, gc[k].nd[i], gc[k].shape[i], -1, 1, 11 + k + i);
        }
        ck_verify(grad_fn, (void *)&gc[k], (size_t)gc[k].n, pts);
        for (int i = 0; i < gc[k].n; i++) {
            weft_tensor_release(pts[i]);
        }
    }
}

/* Complex operands: the gradient (conjugating the other operands, Dot's
 * convention) is Dot's, reached through a real input cast to complex (weft_grad
 * takes real wrt only). */
static void test_complex_gradient_matches_dot(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t s[2] = {2, 2};
    weft_var_t *in[2] = {ck_var(g, WEFT_FLOAT64, 2, s), ck_var(g, WEFT_COMPLEX128, 2, s)};
    weft_var_t *op[2] = {weft_cast(g, in[0], WEFT_COMPLEX128), in[1]};
    weft_var_t *e = weft_einsum(g, "ij,jk->ik", 2, op), *d = weft_dot(g, op[0], op[1]);
    weft_var_t *ge = weft_grad(g, weft_sum(g, weft_real(g, weft_mul(g, e, e)), 0, NULL, false),
                               in[0]);
    weft_var_t *gd = weft_grad(g, weft_sum(g, weft_real(g, weft_mul(g, d, d)), 0, NULL, false),
                               in[0]);
    assert_non_null(ge);
    assert_non_null(gd);
    weft_tensor_t *v[2] = {ck_tensor(WEFT_FLOAT64, 2, s, (double[]){1, 2, 3, 4}), NULL};
    assert_int_equal(weft_tensor_zeros(WEFT_COMPLEX128, 2, s, &v[1]), WEFT_OK);
    for (int64_t k = 0; k < 4; k++) {
        int64_t at[2] = {k / 2, k % 2};
        assert_int_equal(weft_tensor_set_complex(v[1], at, (double)(k - 1), (double)(2 - k)),
                         WEFT_OK);
    }
    weft_var_t *outs[2] = {ge, gd};
    weft_tensor_t *r[2] = {NULL, NULL};
    assert_int_equal(weft_eval(g, 2, in, v, 2, outs, r), WEFT_OK);
    ck_expect(r[0], 2, s, (double[]){-8, 16, -24, 32}, 0);
    ck_expect(r[1], 2, s, (double[]){-8, 16, -24, 32}, 0);
    for (int i = 0; i < 2; i++) {
        weft_tensor_release(r[i]);
        weft_tensor_release(v[i]);
    }
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_against_brute_force),
        cmocka_unit_test(test_integer_promotion_and_wrap),
        cmocka_unit_test(test_complex_matrix_product),
        cmocka_unit_test(test_bool_and_float16_direct_kernel),
        cmocka_unit_test(test_rewrite_tags),
        cmocka_unit_test(test_path_chain_order),
        cmocka_unit_test(test_greedy_beyond_eight_operands),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_tensordot_values),
        cmocka_unit_test(test_json_and_merge),
        cmocka_unit_test(test_same_bits_at_1_2_4_workers),
        cmocka_unit_test(test_gradients_verify),
        cmocka_unit_test(test_complex_gradient_matches_dot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

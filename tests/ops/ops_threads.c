/* ck_same_bits_at_1_2_4 (ops_threads.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"
#include "ops_threads.h"

/* Asserts that a and b hold the same bytes (same size and dtype). */
static void expect_same_bits(const weft_tensor_t *a, const weft_tensor_t *b, const char *what,
                             size_t i)
{
    size_t bytes = weft_tensor_size(a) * weft_dtype_size(weft_tensor_dtype(a));
    assert_int_equal(weft_tensor_dtype(b), weft_tensor_dtype(a));
    assert_int_equal(weft_tensor_size(b), weft_tensor_size(a));
    if (memcmp(weft_tensor_data(a), weft_tensor_data(b), bytes) != 0) {
        print_error("output %zu differs %s\n", i, what);
        fail();
    }
}

void ck_same_bits_at_1_2_4(weft_graph_t *g, weft_var_t *x, weft_tensor_t *xv, size_t n_out,
                           weft_var_t **outs)
{
    weft_tensor_t *ref[CK_THREADS_MAX_OUTS] = {NULL}, *got[CK_THREADS_MAX_OUTS] = {NULL};
    assert_true(n_out <= CK_THREADS_MAX_OUTS);
    const size_t threads[3] = {1, 2, 4};
    for (int k = 0; k < 3; k++) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.mode = "none";
        o.threads = threads[k];
        weft_function_t *fn = NULL;
        assert_int_equal(weft_function_compile(1, &x, n_out, outs, 0, NULL, &o, &fn), WEFT_OK);
        weft_status_t st = weft_function_call(fn, 1, &xv, n_out, k ? got : ref);
        if (st != WEFT_OK) print_error("%s\n", weft_function_last_error(fn));
        assert_int_equal(st, WEFT_OK);
        for (size_t i = 0; k && i < n_out; i++) {
            expect_same_bits(ref[i], got[i], threads[k] == 2 ? "at 2 workers" : "at 4 workers",
                             i);
            weft_tensor_release(got[i]);
            got[i] = NULL;
        }
        assert_int_equal(weft_function_destroy(fn), WEFT_OK);
    }
    for (size_t i = 0; i < n_out; i++) {
        weft_tensor_t *ev = NULL;
        assert_int_equal(ck_eval(g, 1, &x, &xv, outs[i], &ev), WEFT_OK);
        expect_same_bits(ref[i], ev, "in the evaluator", i);
        weft_tensor_release(ev);
        weft_tensor_release(ref[i]);
    }
}

/* Same bits at 1, 2 and 4 workers (ops_threads.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "ops_threads.h"

void ck_same_bits_1_2_4(weft_var_t *x, weft_tensor_t *xv, size_t n_out, weft_var_t **outs)
{
    weft_tensor_t *ref[16] = {NULL}, *got[16] = {NULL};
    assert_true(n_out <= 16);
    const size_t threads[3] = {1, 2, 4};
    for (int k = 0; k < 3; k++) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.mode = "none";
        o.threads = threads[k];
        weft_function_t *fn = NULL;
        assert_int_equal(weft_function_compile(1, &x, n_out, outs, 0, NULL, &o, &fn), WEFT_OK);
        assert_int_equal(weft_function_call(fn, 1, &xv, n_out, k ? got : ref), WEFT_OK);
        for (size_t i = 0; k && i < n_out; i++) {
            size_t bytes = weft_tensor_size(ref[i]) * weft_dtype_size(weft_tensor_dtype(ref[i]));
            assert_int_equal(weft_tensor_size(got[i]), weft_tensor_size(ref[i]));
            if (memcmp(weft_tensor_data(got[i]), weft_tensor_data(ref[i]), bytes) != 0) {
                print_error("output %zu differs at %zu workers\n", i, threads[k]);
                fail();
            }
            weft_tensor_release(got[i]);
            got[i] = NULL;
        }
        assert_int_equal(weft_function_destroy(fn), WEFT_OK);
    }
    for (size_t i = 0; i < n_out; i++) weft_tensor_release(ref[i]);
}

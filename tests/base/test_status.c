/* status table: names and texts of every code, and values outside the table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "weft/alloc.h"
#include "weft/status.h"

static void test_status_ok_is_zero_and_errors_negative(void **state)
{
    (void)state;
    assert_int_equal(WEFT_OK, 0);
#define CHECK_NEGATIVE_(name, value, text) \
    if (name != WEFT_OK) assert_true(name < 0);
    WEFT_STATUS_TABLE(CHECK_NEGATIVE_)
#undef CHECK_NEGATIVE_
}

static void test_status_name_and_str_match_table(void **state)
{
    (void)state;
    assert_string_equal(weft_status_name(WEFT_EINVAL), "WEFT_EINVAL");
    assert_string_equal(weft_status_str(WEFT_ENOMEM), "out of memory");
    assert_string_equal(weft_status_name(WEFT_OK), "WEFT_OK");
}

static void test_status_unknown_value_has_fallback_text(void **state)
{
    (void)state;
    assert_string_equal(weft_status_name((weft_status_t)-9999), "WEFT_UNKNOWN");
    assert_string_equal(weft_status_str((weft_status_t)12345), "unknown status");
}

static void test_allocator_default_allocates_resizes_and_frees(void **state)
{
    (void)state;
    const weft_allocator_t *a = weft_allocator_default();
    char *p = a->resize(a->user, NULL, 0, 16);
    assert_non_null(p);
    memset(p, 7, 16);
    p = a->resize(a->user, p, 16, 4096);
    assert_non_null(p);
    assert_int_equal(p[15], 7);
    assert_null(a->resize(a->user, p, 4096, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_ok_is_zero_and_errors_negative),
        cmocka_unit_test(test_status_name_and_str_match_table),
        cmocka_unit_test(test_status_unknown_value_has_fallback_text),
        cmocka_unit_test(test_allocator_default_allocates_resizes_and_frees),
    };
    return cmocka_run_group_tests_name("status", tests, NULL, NULL);
}

/* The .npy reader: versions 1.0 and 2.0, every supported dtype, 0-d and N-d
 * arrays, each written byte by byte by the test itself; and every refused
 * file (bad magic, version, dtype, byte order, Fortran order, shape,
 * truncation). The writer: its bytes are the format's, exactly. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "weft/npy.h"
#include "weft/tensor.h"

static char path[64];

static int setup(void **state)
{
    (void)state;
    snprintf(path, sizeof(path), "/tmp/weft_npy_%ld.npy", (long)getpid());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    remove(path);
    return 0;
}

/* Writes an .npy file: magic, version, header padded to 64 bytes (as numpy
 * does) and `nbytes` of data. */
static void write_npy(int major, const char *dict, const void *data, size_t nbytes)
{
    size_t pre = major == 1 ? 10 : 12, len = strlen(dict) + 1;
    size_t hl = ((pre + len + 63) / 64) * 64 - pre;
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    unsigned char head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)major, 0};
    head[8] = (unsigned char)(hl & 0xff);
    head[9] = (unsigned char)(hl >> 8);
    fwrite(head, 1, pre, f);
    fputs(dict, f);
    for (size_t i = len; i < hl; i++) fputc(' ', f);
    fputc('\n', f);
    if (nbytes) fwrite(data, 1, nbytes, f);
    fclose(f);
}

static void test_npy_v1_float64_matrix_loads(void **state)
{
    (void)state;
    double d[6] = {1, 2, 3, 4, 5, 6.5};
    write_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", d, sizeof(d));
    weft_tensor_t *t = NULL;
    char msg[256];
    assert_int_equal(weft_npy_load(path, &t, msg, sizeof(msg)), WEFT_OK);
    assert_int_equal(weft_tensor_dtype(t), WEFT_FLOAT64);
    assert_int_equal(weft_tensor_ndim(t), 2);
    assert_int_equal(weft_tensor_dim(t, 0), 2);
    assert_int_equal(weft_tensor_dim(t, 1), 3);
    assert_memory_equal(weft_tensor_data(t), d, sizeof(d));
    assert_true(weft_tensor_is_contiguous(t));
    weft_tensor_release(t);
}

static void test_npy_v2_and_every_dtype_load(void **state)
{
    (void)state;
    int32_t i32[4] = {-1, 2, 3, 2147483647};
    int64_t i64 = -42;
    float f32[2] = {0.5f, -2.0f};
    uint8_t b[3] = {1, 0, 1};
    struct {
        int major;
        const char *dict;
        const void *data;
        size_t n;
        weft_dtype_t dt;
        int ndim;
    } cases[] = {
        {2, "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", i32, 16, WEFT_INT32, 1},
        {1, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }", &i64, 8, WEFT_INT64, 0},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }", f32, 8, WEFT_FLOAT32, 2},
        {2, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", b, 3, WEFT_BOOL, 1},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        write_npy(cases[c].major, cases[c].dict, cases[c].data, cases[c].n);
        weft_tensor_t *t = NULL;
        assert_int_equal(weft_npy_load(path, &t, NULL, 0), WEFT_OK);
        assert_int_equal(weft_tensor_dtype(t), cases[c].dt);
        assert_int_equal(weft_tensor_ndim(t), cases[c].ndim);
        assert_memory_equal(weft_tensor_data(t), cases[c].data, cases[c].n);
        weft_tensor_release(t);
    }
}

/* Every real dtype saves with NumPy's descr and loads back bit for bit
 * (the files NumPy writes for these dtypes have these headers). */
static void test_npy_new_dtypes_round_trip_with_numpy_descr(void **state)
{
    (void)state;
    static const struct {
        weft_dtype_t dt;
        const char *descr;
    } cases[] = {{WEFT_INT8, "|i1"},   {WEFT_INT16, "<i2"},  {WEFT_UINT8, "|u1"},
                 {WEFT_UINT16, "<u2"}, {WEFT_UINT32, "<u4"}, {WEFT_UINT64, "<u8"},
                 {WEFT_FLOAT16, "<f2"}, {WEFT_BOOL, "|b1"}};
    unsigned char bytes[24];
    for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (unsigned char)(i * 37 + 1);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        int64_t n = (int64_t)(8 / weft_dtype_size(cases[c].dt));
        int64_t shape[2] = {n, 1};
        weft_tensor_t *t = NULL, *back = NULL;
        assert_int_equal(weft_tensor_empty(cases[c].dt, 2, shape, &t), WEFT_OK);
        if (cases[c].dt == WEFT_BOOL)
            memset(weft_tensor_data(t), 1, 8);
        else
            memcpy(weft_tensor_data(t), bytes, 8);
        char msg[256] = "";
        assert_int_equal(weft_npy_save(path, t, msg, sizeof msg), WEFT_OK);
        FILE *f = fopen(path, "rb");
        char head[128] = {0};
        assert_int_equal(fread(head, 1, sizeof head - 1, f), sizeof head - 1);
        fclose(f);
        char want[64];
        snprintf(want, sizeof want, "{'descr': '%s', 'fortran_order': False, 'shape': (%d, 1), }",
                 cases[c].descr, (int)n);
        if (!strstr(head + 10, want)) fprintf(stderr, "header: %s\n", head + 10);
        assert_non_null(strstr(head + 10, want));
        assert_int_equal(weft_npy_load(path, &back, msg, sizeof msg), WEFT_OK);
        assert_int_equal(weft_tensor_dtype(back), cases[c].dt);
        assert_memory_equal(weft_tensor_data(back), weft_tensor_data(t), 8);
        weft_tensor_release(t);
        weft_tensor_release(back);
    }
}

static void test_npy_complex_save_round_trips(void **state)
{
    (void)state;
    int64_t shape[1] = {2};
    weft_tensor_t *t = NULL, *back = NULL;
    assert_int_equal(weft_tensor_empty(WEFT_COMPLEX64, 1, shape, &t), WEFT_OK);
    const float v[4] = {1.5f, -2.0f, 0.0f, 3.25f};
    memcpy(weft_tensor_data(t), v, sizeof v);
    char msg[256] = "";
    assert_int_equal(weft_npy_save(path, t, msg, sizeof msg), WEFT_OK);
    assert_int_equal(weft_npy_load(path, &back, msg, sizeof msg), WEFT_OK);
    assert_int_equal(weft_tensor_dtype(back), WEFT_COMPLEX64);
    assert_memory_equal(weft_tensor_data(back), v, sizeof v);
    weft_tensor_release(t);
    weft_tensor_release(back);
}

static void expect_fail(const char *dict, size_t nbytes, weft_status_t want, const char *msg_part)
{
    double d[4] = {0};
    write_npy(1, dict, d, nbytes);
    weft_tensor_t *t = (weft_tensor_t *)(uintptr_t)1;
    char msg[256];
    assert_int_equal(weft_npy_load(path, &t, msg, sizeof(msg)), want);
    assert_null(t);
    if (!strstr(msg, msg_part)) fprintf(stderr, "message: %s\n", msg);
    assert_non_null(strstr(msg, msg_part));
    assert_non_null(strstr(msg, path));
}

static void test_npy_unsupported_and_malformed_files_refused(void **state)
{
    (void)state;
    expect_fail("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", 16, WEFT_ENOTIMPL,
                "dtype '>f8'");
    expect_fail("{'descr': '<c32', 'fortran_order': False, 'shape': (1,), }", 16, WEFT_ENOTIMPL,
                "dtype '<c32'");
    expect_fail("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", 32, WEFT_ENOTIMPL,
                "Fortran");
    expect_fail("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", 24, WEFT_EIO,
                "truncated data");
    expect_fail("{'descr': '<f8', 'fortran_order': False, 'shape': (2, x), }", 32, WEFT_EPARSE,
                "malformed shape");
    expect_fail("{'descr': '<f8', 'shape': (2,), }", 16, WEFT_EPARSE, "lacks");
    expect_fail("{'descr': '<f8', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
                "1,1,1), }",
                8, WEFT_ENOTIMPL, "more than 16");
    /* version 3.0 and a file that is not .npy at all */
    write_npy(3, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", NULL, 0);
    weft_tensor_t *t = NULL;
    char msg[256];
    assert_int_equal(weft_npy_load(path, &t, msg, sizeof(msg)), WEFT_ENOTIMPL);
    assert_non_null(strstr(msg, "version 3.0"));
    FILE *f = fopen(path, "wb");
    fputs("hello, world", f);
    fclose(f);
    assert_int_equal(weft_npy_load(path, &t, msg, sizeof(msg)), WEFT_EPARSE);
    assert_non_null(strstr(msg, "magic"));
    remove(path);
    assert_int_equal(weft_npy_load(path, &t, msg, sizeof(msg)), WEFT_EIO);
    assert_non_null(strstr(msg, "cannot open"));
    assert_int_equal(weft_npy_load(NULL, &t, msg, sizeof(msg)), WEFT_EINVAL);
    assert_int_equal(weft_npy_load(path, NULL, msg, sizeof(msg)), WEFT_EINVAL);
}

/* Headers that declare more than the file holds are refused before anything
 * is allocated for them (a 154-byte file declaring 781,353,510 float64s
 * used to ask for 6.25 GB; a version-2 header length of 0xffff0074 for 4 GB). */
static void test_npy_sizes_beyond_the_file_are_refused_first(void **state)
{
    (void)state;
    unsigned char bytes[26] = {0};
    write_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (781353510,), }", bytes,
              sizeof(bytes));
    weft_tensor_t *t = (weft_tensor_t *)(uintptr_t)1;
    char msg[256], want[256];
    assert_int_equal(weft_npy_load(path, &t, msg, sizeof(msg)), WEFT_EIO);
    assert_null(t);
    snprintf(want, sizeof(want), "%s: truncated data: 6250828080 bytes declared, 26 left in the "
             "file", path);
    assert_string_equal(msg, want);
    /* the 128-byte preamble and header plus 26 data bytes */
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    assert_int_equal(ftell(f), 154);
    fclose(f);

    static const unsigned char v2[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0x74, 0x00, 0xff,
                                       0xff, '{', '}', '\n'};
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(v2, 1, sizeof(v2), f), sizeof(v2));
    fclose(f);
    assert_int_equal(weft_npy_load(path, &t, msg, sizeof(msg)), WEFT_EIO);
    snprintf(want, sizeof(want), "%s: truncated header: 4294901876 bytes declared, 3 left in the "
             "file", path);
    assert_string_equal(msg, want);

    write_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }",
              bytes, 8);
    assert_int_equal(weft_npy_load(path, &t, msg, sizeof(msg)), WEFT_EOVERFLOW);
    snprintf(want, sizeof(want), "%s: the shape's byte size does not fit in int64", path);
    assert_string_equal(msg, want);
    assert_null(t);
}

/* The writer's bytes, compared with the format: magic, version 1.0, the
 * little-endian header length, the dict padded with spaces and a newline to
 * a multiple of 64 bytes (here 128), then the data. */
static void test_npy_save_writes_the_format_byte_for_byte(void **state)
{
    (void)state;
    double d[6] = {1, 2, 3, 4, 5, 6.5};
    const int64_t shape[2] = {2, 3};
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, shape, NULL, d, &t), WEFT_OK);
    char msg[256];
    assert_int_equal(weft_npy_save(path, t, msg, sizeof(msg)), WEFT_OK);
    weft_tensor_release(t);
    char want[128 + sizeof(d)];
    const char dict[] = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
    memcpy(want, "\x93NUMPY\x01\x00\x76\x00", 10); /* 118 = 128 - 10 */
    memset(want + 10, ' ', 117);
    memcpy(want + 10, dict, strlen(dict));
    want[127] = '\n';
    memcpy(want + 128, d, sizeof(d));
    char got[sizeof(want) + 1];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(got, 1, sizeof(got), f), sizeof(want));
    fclose(f);
    assert_memory_equal(got, want, sizeof(want));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_npy_v1_float64_matrix_loads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_npy_new_dtypes_round_trip_with_numpy_descr, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_npy_complex_save_round_trips, setup, teardown),
        cmocka_unit_test_setup_teardown(test_npy_v2_and_every_dtype_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_npy_unsupported_and_malformed_files_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_npy_sizes_beyond_the_file_are_refused_first, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_npy_save_writes_the_format_byte_for_byte, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("npy", tests, NULL, NULL);
}

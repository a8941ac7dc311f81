/* Profiling of compiled functions: per-apply / per-op / per-class data on a
 * graph of sleeping nodes with known costs, the critical path, the text
 * report's tables, the Chrome trace JSON (validated with python3 -m
 * json.tool), WEFT_PROFILE=1 reports at destroy and at exit (this test
 * re-runs itself as a child process), and the API's bad inputs. */
#define _POSIX_C_SOURCE 200809L /* fmemopen, setenv */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "compile_test_ops.h"

static weft_graph_t *g;
static const char *self_path;
static const int64_t S8[1] = {8};

static int setup(void **state)
{
    (void)state;
    return weft_graph_create(NULL, &g) == WEFT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    weft_graph_destroy(g);
    return 0;
}

static weft_var_t *sleep_node(weft_var_t *x, int us)
{
    return ct_call(g, &ct_sleep_class, &us, 1, x, NULL);
}

/* A = Sleep 20ms (x), B = Sleep 4ms (x), C = Add(A, B), D = Sleep 10ms (C):
 * the critical path is A -> C -> D. */
static weft_function_t *known_costs(bool profile, const char *name)
{
    weft_var_t *x = ct_var(g, "x", 1, S8);
    weft_var_t *a = sleep_node(x, 20000), *b = sleep_node(x, 4000);
    weft_var_t *c = ct_call(g, &ct_add_class, NULL, 2, a, b);
    weft_var_t *d = sleep_node(c, 10000);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 2;
    o.profile = profile;
    o.name = name;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &d, 0, NULL, &o, &f), WEFT_OK);
    return f;
}

static void call_n(weft_function_t *f, int n)
{
    weft_tensor_t *x = ct_tensor(1, S8, 1.0), *y = ct_tensor(1, S8, 0.0);
    for (int i = 0; i < n; i++) assert_int_equal(weft_function_call(f, 1, &x, 1, &y), WEFT_OK);
    assert_true(weft_tensor_flat_get(y, 2) == 6.0);
    weft_tensor_release(x);
    weft_tensor_release(y);
}

static const weft_profile_apply_t *row_named(const weft_profile_t *p, const char *prefix,
                                             int nth)
{
    for (size_t i = 0; i < p->n_applies; i++)
        if (!strncmp(p->applies[i].op_class, prefix, strlen(prefix)) && nth-- == 0)
            return &p->applies[i];
    fail_msg("no row %s", prefix);
    return NULL;
}

static void test_profile_known_costs_give_sums_and_critical_path(void **state)
{
    (void)state;
    weft_function_t *f = known_costs(true, "known");
    call_n(f, 3);
    weft_profile_t *p;
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_TOTAL, &p), WEFT_OK);
    assert_string_equal(p->function, "known");
    assert_int_equal(p->calls, 3);
    assert_int_equal(p->n_applies, 4);
    assert_int_equal(p->workers, 2);
    uint64_t sum = 0, busy = 0;
    double pct = 0;
    for (size_t i = 0; i < p->n_applies; i++) {
        assert_int_equal(p->applies[i].calls, 3);
        assert_int_equal(p->applies[i].index, i);
        sum += p->applies[i].time_ns;
        pct += p->applies[i].percent;
    }
    for (unsigned w = 0; w < p->workers; w++) busy += p->worker_busy_ns[w];
    assert_int_equal(sum, p->node_time_ns);
    assert_int_equal(busy, p->node_time_ns);
    assert_true(pct > 99.9 && pct < 100.1);
    assert_true(p->node_time_ns >= 3 * 34000000ull);
    assert_true(p->call_time_ns >= p->run_time_ns);
    assert_true(p->run_time_ns >= 3 * 30000000ull);
    /* A (20ms) -> Add -> D (10ms); B (4ms) runs beside A */
    const weft_profile_apply_t *a = row_named(p, "Sleep", 0), *b = row_named(p, "Sleep", 1);
    if (a->time_ns < b->time_ns) {
        const weft_profile_apply_t *t = a;
        a = b;
        b = t;
    }
    const weft_profile_apply_t *add = row_named(p, "Add", 0);
    assert_int_equal(p->n_critical, 3);
    assert_int_equal(p->critical_path[0], a->index);
    assert_int_equal(p->critical_path[1], add->index);
    assert_true(a->on_critical_path && add->on_critical_path && !b->on_critical_path);
    assert_true(p->critical_path_ns >= 3 * 30000000ull);
    assert_true(p->critical_path_ns < p->node_time_ns);
    /* node_time / critical_path: above 1 since B is off the path; not an
     * upper bound from the sleeps' lengths, which a loaded machine stretches */
    assert_true(p->ideal_speedup > 1.0);
    assert_true(fabs(p->ideal_speedup - (double)p->node_time_ns / (double)p->critical_path_ns) <
                1e-9);
    assert_true(p->parallelism > 0.5);
    /* Ops and Class tables: sorted by time, Sleep first */
    assert_int_equal(p->n_classes, 2);
    assert_string_equal(p->classes[0].name, "Sleep");
    assert_int_equal(p->classes[0].applies, 3);
    assert_int_equal(p->classes[0].calls, 9);
    assert_string_equal(p->classes[1].name, "Add");
    assert_int_equal(p->n_ops, 2); /* Sleep{...} props print as one op name per class */
    weft_profile_destroy(p);
    /* last call only */
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
    assert_int_equal(p->calls, 1);
    for (size_t i = 0; i < p->n_applies; i++) {
        assert_int_equal(p->applies[i].calls, 1);
        assert_true(p->applies[i].end_ns > p->applies[i].start_ns);
        assert_true(p->applies[i].worker < 2);
    }
    assert_true(p->critical_path_ns >= 30000000ull);
    weft_profile_destroy(p);
    assert_int_equal(weft_profile_reset(f), WEFT_OK);
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_TOTAL, &p), WEFT_OK);
    assert_int_equal(p->calls, 0);
    assert_int_equal(p->node_time_ns, 0);
    weft_profile_destroy(p);
    weft_function_destroy(f);
}

static void test_profile_text_report_contains_the_tables(void **state)
{
    (void)state;
    weft_function_t *f = known_costs(true, "report");
    call_n(f, 2);
    static char buf[32768];
    memset(buf, 0, sizeof buf);
    FILE *m = fmemopen(buf, sizeof buf - 1, "w");
    assert_int_equal(weft_function_print_profile(f, m), WEFT_OK);
    fclose(m);
    const char *want[] = {"Function profiling\n==================\n", "Message: report",
                          "Time in 2 calls to weft_function_call:", "Time in nodes:",
                          "Achieved parallelism", "Critical path:", "ideal speedup",
                          "Worker 0: busy", "Worker 1: busy", "Peak memory of intermediates:",
                          /* 8-element values stay in their cells: nothing planned */
                          "Memory plan: arena 0.0 KB; sequential run, free after last use: "
                          "0.0 KB\n",
                          "Number of Apply nodes: 4", "\nClass\n-----\n",
                          ("<% time> <sum %> <apply time> <time per call> <type> <#call> "
                           "<#apply> <Class name>"),
                          "\nOps\n---\n", "<Op name>", "\nApply\n-----", "<id>",
                          "Sleep(x)", "Add(Sleep.out#0, Sleep.out#1)", "<out bytes> <out types>",
                          "64B  float64[8]  Sleep(x)", "\nRewrites (compile)\n",
                          "... (remaining 0 Apply instances", "Critical path\n-------------\n"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(buf, want[i])) fail_msg("missing '%s' in:\n%s", want[i], buf);
    weft_function_destroy(f);
}

/* y = AddInplace(Sleep(x), x) with x mutable: the row says what it destroys
 * in words and allocates nothing; the JSON, CSV, multi-call trace and dot
 * exports carry the same rows. */
static weft_function_t *inplace_fn(void)
{
    weft_var_t *x = ct_var(g, "x", 1, S8);
    weft_var_t *a = sleep_node(x, 1000);
    weft_var_t *y = ct_call(g, &ct_add_inplace_class, NULL, 2, a, x);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    bool mut[1] = {true};
    o.mode = "fast_run";
    o.threads = 1;
    o.profile = true;
    o.accept_inplace = true;
    o.input_mutable = mut;
    o.name = "inplace";
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    return f;
}

/* Runs write into a memory buffer and returns the text (static storage). */
static const char *written(weft_status_t (*write)(const weft_profile_t *, FILE *),
                           const weft_profile_t *p)
{
    static char buf[16384];
    memset(buf, 0, sizeof buf);
    FILE *m = fmemopen(buf, sizeof buf - 1, "w");
    assert_int_equal(write(p, m), WEFT_OK);
    fclose(m);
    return buf;
}

static void test_profile_rows_name_destroyed_input_types_and_bytes(void **state)
{
    (void)state;
    weft_function_t *f = inplace_fn();
    weft_tensor_t *x = ct_tensor(1, S8, 1.0), *y = NULL;
    assert_int_equal(weft_function_call(f, 1, &x, 1, &y), WEFT_OK);
    weft_tensor_release(y);
    weft_profile_t *p;
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_TOTAL, &p), WEFT_OK);
    assert_int_equal(p->n_applies, 2);
    assert_string_equal(p->applies[0].name, "Sleep(x)");
    assert_string_equal(p->applies[0].out_types, "float64[8]");
    assert_int_equal(p->applies[0].out_bytes, 64);
    assert_int_equal(p->applies[0].destroys, -1);
    assert_string_equal(p->applies[1].name, "AddInplace(Sleep.out#0, x) destroys input 0");
    assert_string_equal(p->applies[1].op, "AddInplace destroys input 0");
    assert_int_equal(p->applies[1].out_bytes, 0);
    assert_int_equal(p->applies[1].destroys, 0);
    assert_true(p->n_rewrites > 0);
    const char *csv = written(weft_profile_write_csv, p);
    assert_non_null(strstr(csv, "id,name,op,class,calls,time_ns,percent,worker,critical,"
                                "out_types,out_bytes,destroys,inplace_bytes,inplace_orderings,reuses_input,skips\n0,\"Sleep(x)\",\"Sleep\","
                                "\"Sleep\",1,"));
    assert_non_null(strstr(csv, ",\"float64[8]\",0,0,64,0,-1,0\n"));
    const char *json = written(weft_profile_write_json, p);
    assert_non_null(strstr(json, "\"name\": \"AddInplace(Sleep.out#0, x) destroys input 0\""));
    assert_non_null(strstr(json, "\"format\": \"weft-profile\""));
    weft_profile_destroy(p);
    weft_tensor_release(x);
    weft_function_destroy(f);
}

static void test_profile_trace_of_several_calls_and_dot(void **state)
{
    (void)state;
    weft_function_t *f = known_costs(true, "calls");
    weft_profile_t *snaps[2];
    for (int k = 0; k < 2; k++) {
        call_n(f, 1);
        assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &snaps[k]), WEFT_OK);
    }
    uint64_t offs[2] = {0, 1000000000ull};
    static char buf[16384];
    memset(buf, 0, sizeof buf);
    FILE *m = fmemopen(buf, sizeof buf - 1, "w");
    assert_int_equal(
        weft_profile_write_trace_calls((const weft_profile_t *const *)snaps, offs, 2, m), WEFT_OK);
    fclose(m);
    size_t events = 0;
    for (const char *c = buf; (c = strstr(c, "\"ph\": \"X\"")) != NULL; c++) events++;
    assert_int_equal(events, 8);
    assert_non_null(strstr(buf, "\"call\": 1"));
    assert_int_equal(weft_profile_write_trace_calls(NULL, offs, 2, stdout), WEFT_EINVAL);
    assert_int_equal(
        weft_profile_write_trace_calls((const weft_profile_t *const *)snaps, offs, 0, stdout),
        WEFT_EINVAL);
    memset(buf, 0, sizeof buf);
    m = fmemopen(buf, sizeof buf - 1, "w");
    assert_int_equal(weft_profile_write_dot(f, snaps[1], m), WEFT_OK);
    fclose(m);
    assert_non_null(strstr(buf, "label=\"2: Add(Sleep.out#0, Sleep.out#1)\\nfloat64[8]\\n"));
    assert_non_null(strstr(buf, "fillcolor=\"#ff"));
    assert_int_equal(weft_profile_write_dot(NULL, snaps[1], stdout), WEFT_EINVAL);
    for (int k = 0; k < 2; k++) weft_profile_destroy(snaps[k]);
    weft_function_destroy(f);
}

static void test_profile_trace_json_parses(void **state)
{
    (void)state;
    weft_function_t *f = known_costs(true, "trace \"quoted\"");
    call_n(f, 1);
    weft_profile_t *p;
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
    char path[] = "/tmp/weft_trace_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *out = fdopen(fd, "w");
    assert_int_equal(weft_profile_write_trace(p, out), WEFT_OK);
    fclose(out);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "python3 -m json.tool %s > /dev/null", path);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "test $(grep -c '\"ph\": \"X\"' %s) -eq 4", path);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "grep -q '\"thread_name\"' %s", path);
    assert_int_equal(system(cmd), 0);
    remove(path);
    assert_int_equal(weft_profile_write_trace(NULL, stdout), WEFT_EINVAL);
    assert_int_equal(weft_profile_write_trace(p, NULL), WEFT_EINVAL);
    weft_profile_destroy(p);
    weft_function_destroy(f);
}

static void test_profile_bad_arguments_return_exact_status(void **state)
{
    (void)state;
    weft_function_t *off = known_costs(false, "off"), *on = known_costs(true, "on");
    weft_profile_t *p = (weft_profile_t *)1;
    assert_int_equal(weft_profile_create(NULL, WEFT_PROFILE_TOTAL, &p), WEFT_EINVAL);
    assert_int_equal(weft_profile_create(on, WEFT_PROFILE_TOTAL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_profile_create(on, (weft_profile_scope_t)7, &p), WEFT_EINVAL);
    const char *not_profiled = ": function 'off' was compiled without profiling (set "
                               "options.profile, or WEFT_PROFILE=1 in the environment)";
    char want[256];
    assert_int_equal(weft_profile_create(off, WEFT_PROFILE_TOTAL, &p), WEFT_ESTATE);
    snprintf(want, sizeof want, "weft_profile_create%s", not_profiled);
    assert_string_equal(weft_function_last_error(off), want);
    assert_null(p);
    assert_int_equal(weft_profile_create(on, WEFT_PROFILE_LAST_CALL, &p), WEFT_ESTATE);
    assert_string_equal(weft_function_last_error(on),
                        "on: weft_profile_create: no call yet to take LAST_CALL from");
    assert_int_equal(weft_profile_reset(NULL), WEFT_EINVAL);
    assert_int_equal(weft_profile_reset(off), WEFT_ESTATE);
    snprintf(want, sizeof want, "weft_profile_reset%s", not_profiled);
    assert_string_equal(weft_function_last_error(off), want);
    assert_int_equal(weft_profile_print(NULL, 0, stdout), WEFT_EINVAL);
    assert_int_equal(weft_function_print_profile(off, stdout), WEFT_ESTATE);
    snprintf(want, sizeof want, "weft_profile_create%s", not_profiled);
    assert_string_equal(weft_function_last_error(off), want);
    assert_int_equal(weft_function_print_profile(NULL, stdout), WEFT_EINVAL);
    weft_profile_destroy(NULL);
    weft_function_destroy(off);
    weft_function_destroy(on);
}

/* Child mode: compile two profiled-by-environment functions; destroy one,
 * leave the other alive for the atexit report. */
static int child_main(void)
{
    weft_graph_create(NULL, &g);
    weft_function_t *f1 = known_costs(false, "destroyed_fn");
    weft_function_t *f2 = known_costs(false, "alive_at_exit_fn");
    call_n(f1, 1);
    call_n(f2, 1);
    weft_function_destroy(f1);
    fprintf(stderr, "CHILD: destroyed\n");
    return 0; /* f2 reported by the atexit handler */
}

static void test_profile_env_reports_at_destroy_and_at_exit(void **state)
{
    (void)state;
    char path[] = "/tmp/weft_envprof_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "WEFT_PROFILE=1 '%s' --child-profile 2> %s", self_path, path);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "awk '/Message: destroyed_fn/{a=NR} /CHILD: destroyed/{b=NR} "
             "/Message: alive_at_exit_fn/{c=NR} END{exit !(a && b > a && c > b)}' %s", path);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "test $(grep -c 'Function profiling' %s) -eq 2", path);
    assert_int_equal(system(cmd), 0);
    remove(path);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
    self_path = argv[0];
    if (argc > 1 && !strcmp(argv[1], "--child-profile")) return child_main();
    const struct CMUnitTest tests[] = {
        T(test_profile_known_costs_give_sums_and_critical_path),
        T(test_profile_text_report_contains_the_tables),
        T(test_profile_rows_name_destroyed_input_types_and_bytes),
        T(test_profile_trace_of_several_calls_and_dot),
        T(test_profile_trace_json_parses),
        T(test_profile_bad_arguments_return_exact_status),
        T(test_profile_env_reports_at_destroy_and_at_exit),
    };
    return cmocka_run_group_tests_name("profile", tests, NULL, NULL);
}

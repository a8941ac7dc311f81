/* Allocation failures in the functions issues 15 and 16 added (History,
 * NodeFinder, fgraph variables and str, node keys and costs, op clone,
 * OpFromGraph options, profile writers, npy save): allocation k fails, for
 * every k; each call fails with WEFT_ENOMEM saying "out of memory", or the
 * scenario gives its reference result, and nothing leaks (LeakSanitizer in
 * the ASan build, tests/support/fault_sweep.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "support/alloc_count.h"
#include "support/fault_sweep.h"
#include "weft/history.h"
#include "weft/node_cost.h"
#include "weft/node_finder.h"
#include "weft/npy.h"
#include "weft/weft.h"

/* The state one scenario run threads through its steps; each step runs only
 * while st is WEFT_OK and leaves the failure's text in msg. */
typedef struct run {
    weft_status_t st;
    char *msg;
    size_t cap;
    weft_graph_t *g;
    weft_fgraph_t *fg;
    weft_var_t *x, *y, *out;
} run_t;

/* Records a step's status with the text its module keeps. */
static void step(run_t *r, weft_status_t st, const char *text)
{
    if (r->st != WEFT_OK || st == WEFT_OK) return;
    r->st = st;
    snprintf(r->msg, r->cap, "%s", text && *text ? text : weft_status_str(st));
}

static void build(run_t *r)
{
    const weft_type_t *t = NULL;
    step(r, weft_graph_create(NULL, &r->g), "out of memory (no context to say so)");
    if (r->st == WEFT_OK) step(r, weft_type_tensor(r->g, WEFT_FLOAT64, 1, (int64_t[]){3}, &t),
                               weft_graph_last_error(r->g));
    if (r->st != WEFT_OK) return;
    r->x = weft_var_create(r->g, t, "x");
    r->y = weft_var_create(r->g, t, "y");
    r->out = weft_tanh(r->g, weft_add(r->g, r->x, r->y));
    step(r, weft_graph_error(r->g), weft_graph_error_message(r->g));
    weft_var_t *in[2] = {r->x, r->y};
    if (r->st == WEFT_OK)
        step(r, weft_fgraph_create(r->g, 2, in, 1, &r->out, NULL, NULL, &r->fg),
             weft_graph_last_error(r->g));
}

/* History: attach, one replacement, revert and redo. */
static void history(run_t *r, double *res)
{
    uint64_t t0 = 0, t1 = 0;
    weft_fgraph_t *fg = r->fg;
    step(r, weft_history_attach(fg), weft_fgraph_last_error(fg));
    step(r, r->st ? r->st : weft_history_checkpoint(fg, &t0), weft_fgraph_last_error(fg));
    weft_var_t *e = r->st ? NULL : weft_exp(r->g, weft_add(r->g, weft_fgraph_input(fg, 0),
                                                          weft_fgraph_input(fg, 1)));
    if (r->st == WEFT_OK && !e) step(r, weft_graph_error(r->g), weft_graph_error_message(r->g));
    weft_var_t *old = weft_fgraph_output(fg, 0);
    step(r, r->st ? r->st : weft_fgraph_replace(fg, old, e, "test"), weft_fgraph_last_error(fg));
    step(r, r->st ? r->st : weft_history_checkpoint(fg, &t1), weft_fgraph_last_error(fg));
    step(r, r->st ? r->st : weft_history_revert(fg, t0), weft_fgraph_last_error(fg));
    step(r, r->st ? r->st : weft_history_redo(fg, t1), weft_fgraph_last_error(fg));
    if (r->st == WEFT_OK) *res += (double)weft_history_n_entries(fg);
}

/* NodeFinder, the variable set, the one-line form, node keys and costs. */
static void queries(run_t *r, double *res)
{
    weft_fgraph_t *fg = r->fg;
    weft_apply_t *const *nodes = NULL;
    weft_var_t *const *vars = NULL;
    size_t n = 0, nv = 0, len = 0;
    step(r, r->st ? r->st : weft_node_finder_attach(fg), weft_fgraph_last_error(fg));
    const weft_op_t *op = r->st ? NULL : weft_apply_op(weft_var_owner(weft_fgraph_output(fg, 0)));
    step(r, r->st ? r->st : weft_node_finder_by_op(fg, op, &nodes, &n), weft_fgraph_last_error(fg));
    step(r, r->st ? r->st : weft_fgraph_variables(fg, &vars, &nv), weft_fgraph_last_error(fg));
    char buf[128];
    step(r, r->st ? r->st : weft_fgraph_str(fg, buf, sizeof(buf), &len),
         weft_fgraph_last_error(fg));
    uint64_t keys[64];
    step(r, r->st ? r->st : weft_fgraph_node_keys(fg, 64, keys), weft_fgraph_last_error(fg));
    uint64_t k1[1] = {keys[0]};
    double ns[1] = {1000.0};
    step(r, r->st ? r->st : weft_fgraph_set_node_costs(fg, 1, k1, ns), weft_fgraph_last_error(fg));
    const weft_op_t *clone = NULL;
    step(r, r->st ? r->st : weft_op_clone(r->g, op, &clone), weft_graph_last_error(r->g));
    if (r->st == WEFT_OK) *res += (double)(n + nv + len);
}

/* An OpFromGraph with a bound constant and a destroy_map. */
static void ofg(run_t *r, double *res)
{
    if (r->st != WEFT_OK) return;
    double three[3] = {1, 2, 3};
    weft_var_t *c = weft_constant_create(r->g, weft_var_type(r->y), three, sizeof(three));
    weft_var_t *sum = weft_add(r->g, r->x, r->y);
    step(r, weft_graph_error(r->g), weft_graph_error_message(r->g));
    if (r->st != WEFT_OK) return;
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    weft_op_alias_t dm = {0, 0};
    o.n_destroy = 1;
    o.destroy_map = &dm;
    o.on_unused_input = WEFT_OFG_UNUSED_RAISE;
    weft_var_t *bound[2] = {NULL, c};
    o.input_constants = bound;
    const weft_op_t *op = NULL;
    weft_var_t *in[2] = {r->x, r->y};
    step(r, weft_ofg_create(r->g, 2, in, 1, &sum, &o, &op), weft_graph_last_error(r->g));
    if (r->st == WEFT_OK) *res += 1;
}

static long faulted_graph(long k, weft_status_t *st, char *msg, size_t cap, double *res)
{
    run_t r = {WEFT_OK, msg, cap, NULL, NULL, NULL, NULL, NULL};
    *res = 0;
    msg[0] = '\0';
    alloc_fail_at(k);
    build(&r);
    history(&r, res);
    queries(&r, res);
    ofg(&r, res);
    weft_fgraph_destroy(r.fg);
    weft_graph_destroy(r.g);
    long n = alloc_count_stop();
    *st = r.st;
    if (r.st != WEFT_OK) *res = 0;
    return n;
}

/* Profile writers and npy save on a compiled, profiled function. */
static long faulted_writers(long k, weft_status_t *st, char *msg, size_t cap, double *res)
{
    run_t r = {WEFT_OK, msg, cap, NULL, NULL, NULL, NULL, NULL};
    weft_function_t *f = NULL;
    weft_profile_t *p = NULL;
    weft_tensor_t *xv = NULL, *yv = NULL, *out = NULL;
    FILE *devnull = fopen("/dev/null", "w");
    assert_non_null(devnull);
    *res = 0;
    msg[0] = '\0';
    alloc_fail_at(k);
    build(&r);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.profile = true;
    weft_var_t *in[2] = {r.x, r.y};
    if (r.st == WEFT_OK)
        step(&r, weft_function_compile(2, in, 1, &r.out, 0, NULL, &o, &f),
             weft_function_last_error(NULL));
    step(&r, r.st ? r.st : weft_tensor_empty(WEFT_FLOAT64, 1, (int64_t[]){3}, &xv),
         weft_tensor_last_error());
    step(&r, r.st ? r.st : weft_tensor_empty(WEFT_FLOAT64, 1, (int64_t[]){3}, &yv),
         weft_tensor_last_error());
    weft_tensor_t *args[2] = {xv, yv};
    step(&r, r.st ? r.st : weft_function_call(f, 2, args, 1, &out), weft_function_last_error(f));
    step(&r, r.st ? r.st : weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), NULL);
    step(&r, r.st ? r.st : weft_profile_write_json(p, devnull), NULL);
    step(&r, r.st ? r.st : weft_profile_write_csv(p, devnull), NULL);
    const weft_profile_t *calls[1] = {p};
    step(&r, r.st ? r.st : weft_profile_write_trace_calls(calls, (uint64_t[]){0}, 1, devnull),
         NULL);
    step(&r, r.st ? r.st : weft_profile_write_dot(f, p, devnull), NULL);
    char nmsg[256] = "";
    step(&r, r.st ? r.st : weft_npy_save("/dev/null", out, nmsg, sizeof(nmsg)), nmsg);
    weft_profile_destroy(p);
    weft_tensor_release(out);
    weft_tensor_release(xv);
    weft_tensor_release(yv);
    if (f) assert_int_equal(weft_function_destroy(f), WEFT_OK);
    weft_fgraph_destroy(r.fg);
    weft_graph_destroy(r.g);
    long n = alloc_count_stop();
    fclose(devnull);
    *st = r.st;
    *res = r.st == WEFT_OK ? 1 : 0;
    return n;
}

static void test_graph_features_allocation_failures(void **state)
{
    (void)state;
    double ref = 0;
    weft_status_t st;
    char msg[512];
    faulted_graph(0, &st, msg, sizeof(msg), &ref);
    if (st != WEFT_OK) fail_msg("reference run: %s", msg);
    fault_sweep(faulted_graph, ref, 20);
}

static void test_writers_allocation_failures(void **state)
{
    (void)state;
    fault_sweep(faulted_writers, 1, 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_features_allocation_failures),
        cmocka_unit_test(test_writers_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Rewrite test support (see rw_fixture.h). */
#include "rw_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tensor/kernel_int.h"

int rfx_setup(void **state)
{
    rfx_t *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(weft_graph_create(NULL, &f->g), WEFT_OK);
    int64_t s34[] = {3, 4}, s44[] = {4, 4}, s4[] = {4}, s14[] = {1, 4};
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 2, s34, &f->m34), WEFT_OK);
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 2, s44, &f->m44), WEFT_OK);
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 1, s4, &f->v4), WEFT_OK);
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 0, NULL, &f->s), WEFT_OK);
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 2, s14, &f->m14), WEFT_OK);
    assert_int_equal(weft_type_tensor(f->g, WEFT_INT32, 2, s34, &f->i34), WEFT_OK);
    f->seed = 12345;
    *state = f;
    return 0;
}

int rfx_teardown(void **state)
{
    rfx_t *f = *state;
    weft_graph_destroy(f->g);
    free(f);
    return 0;
}

weft_var_t *rfx_var(rfx_t *f, const weft_type_t *t, const char *name)
{
    weft_var_t *v;
    assert_non_null(v = weft_var_create(f->g, t, name));
    return v;
}

weft_var_t *rfx_const(rfx_t *f, weft_dtype_t dt, double val)
{
    weft_var_t *v;
    assert_non_null(v = weft_constant_scalar(f->g, dt, val));
    return v;
}

static size_t expr_rec(const weft_var_t *v, char *buf, size_t cap)
{
    weft_apply_t *a = weft_var_owner(v);
    if (!a) {
        int n = weft_var_print(v, buf, cap);
        return n < 0 ? 0 : ((size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0);
    }
    char ob[256];
    weft_op_print(weft_apply_op(a), ob, sizeof ob);
    size_t ol = strlen(ob);
    if (ol >= 2 && strcmp(ob + ol - 2, "{}") == 0) ob[ol - 2] = '\0'; /* "Add{}" -> "Add" */
    size_t len = (size_t)snprintf(buf, cap, "%s(", ob);
    if (len >= cap) return cap ? cap - 1 : 0;
    for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
        if (i) len += (size_t)snprintf(buf + len, cap - len, ", ");
        if (len >= cap) return cap - 1;
        len += expr_rec(weft_apply_input(a, i), buf + len, cap - len);
    }
    if (len + 1 < cap) {
        buf[len++] = ')';
        buf[len] = '\0';
    }
    return len;
}

void rfx_expr(const weft_var_t *v, char *buf, size_t cap)
{
    buf[0] = '\0';
    expr_rec(v, buf, cap);
}

void rfx_fg_expr(weft_fgraph_t *fg, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < weft_fgraph_n_outputs(fg) && len + 3 < cap; k++) {
        if (k) len += (size_t)snprintf(buf + len, cap - len, "; ");
        len += expr_rec(weft_fgraph_output(fg, k), buf + len, cap - len);
    }
}

weft_fgraph_t *rfx_fgraph(rfx_t *f, size_t n_in, weft_var_t *const *in, size_t n_out,
                          weft_var_t *const *out, bool mutable_inputs)
{
    bool mut[16];
    for (size_t i = 0; i < n_in; i++) mut[i] = mutable_inputs;
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    o.input_mutable = mut;
    weft_fgraph_t *fg;
    assert_int_equal(weft_fgraph_create(f->g, n_in, in, n_out, out, &o, NULL, &fg), WEFT_OK);
    return fg;
}

static double urand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

void rfx_random_inputs(rfx_t *f, size_t n, weft_var_t *const *in, weft_tensor_t **vals,
                       double lo, double hi)
{
    for (size_t i = 0; i < n; i++) {
        const weft_type_t *t = weft_var_type(in[i]);
        int nd = weft_type_ndim(t);
        int64_t shape[WEFT_MAX_NDIM];
        for (int d = 0; d < nd; d++) shape[d] = weft_type_dim(t, d) < 0 ? 3 : weft_type_dim(t, d);
        assert_int_equal(weft_tensor_empty(weft_type_dtype(t), nd, shape, &vals[i]), WEFT_OK);
        size_t sz = weft_tensor_size(vals[i]);
        int64_t idx[WEFT_MAX_NDIM] = {0};
        for (size_t e = 0; e < sz; e++) {
            size_t r = e;
            for (int d = nd - 1; d >= 0; d--) {
                idx[d] = (int64_t)(r % (size_t)shape[d]);
                r /= (size_t)shape[d];
            }
            double x = weft_type_dtype(t) >= WEFT_FLOAT32 ? lo + (hi - lo) * urand(&f->seed)
                                                         : (double)((int)(urand(&f->seed) * 7) - 3);
            assert_int_equal(weft_tensor_set(vals[i], idx, x), WEFT_OK);
        }
    }
}

void rfx_eval(rfx_t *f, size_t n_in, weft_var_t *const *in, weft_tensor_t *const *vals,
              size_t n_out, weft_var_t *const *outs, weft_tensor_t **res)
{
    weft_tensor_t *copies[16] = {NULL};
    for (size_t i = 0; i < n_in; i++)
        assert_int_equal(weft_tensor_clone(vals[i], &copies[i]), WEFT_OK);
    weft_status_t st = weft_eval(f->g, n_in, in, copies, n_out, outs, res);
    if (st != WEFT_OK) fprintf(stderr, "eval: %s\n", weft_graph_last_error(f->g));
    assert_int_equal(st, WEFT_OK);
    rfx_release(n_in, copies);
}

void rfx_assert_close(const weft_tensor_t *a, const weft_tensor_t *b, double rtol, double atol)
{
    bool eq = false;
    assert_int_equal(weft_tensor_allclose(a, b, rtol, atol, &eq), WEFT_OK);
    assert_true(eq);
}

void rfx_release(size_t n, weft_tensor_t **t)
{
    for (size_t i = 0; i < n; i++) weft_tensor_release(t[i]);
}

size_t rfx_count_op(weft_fgraph_t *fg, const char *op_print)
{
    weft_apply_t *const *nodes;
    size_t n, c = 0;
    assert_int_equal(weft_fgraph_applies(fg, &nodes, &n), WEFT_OK);
    for (size_t i = 0; i < n; i++) {
        char b[256];
        weft_op_print(weft_apply_op(nodes[i]), b, sizeof b);
        size_t bl = strlen(b);
        if (bl >= 2 && strcmp(b + bl - 2, "{}") == 0) b[bl - 2] = '\0';
        c += strcmp(b, op_print) == 0;
    }
    return c;
}

static weft_tensor_t *const_tensor(const weft_var_t *c)
{
    const weft_type_t *t = weft_var_type(c);
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < weft_type_ndim(t); d++) shape[d] = weft_type_dim(t, d);
    const void *data;
    size_t nb;
    weft_tensor_t *r;
    assert_int_equal(weft_constant_data(c, &data, &nb), WEFT_OK);
    assert_int_equal(weft_tensor_from_data(weft_type_dtype(t), weft_type_ndim(t), shape, NULL,
                                           (void *)data, &r), WEFT_OK);
    return r;
}

void rfx_eval_fgraph(rfx_t *f, weft_fgraph_t *fg, size_t n_in, weft_var_t *const *in,
                     weft_tensor_t *const *vals, weft_tensor_t **res)
{
    size_t nv = weft_graph_n_vars(f->g);
    weft_tensor_t **val = calloc(nv, sizeof *val);
    assert_non_null(val);
    for (size_t i = 0; i < n_in; i++)
        assert_int_equal(weft_tensor_clone(vals[i], &val[weft_var_id(in[i])]), WEFT_OK);
    weft_apply_t *const *order;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    weft_kernel_ctx_t ctx;
    for (size_t k = 0; k < n; k++) {
        weft_apply_t *a = order[k];
        weft_tensor_t *ins[16], *outs[16] = {NULL};
        for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
            weft_var_t *v = weft_apply_input(a, i);
            if (!val[weft_var_id(v)] && weft_var_is_constant(v))
                val[weft_var_id(v)] = const_tensor(v);
            ins[i] = val[weft_var_id(v)];
            assert_non_null(ins[i]);
        }
        weft__kernel_ctx_init(&ctx, NULL, NULL, NULL, 0);
        assert_int_equal(weft_op_class(weft_apply_op(a))->perform(a, ins, outs, &ctx), WEFT_OK);
        for (size_t o = 0; o < weft_apply_n_outputs(a); o++)
            val[weft_var_id(weft_apply_output(a, o))] = outs[o];
    }
    for (size_t k = 0; k < weft_fgraph_n_outputs(fg); k++) {
        weft_var_t *o = weft_fgraph_output(fg, k);
        if (!val[weft_var_id(o)] && weft_var_is_constant(o)) val[weft_var_id(o)] = const_tensor(o);
        res[k] = weft_tensor_retain(val[weft_var_id(o)]);
        assert_non_null(res[k]);
    }
    for (size_t i = 0; i < nv; i++) weft_tensor_release(val[i]);
    free(val);
}

weft_var_t *rfx_bin(rfx_t *f, weft_elemwise_kind_t k, weft_var_t *a, weft_var_t *b)
{
    weft_var_t *r;
    assert_non_null(r = weft_binary(f->g, k, a, b));
    return r;
}

weft_var_t *rfx_un(rfx_t *f, weft_elemwise_kind_t k, weft_var_t *a)
{
    weft_var_t *r;
    assert_non_null(r = weft_unary(f->g, k, a));
    return r;
}

uint64_t rfx_apply_count(weft_rewriter_t *rw, weft_fgraph_t *fg, const char *name)
{
    weft_rewrite_stats_t *stats;
    assert_int_equal(weft_rewrite_stats_create(&stats), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(rw, fg, stats), WEFT_OK);
    uint64_t applied = 0;
    weft_status_t st = weft_rewrite_stats_get(stats, name, &applied, NULL, NULL);
    assert_true(st == WEFT_OK || st == WEFT_ENOTFOUND);
    weft_rewrite_stats_destroy(stats);
    return applied;
}

/* weft_verify_grad: checks a symbolic gradient against central finite
 * differences, and the seeded random tensors it and the tests use.
 *
 * The function is built once in a private graph context; a non-scalar output
 * y is projected to the scalar sum(y * R) with a fixed random R, so one
 * gradient covers every output element (as PyTensor's verify_grad). Every
 * evaluation runs the sequential evaluator on fresh copies of the points,
 * so in-place ops inside the function cannot corrupt later evaluations. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "tensor/tensor_int.h"
#include "weft/elemwise.h"
#include "weft/eval.h"
#include "weft/grad.h"
#include "weft/reduce.h"

/* splitmix64: small, fast, the same sequence on every platform. */
static uint64_t vg_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double vg_uniform(uint64_t *state)
{
    return (double)(vg_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

weft_status_t weft_verify_grad_random(weft_dtype_t dtype, int ndim, const int64_t *shape,
                                      double lo, double hi, uint64_t seed, weft_tensor_t **out)
{
    if (!out) {
        return weft__tensor_error(WEFT_EINVAL, "weft_verify_grad_random: NULL out");
    }
    *out = NULL;
    if (dtype != WEFT_FLOAT32 && dtype != WEFT_FLOAT64) {
        const char *name = weft_dtype_name(dtype);
        return weft__tensor_error(WEFT_EINVAL,
                                  "weft_verify_grad_random: dtype %s is not float32 or float64",
                                  name ? name : "(invalid)");
    }
    if (!(hi >= lo)) {
        return weft__tensor_error(WEFT_EINVAL, "weft_verify_grad_random: range [%g, %g) is empty",
                                  lo, hi);
    }
    weft_tensor_t *t = NULL;
    weft_status_t st = weft_tensor_empty(dtype, ndim, shape, &t);
    if (st != WEFT_OK) {
        return st;
    }
    uint64_t state = seed;
    size_t n = weft_tensor_size(t);
    void *d = weft_tensor_data(t);
    for (size_t i = 0; i < n; i++) {
        double v = lo + (hi - lo) * vg_uniform(&state);
        if (dtype == WEFT_FLOAT64) {
            ((double *)d)[i] = v;
        } else {
            ((float *)d)[i] = (float)v;
        }
    }
    *out = t;
    return WEFT_OK;
}

typedef struct vg {
    weft_graph_t *g;
    size_t n_in;
    weft_tensor_t *const *points;
    weft_tensor_t **x;   /* contiguous working copies (perturbed) */
    weft_var_t **vars;   /* one root variable per point */
    weft_var_t **grads;  /* symbolic gradients */
    weft_var_t *cost;
    weft_verify_grad_result_t *r;
} vg_t;

static weft_status_t vg_fail(vg_t *v, weft_status_t st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->r->message, sizeof v->r->message, fmt, ap);
    va_end(ap);
    return st;
}

/* Evaluates outs at the current working points (on fresh copies). */
static weft_status_t vg_eval(vg_t *v, size_t n_out, weft_var_t *const *outs,
                             weft_tensor_t **res)
{
    weft_tensor_t **vals = calloc(v->n_in, sizeof *vals);
    weft_status_t st = vals ? WEFT_OK : WEFT_ENOMEM;
    for (size_t i = 0; st == WEFT_OK && i < v->n_in; i++) {
        st = weft_tensor_clone(v->x[i], &vals[i]);
    }
    if (st == WEFT_OK) {
        st = weft_eval(v->g, v->n_in, v->vars, vals, n_out, outs, res);
        if (st != WEFT_OK) {
            vg_fail(v, st, "evaluation failed: %s", weft_graph_last_error(v->g));
        }
    }
    for (size_t i = 0; vals && i < v->n_in; i++) {
        weft_tensor_release(vals[i]);
    }
    free(vals);
    return st;
}

static weft_status_t vg_cost_value(vg_t *v, double *out)
{
    weft_tensor_t *c = NULL;
    weft_status_t st = vg_eval(v, 1, &v->cost, &c);
    if (st == WEFT_OK) {
        *out = weft_tensor_flat_get(c, 0);
        v->r->n_evals++;
    }
    weft_tensor_release(c);
    return st;
}

/* cost = y (0-d) or sum(y * R), R random of y's run-time shape. */
static weft_status_t vg_project(vg_t *v, weft_var_t *y, uint64_t seed)
{
    weft_tensor_t *yv = NULL, *rv = NULL;
    weft_status_t st = vg_eval(v, 1, &y, &yv);
    if (st != WEFT_OK) {
        return st;
    }
    int nd = weft_tensor_ndim(yv);
    if (nd == 0) {
        weft_tensor_release(yv);
        v->cost = y;
        return WEFT_OK;
    }
    weft_dtype_t dt = weft_tensor_dtype(yv);
    const weft_type_t *t = NULL;
    weft_var_t *r = NULL, *prod = NULL;
    st = weft_verify_grad_random(dt, nd, weft_tensor_shape(yv), 0.5, 1.5, seed, &rv);
    if (st == WEFT_OK) {
        st = weft_type_tensor(v->g, dt, nd, weft_tensor_shape(yv), &t);
    }
    if (st == WEFT_OK) {
        st = weft__got(v->g, r = weft_constant_create(v->g, t, weft_tensor_data(rv),
                                                      weft_tensor_size(rv) * weft_dtype_size(dt)));
    }
    if (st == WEFT_OK) {
        st = weft__got(v->g, prod = weft_mul(v->g, y, r));
    }
    if (st == WEFT_OK) {
        st = weft__got(v->g, v->cost = weft_sum(v->g, prod, 0, NULL, false));
    }
    weft_tensor_release(yv);
    weft_tensor_release(rv);
    return st == WEFT_OK ? st : vg_fail(v, st, "projection: %s", weft_graph_error_message(v->g));
}

/* Builds inputs, y = fn(inputs), the cost and its gradients. */
static weft_status_t vg_build(vg_t *v, weft_verify_grad_fn fn, void *user, uint64_t seed)
{
    for (size_t i = 0; i < v->n_in; i++) {
        const weft_tensor_t *p = v->points[i];
        const weft_type_t *t = NULL;
        char name[32];
        snprintf(name, sizeof name, "x%zu", i);
        weft_status_t st = weft_type_tensor(v->g, weft_tensor_dtype(p), weft_tensor_ndim(p),
                                            weft_tensor_shape(p), &t);
        if (st == WEFT_OK) {
            st = weft__got(v->g, v->vars[i] = weft_var_create(v->g, t, name));
        }
        if (st == WEFT_OK) {
            st = weft_tensor_clone(p, &v->x[i]);
        }
        if (st != WEFT_OK) {
            return vg_fail(v, st, "input %zu: %s", i, weft_graph_error_message(v->g));
        }
    }
    weft_var_t *y = fn(v->g, v->n_in, v->vars, user);
    if (!y || weft_graph_error(v->g) != WEFT_OK) {
        weft_status_t st = weft_graph_error(v->g);
        return vg_fail(v, st != WEFT_OK ? st : WEFT_EINVAL, "the function failed: %s",
                       st != WEFT_OK ? weft_graph_error_message(v->g) : "it returned NULL");
    }
    weft_dtype_t dt = weft_type_dtype(weft_var_type(y));
    if (weft_type_kind(weft_var_type(y)) != WEFT_TYPE_TENSOR ||
        (dt != WEFT_FLOAT32 && dt != WEFT_FLOAT64)) {
        return vg_fail(v, WEFT_ETYPE, "the function's output is not a float tensor");
    }
    weft_status_t st = vg_project(v, y, seed);
    if (st != WEFT_OK) {
        return st;
    }
    weft_grad_options_t go = WEFT_GRAD_OPTIONS_INIT;
    go.disconnected = WEFT_GRAD_MISSING_ZERO; /* an unused input: gradient 0 both ways */
    if (weft_grads(v->g, v->cost, v->n_in, v->vars, &go, v->grads)) {
        return WEFT_OK;
    }
    return vg_fail(v, weft_graph_error(v->g), "weft_grad: %s", weft_graph_error_message(v->g));
}

static double vg_load(const weft_tensor_t *t, size_t j)
{
    const void *d = weft_tensor_data(t);
    return weft_tensor_dtype(t) == WEFT_FLOAT32 ? (double)((const float *)d)[j]
                                                 : ((const double *)d)[j];
}

/* Stores v in the point's dtype and returns the value actually stored. */
static double vg_store(weft_tensor_t *t, size_t j, double val)
{
    void *d = weft_tensor_data(t);
    if (weft_tensor_dtype(t) == WEFT_FLOAT32) {
        ((float *)d)[j] = (float)val;
        return ((float *)d)[j];
    }
    ((double *)d)[j] = val;
    return val;
}

typedef struct vg_tol {
    double eps, abs_tol, rel_tol;
} vg_tol_t;

/* Compares one element; records the worst and returns false on a failure. */
static bool vg_compare(vg_t *v, const vg_tol_t *tol, size_t i, size_t j, double num, double sym,
                       bool *failed)
{
    double abs_err = fabs(num - sym);
    double denom = fabs(num) + fabs(sym);
    double rel_err = abs_err / (denom > 1e-8 ? denom : 1e-8);
    bool bad = !(abs_err <= tol->abs_tol || rel_err <= tol->rel_tol);
    weft_verify_grad_result_t *r = v->r;
    if (abs_err > r->max_abs_err) {
        r->max_abs_err = abs_err;
    }
    if ((bad && !*failed) || (!*failed && rel_err >= r->max_rel_err)) {
        r->worst_input = i;
        r->worst_index = j;
        r->numeric = num;
        r->symbolic = sym;
    }
    if (rel_err > r->max_rel_err) {
        r->max_rel_err = rel_err;
    }
    *failed |= bad;
    return !bad;
}

static weft_status_t vg_check_input(vg_t *v, const vg_tol_t *tol, size_t i,
                                    const weft_tensor_t *sym, bool *failed)
{
    weft_tensor_t *x = v->x[i];
    size_t n = weft_tensor_size(x);
    for (size_t j = 0; j < n; j++) {
        double x0 = vg_load(x, j), cp = 0.0, cm = 0.0;
        double xp = vg_store(x, j, x0 + tol->eps);
        weft_status_t st = vg_cost_value(v, &cp);
        double xm = vg_store(x, j, x0 - tol->eps);
        if (st == WEFT_OK) {
            st = vg_cost_value(v, &cm);
        }
        vg_store(x, j, x0);
        if (st != WEFT_OK) {
            return st;
        }
        double num = (cp - cm) / (xp - xm); /* the steps actually taken */
        vg_compare(v, tol, i, j, num, weft_tensor_flat_get(sym, j), failed);
    }
    return WEFT_OK;
}

static weft_status_t vg_check(vg_t *v, const vg_tol_t *tol)
{
    weft_tensor_t **sym = calloc(v->n_in, sizeof *sym);
    if (!sym) {
        return vg_fail(v, WEFT_ENOMEM, "out of memory");
    }
    weft_status_t st = vg_eval(v, v->n_in, v->grads, sym);
    bool failed = false;
    for (size_t i = 0; st == WEFT_OK && i < v->n_in; i++) {
        st = vg_check_input(v, tol, i, sym[i], &failed);
    }
    for (size_t i = 0; i < v->n_in; i++) {
        weft_tensor_release(sym[i]);
    }
    free(sym);
    if (st == WEFT_OK && failed) {
        weft_verify_grad_result_t *r = v->r;
        st = vg_fail(v, WEFT_ERANGE, "input %zu element %zu: numeric gradient %.9g, symbolic "
                     "%.9g (max abs err %.3g, max rel err %.3g; tolerances abs %.3g rel %.3g)",
                     r->worst_input, r->worst_index, r->numeric, r->symbolic, r->max_abs_err,
                     r->max_rel_err, tol->abs_tol, tol->rel_tol);
    }
    return st;
}

static weft_status_t vg_tolerances(size_t n_in, weft_tensor_t *const *points,
                                   const weft_verify_grad_options_t *o, vg_tol_t *tol)
{
    bool any32 = false;
    for (size_t i = 0; i < n_in; i++) {
        if (!points[i]) {
            return WEFT_EINVAL;
        }
        weft_dtype_t dt = weft_tensor_dtype(points[i]);
        if (dt != WEFT_FLOAT32 && dt != WEFT_FLOAT64) {
            return WEFT_ETYPE;
        }
        any32 |= dt == WEFT_FLOAT32;
    }
    if (o->eps < 0 || o->abs_tol < 0 || o->rel_tol < 0) {
        return WEFT_EINVAL;
    }
    tol->eps = o->eps > 0 ? o->eps : any32 ? 1e-3 : 1e-6;
    tol->abs_tol = o->abs_tol > 0 ? o->abs_tol : any32 ? 1e-2 : 1e-4;
    tol->rel_tol = o->rel_tol > 0 ? o->rel_tol : any32 ? 1e-2 : 1e-4;
    return WEFT_OK;
}

static void vg_free(vg_t *v)
{
    for (size_t i = 0; v->x && i < v->n_in; i++) {
        weft_tensor_release(v->x[i]);
    }
    free(v->x);
    free(v->vars);
    free(v->grads);
    weft_graph_destroy(v->g);
}

weft_status_t weft_verify_grad(weft_verify_grad_fn fn, void *user, size_t n_in,
                               weft_tensor_t *const *points,
                               const weft_verify_grad_options_t *options,
                               weft_verify_grad_result_t *result)
{
    static const weft_verify_grad_options_t defaults = WEFT_VERIFY_GRAD_OPTIONS_INIT;
    const weft_verify_grad_options_t *o = options ? options : &defaults;
    if (!fn || !points || !result || n_in == 0 || o->size < sizeof *o) {
        return WEFT_EINVAL;
    }
    memset(result, 0, sizeof *result);
    vg_tol_t tol;
    weft_status_t st = vg_tolerances(n_in, points, o, &tol);
    if (st != WEFT_OK) {
        snprintf(result->message, sizeof result->message, "bad point or option");
        return st;
    }
    vg_t v = {.n_in = n_in, .points = points, .r = result};
    v.x = calloc(n_in, sizeof *v.x);
    v.vars = calloc(n_in, sizeof *v.vars);
    v.grads = calloc(n_in, sizeof *v.grads);
    st = (v.x && v.vars && v.grads) ? weft_graph_create(NULL, &v.g) : WEFT_ENOMEM;
    if (st == WEFT_OK) {
        st = vg_build(&v, fn, user, o->seed);
    }
    if (st == WEFT_OK) {
        st = vg_check(&v, &tol);
    }
    if (st == WEFT_ENOMEM && !result->message[0]) {
        snprintf(result->message, sizeof result->message, "out of memory");
    }
    vg_free(&v);
    return st;
}

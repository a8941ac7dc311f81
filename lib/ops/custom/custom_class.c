/* Making one-callback op classes (weft/custom_op.h): checking the
 * description, the process-wide list of classes made so far (what lets an
 * identical request return the same class), their make_node and grad hooks,
 * and weft_custom_call. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_int.h"
#include "custom_int.h"
#include "graph/ctor_int.h"
#include "ops_int.h"
#include "weft/shape_ops.h"

static _Thread_local char custom_err[256];

const char *weft_custom_op_last_error(void)
{
    return custom_err;
}

#define custom_error(st, ...) weft__error_to(custom_err, sizeof custom_err, (st), __VA_ARGS__)

/* ---- make_node ------------------------------------------------------------------ */

static weft_dtype_t out_dtype(const weft__custom_class_t *c, size_t n_in,
                              weft_var_t *const *inputs)
{
    if (c->d.dtype != WEFT_CUSTOM_DTYPE_AUTO) return c->fixed_dtype;
    weft_dtype_t dt = weft_type_dtype(weft_var_type(inputs[0]));
    for (size_t i = 1; i < n_in && weft__custom_is_elemwise(c); i++)
        dt = weft_dtype_promote(dt, weft_type_dtype(weft_var_type(inputs[i])));
    return dt;
}

static weft_status_t elemwise_types(weft_graph_t *g, const weft__custom_class_t *c, size_t n_in,
                                    weft_var_t *const *inputs, const weft_type_t **out)
{
    int ndim;
    int64_t shape[WEFT_MAX_NDIM];
    weft_status_t st = weft__ew_check_inputs(g, c->cls.name, n_in, inputs, &ndim);
    if (st == WEFT_OK) st = weft__ew_infer_shape(g, c->cls.name, n_in, inputs, ndim, shape);
    if (st == WEFT_OK) st = weft_type_tensor(g, out_dtype(c, n_in, inputs), ndim, shape, out);
    return st;
}

static weft_status_t kernel_types(weft_graph_t *g, const weft__custom_class_t *c, size_t n_in,
                                  weft_var_t *const *inputs, const weft_type_t **out)
{
    int nd[WEFT_OP_MAX_OUTPUTS];
    int64_t shapes[WEFT_OP_MAX_OUTPUTS][WEFT_MAX_NDIM];
    const int64_t *sp[WEFT_OP_MAX_OUTPUTS];
    for (size_t i = 0; i < n_in; i++) {
        const weft_type_t *t = weft_var_type(inputs[i]);
        if (weft_type_kind(t) != WEFT_TYPE_TENSOR)
            return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %zu is not a tensor",
                                        c->cls.name, i);
        nd[i] = weft_type_ndim(t);
        for (int d = 0; d < nd[i]; d++) shapes[i][d] = weft_type_dim(t, d);
        sp[i] = shapes[i];
    }
    size_t n_out = c->d.n_outputs ? c->d.n_outputs : 1;
    for (size_t k = 0; k < n_out; k++) {
        int ndim = nd[0];
        int64_t shape[WEFT_MAX_NDIM];
        memcpy(shape, shapes[0], sizeof shape);
        weft_status_t st = c->d.shape ? c->d.shape(c->d.user, n_in, nd, sp, k, &ndim, shape)
                                      : WEFT_OK;
        if (st != WEFT_OK)
            return weft_graph_set_error(g, st, "%s: the shape function failed for output %zu "
                                        "with %s", c->cls.name, k, weft_status_name(st));
        st = weft_type_tensor(g, out_dtype(c, n_in, inputs), ndim, shape, &out[k]);
        if (st != WEFT_OK)
            return weft_graph_set_error(g, st, "%s: output %zu: bad shape from the shape "
                                        "function (ndim %d)", c->cls.name, k, ndim);
    }
    return WEFT_OK;
}

static weft_status_t custom_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                      weft_var_t *const *inputs, size_t *n_out,
                                      const weft_type_t **out_types)
{
    const weft__custom_class_t *c = (const weft__custom_class_t *)weft_op_class(op);
    if (n_in != c->d.n_inputs)
        return weft_graph_set_error(g, WEFT_EINVAL, "%s takes %zu inputs, got %zu", c->cls.name,
                                    c->d.n_inputs, n_in);
    *n_out = c->d.n_outputs ? c->d.n_outputs : 1;
    return weft__custom_is_elemwise(c) ? elemwise_types(g, c, n_in, inputs, out_types)
                                       : kernel_types(g, c, n_in, inputs, out_types);
}

/* ---- grad ----------------------------------------------------------------------- */

static weft_status_t custom_grad(weft_graph_t *g, const weft_apply_t *node,
                                 weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const weft__custom_class_t *c = weft__custom_of(node);
    weft_var_t *in[WEFT_OP_MAX_OUTPUTS], *out[WEFT_OP_MAX_OUTPUTS];
    size_t n_in = weft_apply_n_inputs(node), n_out = weft_apply_n_outputs(node);
    for (size_t i = 0; i < n_in; i++) in[i] = weft_apply_input(node, i);
    for (size_t k = 0; k < n_out; k++) out[k] = weft_apply_output(node, k);
    weft_status_t st = c->d.grad(g, n_in, in, n_out, out, output_grads, input_grads, c->d.user);
    if (st != WEFT_OK) {
        if (!weft_graph_last_error(g)[0])
            weft_graph_set_error(g, st, "%s: the gradient callback failed", c->cls.name);
        return st;
    }
    for (size_t i = 0; i < n_in && weft__custom_is_elemwise(c); i++) {
        weft_var_t *gi = input_grads[i];
        if (!gi || weft_type_kind(weft_var_type(gi)) != WEFT_TYPE_TENSOR) continue;
        st = weft__grad_reduce_to(g, gi, in[i], &input_grads[i]);
        if (st != WEFT_OK) return st;
    }
    return WEFT_OK;
}

/* ---- the class list --------------------------------------------------------------- */

/* Classes made so far; kept (reachable) until the process exits, since the
 * registry and every graph using them borrow them. */
static pthread_mutex_t custom_lock = PTHREAD_MUTEX_INITIALIZER;
static weft__custom_class_t *custom_list; /* guarded by custom_lock */

static bool same_desc(const weft_custom_op_desc_t *a, const weft_custom_op_desc_t *b)
{
    return !strcmp(a->name, b->name) && a->n_inputs == b->n_inputs && a->scalar == b->scalar &&
           a->chunk == b->chunk && a->kernel == b->kernel && a->n_outputs == b->n_outputs &&
           a->shape == b->shape && a->dtype == b->dtype && a->grad == b->grad &&
           a->user == b->user;
}

static weft_status_t check_desc(const weft_custom_op_desc_t *d)
{
    if (d->size < sizeof *d) return custom_error(WEFT_EINVAL, "desc size %zu too small", d->size);
    if (!d->name || !d->name[0]) return custom_error(WEFT_EINVAL, "a custom op needs a name");
    int styles = !!d->scalar + !!d->chunk + !!d->kernel;
    if (styles != 1)
        return custom_error(WEFT_EINVAL, "%s: give exactly one of scalar, chunk and kernel "
                            "(got %d)", d->name, styles);
    size_t max_in = d->kernel ? WEFT_OP_MAX_OUTPUTS : WEFT_CUSTOM_MAX_ELEMWISE_INPUTS;
    if (d->n_inputs < 1 || d->n_inputs > max_in)
        return custom_error(WEFT_EINVAL, "%s: n_inputs %zu outside [1, %zu]", d->name,
                            d->n_inputs, max_in);
    size_t max_out = d->kernel ? WEFT_OP_MAX_OUTPUTS : 1;
    if (d->n_outputs > max_out)
        return custom_error(WEFT_EINVAL, "%s: n_outputs %zu above %zu", d->name, d->n_outputs,
                            max_out);
    if (d->shape && !d->kernel)
        return custom_error(WEFT_EINVAL, "%s: a shape function needs the kernel style "
                            "(elementwise ops broadcast)", d->name);
    if (d->dtype != WEFT_CUSTOM_DTYPE_AUTO && !weft_dtype_name((weft_dtype_t)d->dtype))
        return custom_error(WEFT_EINVAL, "%s: bad dtype %d", d->name, d->dtype);
    return WEFT_OK;
}

static weft_status_t make_class(const weft_custom_op_desc_t *d, weft__custom_class_t **out)
{
    weft__custom_class_t *c = calloc(1, sizeof *c);
    char *name = c ? malloc(strlen(d->name) + 1) : NULL;
    if (!name) {
        free(c);
        return custom_error(WEFT_ENOMEM, "%s: out of memory", d->name);
    }
    strcpy(name, d->name);
    c->d = *d;
    c->d.name = name;
    c->fixed_dtype = (weft_dtype_t)(d->dtype == WEFT_CUSTOM_DTYPE_AUTO ? 0 : d->dtype);
    c->cls.size = sizeof c->cls;
    c->cls.name = name;
    c->cls.make_node = custom_make_node;
    c->cls.perform = weft__custom_perform;
    c->cls.grad = d->grad ? custom_grad : NULL;
    *out = c;
    return WEFT_OK;
}

static weft_status_t find_or_make_locked(const weft_custom_op_desc_t *d,
                                         const weft_op_class_t **out)
{
    for (weft__custom_class_t *c = custom_list; c; c = c->next) {
        if (strcmp(c->d.name, d->name)) continue;
        if (same_desc(&c->d, d)) *out = &c->cls;
        return *out ? WEFT_OK
                     : custom_error(WEFT_EALREADY, "%s: a custom op of that name with another "
                                    "description exists", d->name);
    }
    if (weft_op_class_find(d->name))
        return custom_error(WEFT_EALREADY, "%s: an op class of that name is registered",
                            d->name);
    weft__custom_class_t *c = NULL;
    weft_status_t st = make_class(d, &c);
    if (st == WEFT_OK) st = weft_op_class_register(&c->cls);
    if (st == WEFT_OK) {
        c->next = custom_list;
        custom_list = c;
        *out = &c->cls;
    } else if (c) {
        custom_error(st, "%s: cannot register the class: %s", d->name, weft_status_str(st));
        free((char *)c->cls.name);
        free(c);
    }
    return st;
}

weft_status_t weft_custom_op_class(const weft_custom_op_desc_t *desc, const weft_op_class_t **out)
{
    custom_err[0] = '\0';
    if (out) *out = NULL;
    if (!desc || !out) return custom_error(WEFT_EINVAL, "NULL desc or out");
    weft_status_t st = check_desc(desc);
    if (st != WEFT_OK) return st;
    pthread_mutex_lock(&custom_lock);
    st = find_or_make_locked(desc, out);
    pthread_mutex_unlock(&custom_lock);
    return st;
}

/* ---- applying ----------------------------------------------------------------------- */

static bool is_custom_class(const weft_op_class_t *cls)
{
    return cls->make_node == custom_make_node;
}

/* inputs left-padded to the largest rank (elementwise classes). */
static weft_status_t pad_inputs(weft_graph_t *g, const weft__custom_class_t *c, size_t n_in,
                                weft_var_t *const *inputs, const char *file, int line,
                                weft_var_t **padded)
{
    int ndim = 0;
    for (size_t i = 0; i < n_in; i++) {
        const weft_type_t *t = weft_var_type(inputs[i]);
        if (weft_type_kind(t) != WEFT_TYPE_TENSOR)
            return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %zu is not a tensor",
                                        c->cls.name, i);
        ndim = weft_type_ndim(t) > ndim ? weft_type_ndim(t) : ndim;
    }
    for (size_t i = 0; i < n_in; i++)
        if (!(padded[i] = weft_pad_left_at(g, inputs[i], ndim, file, line)))
            return weft__ctor_status(g);
    return WEFT_OK;
}

static weft_status_t custom_apply(weft_graph_t *g, const weft_op_class_t *cls, size_t n_in,
                                  weft_var_t *const *inputs, const char *file, int line,
                                  weft_var_t **out)
{
    if (!cls) return weft_graph_set_error(g, WEFT_EINVAL, "weft_custom_call: NULL cls");
    if (!is_custom_class(cls))
        return weft_graph_set_error(g, WEFT_EINVAL,
                                    "weft_custom_call: cls %s is not a custom op class "
                                    "(weft_custom_op_class)", cls->name);
    if (n_in && !inputs)
        return weft_graph_set_error(g, WEFT_EINVAL, "%s: NULL inputs", cls->name);
    const weft__custom_class_t *c = (const weft__custom_class_t *)cls;
    if (n_in != c->d.n_inputs)
        return weft_graph_set_error(g, WEFT_EINVAL, "%s takes %zu inputs, got %zu", cls->name,
                                    c->d.n_inputs, n_in);
    for (size_t i = 0; i < n_in; i++)
        if (!inputs[i])
            return weft_graph_set_error(g, WEFT_EINVAL, "%s: input %zu is NULL", cls->name, i);
    weft_var_t *padded[WEFT_OP_MAX_OUTPUTS];
    const weft_op_t *op;
    bool ew = weft__custom_is_elemwise(c);
    weft_status_t st = ew ? pad_inputs(g, c, n_in, inputs, file, line, padded) : WEFT_OK;
    if (st == WEFT_OK) st = weft_op_create(g, cls, NULL, &op);
    if (st != WEFT_OK) return st;
    weft_apply_t *node = weft_apply_create_at(g, op, n_in, ew ? padded : inputs, file, line);
    *out = weft_apply_output(node, 0);
    return node ? WEFT_OK : weft__ctor_status(g);
}

weft_var_t *weft_custom_call_at(weft_graph_t *g, const weft_op_class_t *cls, size_t n_in,
                                weft_var_t *const *inputs, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = g ? custom_apply(g, cls, n_in, inputs, file, line, &out) : WEFT_EINVAL;
    return weft__ctor_end(g, st, out, cls && cls->name ? cls->name : "weft_custom_call", file,
                          line);
}

/* Supervisor feature (rule D6, docs/destroy.md; weft/supervisor.h):
 * validation fails when a protected variable - an explicitly listed input, an
 * input the fgraph declares immutable, or any current output - is a destroyed
 * root or a view of one. weft_fgraph_create attaches one when
 * options.input_mutable is given; compiled functions attach one with their
 * own list (weft_supervisor_create).
 *
 * It lives in the FunctionGraph module so that weft_fgraph_create can attach
 * it, while lib/destroy sits above lib/fgraph and never the reverse. It does
 * not ask the DestroyHandler: it finds destroyed impact sets from the graph
 * itself - root(v) by following view_map entries of owners upwards, then the
 * views of that root by following clients whose view_map reads them, looking
 * for a client whose destroy_map destroys one of them. That is exactly the
 * DH's droot/impact relation, so both agree; the check also holds when no DH
 * is attached. Cost per validate: O(protected variables + the impact sets of
 * their roots and those sets' clients). */
#include <stdio.h>
#include <string.h>

#include "base/base_int.h"
#include "base/vec.h"
#include "graph/site.h"
#include "weft/op.h"
#include "weft/supervisor.h"
#include "weft/fgraph.h"

typedef struct sup {
    weft_feature_t feature;
    const weft_allocator_t *alloc;
    weft_fgraph_t *fg;
    size_t n;            /* explicit protected inputs */
    weft_var_t **vars;   /* resolved against fg while attached */
    size_t cap_vars;
    size_t *pos;         /* a clone's pending input positions (before attach) */
    weft_var_t **queue;  /* impact walk scratch */
    size_t cap_queue;
    weft_var_t **roots;  /* roots already checked in this validate */
    size_t n_roots, cap_roots;
} sup_t;

/* root(v): owners' view_map entries followed upwards. */
static weft_var_t *sup_root(weft_var_t *v)
{
    for (;;) {
        weft_apply_t *a = weft_var_owner(v);
        if (!a) return v;
        const weft_op_alias_t *e;
        size_t m, k;
        weft_op_view_map(weft_apply_op(a), &e, &m);
        for (k = 0; k < m && e[k].output != weft_var_index(v); k++) {}
        if (k == m || e[k].input >= weft_apply_n_inputs(a)) return v;
        v = weft_apply_input(a, e[k].input);
    }
}

static bool sup_entry(const weft_op_alias_t *e, size_t m, size_t input, uint32_t *output)
{
    for (size_t k = 0; k < m; k++) {
        if (e[k].input == input) {
            if (output) *output = e[k].output;
            return true;
        }
    }
    return false;
}

/* The node destroying some variable of impact(r), or NULL. Views are found
 * through clients whose view_map reads the client edge's input. */
static weft_status_t sup_destroyer(sup_t *s, weft_var_t *r, weft_apply_t **out)
{
    size_t n = 0;
    *out = NULL;
    if (!weft__vec_grow(s->alloc, (void **)&s->queue, &s->cap_queue, 1, sizeof *s->queue))
        return WEFT_ENOMEM;
    s->queue[n++] = r;
    for (size_t q = 0; q < n; q++) {
        const weft_client_t *cl;
        size_t nc;
        if (weft_fgraph_clients(s->fg, s->queue[q], &cl, &nc) != WEFT_OK) continue;
        for (size_t c = 0; c < nc; c++) {
            weft_apply_t *a = cl[c].node;
            if (weft_apply_is_output_slot(a)) continue;
            const weft_op_alias_t *e;
            size_t m;
            weft_op_destroy_map(weft_apply_op(a), &e, &m);
            if (sup_entry(e, m, cl[c].index, NULL)) {
                *out = a;
                return WEFT_OK;
            }
            weft_op_view_map(weft_apply_op(a), &e, &m);
            for (size_t k = 0; k < m; k++) {
                if (e[k].input != cl[c].index || e[k].output >= weft_apply_n_outputs(a)) continue;
                if (!weft__vec_grow(s->alloc, (void **)&s->queue, &s->cap_queue, n + 1,
                                    sizeof *s->queue))
                    return WEFT_ENOMEM;
                s->queue[n++] = weft_apply_output(a, e[k].output);
            }
        }
    }
    return WEFT_OK;
}

static weft_status_t sup_check(sup_t *s, weft_var_t *v)
{
    if (!weft_fgraph_contains_var(s->fg, v)) return WEFT_OK;
    weft_var_t *r = sup_root(v);
    for (size_t k = 0; k < s->n_roots; k++) {
        if (s->roots[k] == r) return WEFT_OK;
    }
    weft_apply_t *d;
    weft_status_t st = sup_destroyer(s, r, &d);
    if (st != WEFT_OK) return st;
    if (!d) {
        if (!weft__vec_grow(s->alloc, (void **)&s->roots, &s->cap_roots, s->n_roots + 1,
                            sizeof *s->roots))
            return WEFT_ENOMEM;
        s->roots[s->n_roots++] = r;
        return WEFT_OK;
    }
    char name[96], desc[160], sb[WEFT__SITE_CAP];
    const char *file = NULL;
    int line = 0;
    weft_var_print(v, name, sizeof name);
    weft_var_trace(v, &file, &line);
    weft_apply_describe(d, desc, sizeof desc);
    return weft_fgraph_set_error(s->fg, WEFT_EINCONSISTENT,
                                 "Trying to destroy a protected variable: %s (var %llu, built at "
                                 "%s; destroyed by %s; rule D6)",
                                 name, (unsigned long long)weft_var_id(v),
                                 weft__site_str(sb, sizeof sb, file, line), desc);
}

static weft_status_t sup_on_validate(weft_feature_t *self, weft_fgraph_t *fg)
{
    sup_t *s = self->data;
    weft_status_t st = WEFT_OK;
    s->n_roots = 0;
    for (size_t k = 0; st == WEFT_OK && k < s->n; k++) st = sup_check(s, s->vars[k]);
    for (size_t k = 0; st == WEFT_OK && k < weft_fgraph_n_inputs(fg); k++) {
        if (!weft_fgraph_input_is_mutable(fg, k)) st = sup_check(s, weft_fgraph_input(fg, k));
    }
    for (size_t k = 0; st == WEFT_OK && k < weft_fgraph_n_outputs(fg); k++) {
        st = sup_check(s, weft_fgraph_output(fg, k));
    }
    return st;
}

/* Input position of v in fg, or SIZE_MAX. */
static size_t sup_input_pos(const weft_fgraph_t *fg, const weft_var_t *v)
{
    for (size_t k = 0; k < weft_fgraph_n_inputs(fg); k++) {
        if (weft_fgraph_input(fg, k) == v) return k;
    }
    return SIZE_MAX;
}

/* Resolves pending positions (a clone) or checks the listed variables. */
static weft_status_t sup_resolve(sup_t *s, weft_fgraph_t *fg)
{
    for (size_t k = 0; k < s->n; k++) {
        if (s->pos) {
            if (s->pos[k] >= weft_fgraph_n_inputs(fg)) {
                return weft_fgraph_set_error(fg, WEFT_EINVAL,
                                             "Supervisor: protected input %zu out of range",
                                             s->pos[k]);
            }
            s->vars[k] = weft_fgraph_input(fg, s->pos[k]);
        } else if (sup_input_pos(fg, s->vars[k]) == SIZE_MAX) {
            char name[96];
            weft_var_print(s->vars[k], name, sizeof name);
            return weft_fgraph_set_error(fg, WEFT_EINVAL,
                                         "Supervisor: protected variable %s (var %llu) is not an "
                                         "input of this FunctionGraph",
                                         name, (unsigned long long)weft_var_id(s->vars[k]));
        }
    }
    return WEFT_OK;
}

/* An equivalent Supervisor already there takes this one's list (so a compiled
 * function's explicit list joins the one weft_fgraph_create attached). */
static weft_status_t sup_merge(sup_t *into, sup_t *from)
{
    if (!weft__vec_grow(into->alloc, (void **)&into->vars, &into->cap_vars, into->n + from->n,
                        sizeof *into->vars))
        return WEFT_ENOMEM;
    memcpy(into->vars + into->n, from->vars, from->n * sizeof *from->vars);
    into->n += from->n;
    return WEFT_OK;
}

static weft_status_t sup_on_attach(weft_feature_t *self, weft_fgraph_t *fg)
{
    sup_t *s = self->data;
    if (s->fg == fg) return WEFT_EALREADY;
    if (s->fg) {
        return weft_fgraph_set_error(fg, WEFT_EBUSY,
                                     "this Supervisor already serves another FunctionGraph");
    }
    weft_status_t st = sup_resolve(s, fg);
    if (st != WEFT_OK) return st;
    weft__free(s->alloc, s->pos, (s->n ? s->n : 1) * sizeof(size_t));
    s->pos = NULL;
    weft_feature_t *other = weft_fgraph_find_feature(fg, &weft_supervisor_class);
    if (other && other != self) {
        st = sup_merge(other->data, s);
        return st == WEFT_OK ? WEFT_EALREADY : st;
    }
    s->fg = fg;
    return WEFT_OK;
}

static void sup_on_detach(weft_feature_t *self, weft_fgraph_t *fg)
{
    (void)fg;
    ((sup_t *)self->data)->fg = NULL;
}

static weft_status_t sup_new(const weft_allocator_t *alloc, size_t n, sup_t **out);

/* The copy protects the same input positions of the cloned fgraph. */
static weft_status_t sup_clone(const weft_feature_t *self, weft_feature_t **out)
{
    const sup_t *s = self->data;
    sup_t *c;
    weft_status_t st = sup_new(s->alloc, s->n, &c);
    if (st != WEFT_OK) return st;
    c->pos = weft__vec_alloc(s->alloc, s->n ? s->n : 1, sizeof(size_t));
    if (!c->pos) {
        c->feature.cls->destroy(&c->feature);
        return WEFT_ENOMEM;
    }
    for (size_t k = 0; k < s->n; k++) {
        c->pos[k] = s->fg ? sup_input_pos(s->fg, s->vars[k]) : (s->pos ? s->pos[k] : SIZE_MAX);
    }
    *out = &c->feature;
    return WEFT_OK;
}

static void sup_destroy(weft_feature_t *self)
{
    sup_t *s = self->data;
    if (s->fg) return; /* a refused second attach: the serving fgraph frees it */
    weft__free(s->alloc, s->vars, s->cap_vars * sizeof *s->vars);
    weft__free(s->alloc, s->pos, (s->n ? s->n : 1) * sizeof(size_t));
    weft__free(s->alloc, s->queue, s->cap_queue * sizeof *s->queue);
    weft__free(s->alloc, s->roots, s->cap_roots * sizeof *s->roots);
    weft__free(s->alloc, s, sizeof *s);
}

const weft_feature_class_t weft_supervisor_class = {
    .size = sizeof(weft_feature_class_t),
    .name = "Supervisor",
    .on_attach = sup_on_attach,
    .on_detach = sup_on_detach,
    .on_validate = sup_on_validate,
    .clone = sup_clone,
    .destroy = sup_destroy,
};

static weft_status_t sup_new(const weft_allocator_t *alloc, size_t n, sup_t **out)
{
    if (!alloc) alloc = weft_allocator_default();
    sup_t *s = weft__alloc(alloc, sizeof *s);
    if (!s) return WEFT_ENOMEM;
    memset(s, 0, sizeof *s);
    s->alloc = alloc;
    s->feature.cls = &weft_supervisor_class;
    s->feature.data = s;
    s->n = n;
    s->cap_vars = n ? n : 1;
    s->vars = weft__vec_alloc(alloc, s->cap_vars, sizeof *s->vars);
    if (!s->vars) {
        weft__free(alloc, s, sizeof *s);
        return WEFT_ENOMEM;
    }
    *out = s;
    return WEFT_OK;
}

weft_status_t weft_supervisor_create(size_t n, weft_var_t *const *vars,
                                     const weft_allocator_t *alloc, weft_feature_t **out)
{
    if (!out || (n > 0 && !vars)) return WEFT_EINVAL;
    *out = NULL;
    for (size_t k = 0; k < n; k++) {
        if (!vars[k]) return WEFT_EINVAL;
    }
    sup_t *s;
    weft_status_t st = sup_new(alloc, n, &s);
    if (st != WEFT_OK) return st;
    if (n > 0) memcpy(s->vars, vars, n * sizeof *vars);
    *out = &s->feature;
    return WEFT_OK;
}

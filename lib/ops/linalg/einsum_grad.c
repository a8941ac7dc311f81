/* The Einsum op's gradient: operand i's is the einsum of the output
 * gradient (labelled as the output) with the other operands (conjugated
 * for complex dtypes, PyTensor's convention as Dot's) into operand i's
 * labels. A label operand i repeats (a diagonal) gets a fresh letter per
 * further copy and an identity matrix joining the two, so the gradient
 * lands on the diagonal; a label no other term carries (summed in operand
 * i alone) gets a ones vector, so the gradient is broadcast along it; both
 * need the label's static length. Axes of operand i that broadcast
 * (length 1 against the label's length) are summed back by
 * weft__grad_reduce_to. The result is itself an Einsum node, lowered or run
 * like any other. */
#include <string.h>

#include "einsum_int.h"
#include "graph/ctor_int.h"
#include "weft/array_ops.h"
#include "weft/elemwise.h"
#include "ops_int.h"

/* Gradient einsum under construction: operands, their subscripts, letters. */
typedef struct gterm {
    size_t n;
    weft_var_t *ops[WEFT_EINSUM_MAX_OPERANDS + WEFT_MAX_NDIM];
    char subs[4 * WEFT_EINSUM_MAX_SUBSCRIPTS]; /* room for 48 terms; weft_einsum checks */
    size_t at;
    char letter[WEFT__EIN_LABELS];
    bool used[128];
} gterm_t;

static char fresh(gterm_t *t)
{
    for (int c = 'a'; c <= 'z'; c++) {
        if (!t->used[c]) {
            t->used[c] = true;
            return (char)c;
        }
    }
    for (int c = 'A'; c <= 'Z'; c++) {
        if (!t->used[c]) {
            t->used[c] = true;
            return (char)c;
        }
    }
    return 0;
}

static bool in_spec(const weft__ein_spec_t *spec, int l)
{
    for (int i = 0; i < spec->n; i++) {
        if (memchr(spec->lab[i], l, (size_t)spec->nd[i])) {
            return true;
        }
    }
    return false;
}

/* Letters for the spec's labels: a letter keeps itself, an ellipsis axis
 * takes a free one. */
static bool assign_letters(const weft__ein_spec_t *spec, gterm_t *t)
{
    memset(t->used, 0, sizeof t->used);
    memset(t->letter, 0, sizeof t->letter);
    for (int l = 0; l < WEFT__EIN_LETTERS; l++) {
        t->letter[l] = (char)(l < 26 ? 'A' + l : 'a' + l - 26);
        t->used[(int)t->letter[l]] = in_spec(spec, l);
    }
    for (int l = WEFT__EIN_LETTERS; l < WEFT__EIN_LABELS; l++) {
        if (in_spec(spec, l) && !(t->letter[l] = fresh(t))) {
            return false;
        }
    }
    return true;
}

static void add_term(gterm_t *t, weft_var_t *v, const int8_t *lab, int nd)
{
    if (t->n) {
        t->subs[t->at++] = ',';
    }
    for (int a = 0; a < nd; a++) {
        t->subs[t->at++] = t->letter[lab[a]];
    }
    t->ops[t->n++] = v;
}

static bool subs_has(const gterm_t *t, char c)
{
    return memchr(t->subs, c, t->at) != NULL;
}

/* The target subscripts of operand i into out; eye / ones operands added. */
static weft_status_t target(weft_graph_t *g, const weft__ein_spec_t *spec, int i,
                            const int64_t *len, weft_dtype_t dt, gterm_t *t, char *out,
                            const char *file, int line)
{
    int nd = spec->nd[i];
    for (int a = 0; a < nd; a++) {
        int l = spec->lab[i][a];
        char c = t->letter[l];
        out[a] = c;
        bool repeat = memchr(out, c, (size_t)a) != NULL;
        if (!repeat && subs_has(t, c)) {
            continue;
        }
        if (len[l] < 0) {
            return weft_graph_set_error(g, WEFT_ENOGRAD, "Einsum gradient (at %s:%d): operand "
                                        "%d's subscript %c needs a static length (a diagonal or "
                                        "a label summed in that operand alone)", file, line, i,
                                        c);
        }
        weft_var_t *v = NULL;
        int8_t lab2[2] = {(int8_t)l, (int8_t)l};
        if (repeat) {
            char f = fresh(t);
            if (!f) {
                return weft_graph_set_error(g, WEFT_ENOTIMPL, "Einsum gradient (at %s:%d): "
                                            "more than 52 letters", file, line);
            }
            out[a] = f;
            if (!(v = weft_eye_at(g, len[l], len[l], 0, dt, file, line))) {
                return weft__ctor_status(g);
            }
            add_term(t, v, lab2, 1);
            t->subs[t->at++] = f;
        } else {
            if (!(v = weft_full_at(g, 1, &len[l], 1.0, dt, file, line))) {
                return weft__ctor_status(g);
            }
            add_term(t, v, lab2, 1);
        }
    }
    out[nd] = '\0';
    return WEFT_OK;
}

static weft_status_t grad_one(weft_graph_t *g, const weft_apply_t *node,
                              const weft__ein_spec_t *spec, const int64_t *len, int i,
                              weft_var_t *gz, weft_var_t **out)
{
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    weft_var_t *x = weft_apply_input(node, (size_t)i);
    weft_dtype_t dt = weft_type_dtype(weft_var_type(x));
    gterm_t t = {0};
    char to[WEFT_MAX_NDIM + 1];
    if (!assign_letters(spec, &t)) {
        return weft_graph_set_error(g, WEFT_ENOTIMPL, "Einsum gradient (at %s:%d): more than 52 "
                                    "letters", file, line);
    }
    add_term(&t, gz, spec->out, spec->n_out);
    for (int j = 0; j < spec->n; j++) {
        weft_var_t *v = weft_apply_input(node, (size_t)j);
        if (j == i) {
            continue;
        }
        if (weft_dtype_kind(dt) == WEFT_KIND_COMPLEX && !(v = weft_conj(g, v))) {
            return weft__ctor_status(g);
        }
        add_term(&t, v, spec->lab[j], spec->nd[j]);
    }
    weft_status_t st = target(g, spec, i, len, dt, &t, to, file, line);
    if (st != WEFT_OK) {
        return st;
    }
    t.subs[t.at++] = '-';
    t.subs[t.at++] = '>';
    memcpy(t.subs + t.at, to, strlen(to) + 1);
    weft_var_t *r = NULL;
    st = weft__got(g, r = weft_einsum_at(g, t.subs, t.n, t.ops, file, line));
    return st == WEFT_OK ? weft__grad_reduce_to(g, r, x, out) : st;
}

weft_status_t weft__einsum_grad(weft_graph_t *g, const weft_apply_t *node,
                                weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const weft__einsum_props_t *p = weft_op_props(weft_apply_op(node));
    weft_var_t *gz = output_grads[0];
    int n = p->n_operands;
    weft_dtype_t dt = weft_type_dtype(weft_var_type(weft_apply_input(node, 0)));
    if (!gz) {
        return WEFT_OK;
    }
    if (weft_dtype_kind(dt) != WEFT_KIND_FLOAT && weft_dtype_kind(dt) != WEFT_KIND_COMPLEX) {
        weft_status_t st = WEFT_OK;
        for (int i = 0; st == WEFT_OK && i < n; i++) {
            st = weft__grad_null(g, node, &input_grads[i]);
        }
        return st;
    }
    int nd[WEFT_EINSUM_MAX_OPERANDS], bad = 0, axis = 0;
    int64_t dims[WEFT_EINSUM_MAX_OPERANDS][WEFT_MAX_NDIM], len[WEFT__EIN_LABELS];
    const int64_t *dp[WEFT_EINSUM_MAX_OPERANDS];
    for (int i = 0; i < n; i++) {
        const weft_type_t *t = weft_var_type(weft_apply_input(node, (size_t)i));
        nd[i] = weft_type_ndim(t);
        for (int a = 0; a < nd[i]; a++) {
            dims[i][a] = weft_type_dim(t, a);
        }
        dp[i] = dims[i];
    }
    weft__ein_spec_t spec;
    char msg[256];
    if (weft__ein_parse(p->subscripts, n, nd, &spec, msg, sizeof msg) != WEFT_OK ||
        !weft__ein_lengths(&spec, dp, len, &bad, &axis)) {
        return weft_graph_set_error(g, WEFT_EINVAL, "Einsum gradient: bad node '%s'",
                                    p->subscripts);
    }
    weft_status_t st = WEFT_OK;
    for (int i = 0; st == WEFT_OK && i < n; i++) {
        st = grad_one(g, node, &spec, len, i, gz, &input_grads[i]);
    }
    return st;
}

/* NumPy's einsum subscripts grammar: operand terms separated by ',', each
 * a run of letters with at most one '...', then optionally "->" and the
 * output term. Spaces are ignored. The messages follow NumPy's
 * ValueErrors. */
#include <stdio.h>
#include <string.h>

#include "einsum_int.h"

static int letter_id(char c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    return c >= 'a' && c <= 'z' ? 26 + (c - 'a') : -1;
}

static char id_letter(int id)
{
    return (char)(id < 26 ? 'A' + id : 'a' + (id - 26));
}

/* One term's letters (ids) and where its '...' stands (-1: none). */
typedef struct term {
    int n;
    int8_t ids[WEFT_EINSUM_MAX_SUBSCRIPTS];
    int ell_at;
} term_t;

static weft_status_t parse_term(const char *s, size_t len, const char *what, int k, term_t *t,
                                char *msg, size_t cap)
{
    t->n = 0;
    t->ell_at = -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (t->ell_at >= 0 || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.') {
                snprintf(msg, cap, "%s %d: '.' must be part of one '...'", what, k);
                return WEFT_EINVAL;
            }
            t->ell_at = t->n;
            i += 2;
            continue;
        }
        int id = letter_id(s[i]);
        if (id < 0) {
            snprintf(msg, cap, "invalid subscript '%c' in %s %d: subscripts must be letters",
                     s[i], what, k);
            return WEFT_EINVAL;
        }
        t->ids[t->n++] = (int8_t)id;
    }
    return WEFT_OK;
}

/* Labels of operand k of rank nd from its term, n_ell the broadcast
 * ellipsis axes of all operands. */
static void term_labels(const term_t *t, int nd, int n_ell, int8_t *lab)
{
    int ne = nd - t->n, j = 0;
    for (int i = 0; i < t->n; i++) {
        if (i == t->ell_at) {
            for (int e = 0; e < ne; e++) {
                lab[j++] = (int8_t)(WEFT__EIN_LETTERS + n_ell - ne + e);
            }
        }
        lab[j++] = t->ids[i];
    }
    if (t->ell_at == t->n) {
        for (int e = 0; e < ne; e++) {
            lab[j++] = (int8_t)(WEFT__EIN_LETTERS + n_ell - ne + e);
        }
    }
}

static weft_status_t implicit_output(weft__ein_spec_t *spec, int n_ell, char *msg, size_t cap)
{
    int count[WEFT__EIN_LETTERS] = {0};
    for (int i = 0; i < spec->n; i++) {
        for (int a = 0; a < spec->nd[i]; a++) {
            if (spec->lab[i][a] < WEFT__EIN_LETTERS) {
                count[spec->lab[i][a]]++;
            }
        }
    }
    spec->n_out = 0;
    for (int e = 0; e < n_ell; e++) {
        spec->out[spec->n_out++] = (int8_t)(WEFT__EIN_LETTERS + e);
    }
    for (int id = 0; id < WEFT__EIN_LETTERS; id++) {
        if (count[id] == 1) {
            if (spec->n_out == WEFT_MAX_NDIM) {
                snprintf(msg, cap, "the output would have more than %d axes", WEFT_MAX_NDIM);
                return WEFT_EINVAL;
            }
            spec->out[spec->n_out++] = (int8_t)id;
        }
    }
    return WEFT_OK;
}

static bool in_inputs(const weft__ein_spec_t *spec, int id)
{
    for (int i = 0; i < spec->n; i++) {
        for (int a = 0; a < spec->nd[i]; a++) {
            if (spec->lab[i][a] == id) {
                return true;
            }
        }
    }
    return false;
}

static weft_status_t explicit_output(weft__ein_spec_t *spec, const term_t *t, int n_ell,
                                     char *msg, size_t cap)
{
    bool seen[WEFT__EIN_LETTERS] = {false};
    if (t->ell_at < 0 && n_ell > 0) {
        snprintf(msg, cap, "output has more dimensions than subscripts given, but no '...' "
                 "to broadcast the %d ellipsis axes", n_ell);
        return WEFT_EINVAL;
    }
    if (t->n + (t->ell_at >= 0 ? n_ell : 0) > WEFT_MAX_NDIM) {
        snprintf(msg, cap, "the output would have more than %d axes", WEFT_MAX_NDIM);
        return WEFT_EINVAL;
    }
    for (int i = 0; i < t->n; i++) {
        int id = t->ids[i];
        if (seen[id]) {
            snprintf(msg, cap, "output subscript '%c' appears more than once", id_letter(id));
            return WEFT_EINVAL;
        }
        if (!in_inputs(spec, id)) {
            snprintf(msg, cap, "output subscript '%c' is in no operand", id_letter(id));
            return WEFT_EINVAL;
        }
        seen[id] = true;
    }
    spec->n_out = 0;
    term_labels(t, t->n + (t->ell_at >= 0 ? n_ell : 0), n_ell, spec->out);
    spec->n_out = t->n + (t->ell_at >= 0 ? n_ell : 0);
    return WEFT_OK;
}

/* Splits "inputs->output" (spaces removed into buf). */
static weft_status_t split_arrow(const char *subscripts, char *buf, const char **out,
                                 char *msg, size_t cap)
{
    size_t k = 0;
    for (const char *c = subscripts; *c; c++) {
        if (*c == ' ') {
            continue;
        }
        if (k + 1 >= WEFT_EINSUM_MAX_SUBSCRIPTS) {
            snprintf(msg, cap, "subscripts longer than %d characters",
                     WEFT_EINSUM_MAX_SUBSCRIPTS - 1);
            return WEFT_EINVAL;
        }
        buf[k++] = *c;
    }
    buf[k] = '\0';
    char *arrow = strchr(buf, '-');
    *out = NULL;
    if (arrow) {
        if (arrow[1] != '>' || strchr(arrow + 1, '-') || strchr(arrow + 2, '>')) {
            snprintf(msg, cap, "subscripts do not contain a proper '->' output");
            return WEFT_EINVAL;
        }
        *arrow = '\0';
        *out = arrow + 2;
    } else if (strchr(buf, '>')) {
        snprintf(msg, cap, "subscripts do not contain a proper '->' output");
        return WEFT_EINVAL;
    }
    return WEFT_OK;
}

static weft_status_t parse_inputs(const char *s, int n, const int *nd, term_t *terms,
                                  int *n_ell, char *msg, size_t cap)
{
    int k = 0;
    *n_ell = 0;
    for (const char *p = s;; k++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (k >= n) {
            snprintf(msg, cap, "fewer operands (%d) than the subscripts name", n);
            return WEFT_EINVAL;
        }
        weft_status_t st = parse_term(p, len, "operand", k, &terms[k], msg, cap);
        if (st != WEFT_OK) {
            return st;
        }
        int ne = nd[k] - terms[k].n;
        if (ne < 0 || (ne > 0 && terms[k].ell_at < 0)) {
            snprintf(msg, cap, "operand %d has %d axes but %d subscripts", k, nd[k],
                     terms[k].n);
            return WEFT_EINVAL;
        }
        *n_ell = ne > *n_ell ? ne : *n_ell;
        if (!comma) {
            break;
        }
        p = comma + 1;
    }
    if (k + 1 != n) {
        snprintf(msg, cap, "more operands (%d) than the subscripts name (%d)", n, k + 1);
        return WEFT_EINVAL;
    }
    return WEFT_OK;
}

weft_status_t weft__ein_parse(const char *subscripts, int n, const int *nd,
                              weft__ein_spec_t *spec, char *msg, size_t cap)
{
    term_t terms[WEFT_EINSUM_MAX_OPERANDS + 1];
    char buf[WEFT_EINSUM_MAX_SUBSCRIPTS];
    const char *out = NULL;
    int n_ell = 0;
    weft_status_t st = split_arrow(subscripts, buf, &out, msg, cap);
    if (st == WEFT_OK) {
        st = parse_inputs(buf, n, nd, terms, &n_ell, msg, cap);
    }
    if (st != WEFT_OK) {
        return st;
    }
    spec->n = n;
    for (int i = 0; i < n; i++) {
        spec->nd[i] = nd[i];
        term_labels(&terms[i], nd[i], n_ell, spec->lab[i]);
    }
    if (!out) {
        return implicit_output(spec, n_ell, msg, cap);
    }
    st = parse_term(out, strlen(out), "output", 0, &terms[n], msg, cap);
    return st == WEFT_OK ? explicit_output(spec, &terms[n], n_ell, msg, cap) : st;
}

/* A letter repeated in one operand (a diagonal) needs equal lengths there:
 * no broadcasting inside one operand (NumPy's "collapsing index" rule). */
static bool diagonal_lengths_agree(const weft__ein_spec_t *spec, const int64_t *const *dims,
                                   int *bad_op, int *bad_axis)
{
    for (int i = 0; i < spec->n; i++) {
        for (int a = 0; a < spec->nd[i]; a++) {
            for (int b = a + 1; b < spec->nd[i]; b++) {
                if (spec->lab[i][a] == spec->lab[i][b] && dims[i][a] >= 0 && dims[i][b] >= 0 &&
                    dims[i][a] != dims[i][b]) {
                    *bad_op = i;
                    *bad_axis = b;
                    return false;
                }
            }
        }
    }
    return true;
}

bool weft__ein_lengths(const weft__ein_spec_t *spec, const int64_t *const *dims, int64_t *len,
                       int *bad_op, int *bad_axis)
{
    if (!diagonal_lengths_agree(spec, dims, bad_op, bad_axis)) {
        return false;
    }
    bool unknown[WEFT__EIN_LABELS] = {false};
    for (int l = 0; l < WEFT__EIN_LABELS; l++) {
        len[l] = 1;
    }
    for (int i = 0; i < spec->n; i++) {
        for (int a = 0; a < spec->nd[i]; a++) {
            int l = spec->lab[i][a];
            int64_t d = dims[i][a];
            if (d < 0) {
                unknown[l] = true;
            } else if (d != 1 && len[l] != 1 && len[l] != d) {
                *bad_op = i;
                *bad_axis = a;
                return false;
            } else if (d != 1) {
                len[l] = d;
            }
        }
    }
    for (int l = 0; l < WEFT__EIN_LABELS; l++) {
        if (unknown[l] && len[l] == 1) {
            len[l] = -1;
        }
    }
    return true;
}

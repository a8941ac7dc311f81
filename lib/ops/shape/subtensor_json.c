/* The JSON props codec of Subtensor, SetSubtensor and IncSubtensor: the
 * index as numpy-style text, {"idx": "1:3, 2, ::-1, :"}, plus "inplace" for
 * SetSubtensor and IncSubtensor. Loading goes through the public
 * constructors (weft_subtensor_op, weft_set_subtensor_op), so a parsed index
 * gets their validation. */
#include <stdio.h>
#include <stdlib.h>

#include "ops_int.h"
#include "weft/json_props.h"

static void print_bound(char **w, char *end, int64_t v)
{
    if (v != WEFT_SLICE_NONE) *w += snprintf(*w, (size_t)(end - *w), "%lld", (long long)v);
}

/* The index as numpy writes it, e.g. "2::-1, -1": absent bounds left out, the
 * step only when it is not 1. */
static void print_idx(const weft__subtensor_props_t *sp, char *buf, size_t cap)
{
    char *w = buf, *end = buf + cap;
    *w = '\0';
    for (int i = 0; i < sp->n && w < end - 64; i++) {
        const weft__slice_t *s = &sp->idx[i];
        if (i) w += snprintf(w, (size_t)(end - w), ", ");
        if (s->kind == WEFT_SLICE_INDEX) {
            w += snprintf(w, (size_t)(end - w), "%lld", (long long)s->start);
            continue;
        }
        print_bound(&w, end, s->start);
        w += snprintf(w, (size_t)(end - w), ":");
        print_bound(&w, end, s->stop);
        if (s->step != 1) w += snprintf(w, (size_t)(end - w), ":%lld", (long long)s->step);
    }
}

/* Parses one optional integer at *s (spaces skipped); *v unchanged if none. */
static bool parse_bound(const char **s, int64_t *v)
{
    while (**s == ' ') (*s)++;
    if (**s != '-' && (**s < '0' || **s > '9')) return true;
    char *e;
    long long x = strtoll(*s, &e, 10);
    if (e == *s) return false;
    *v = x;
    *s = e;
    while (**s == ' ') (*s)++;
    return true;
}

static bool parse_entry(const char **s, weft_slice_t *out)
{
    weft_slice_t sl = WEFT_SLICE_ALL;
    int64_t first = WEFT_SLICE_NONE;
    if (!parse_bound(s, &first)) return false;
    if (**s != ':') { /* a single index */
        if (first == WEFT_SLICE_NONE) return false;
        *out = (weft_slice_t)WEFT_SLICE_AT(first);
        return true;
    }
    (*s)++;
    sl.start = first;
    if (!parse_bound(s, &sl.stop)) return false;
    if (**s == ':') {
        (*s)++;
        if (!parse_bound(s, &sl.step)) return false;
    }
    *out = sl;
    return true;
}

static size_t parse_idx(const char *text, weft_slice_t *idx, bool *ok)
{
    size_t n = 0;
    const char *s = text;
    *ok = true;
    while (*s == ' ') s++;
    while (*s && *ok) {
        *ok = n < WEFT_MAX_NDIM && parse_entry(&s, &idx[n]);
        n++;
        if (*s == ',')
            s++;
        else if (*s)
            *ok = false;
    }
    return n;
}

weft_status_t weft__subtensor_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const weft__subtensor_props_t *sp = weft_op_props(op);
    char buf[WEFT_MAX_NDIM * 72];
    print_idx(sp, buf, sizeof(buf));
    weft_status_t s = weft_json_props_put_string(p, "idx", buf);
    if (s == WEFT_OK && weft_op_class(op) != &weft__subtensor_class)
        s = weft_json_props_put_bool(p, "inplace", sp->inplace != 0);
    return s;
}

weft_status_t weft__subtensor_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                        const weft_json_props_t *p, const weft_op_t **out)
{
    const char *text;
    bool inplace = false, ok;
    weft_status_t s = weft_json_props_get_string(p, "idx", &text);
    if (s == WEFT_OK && cls != &weft__subtensor_class && weft_json_props_has(p, "inplace"))
        s = weft_json_props_get_bool(p, "inplace", &inplace);
    if (s != WEFT_OK) return s;
    weft_slice_t idx[WEFT_MAX_NDIM];
    size_t n = parse_idx(text, idx, &ok);
    if (!ok)
        return weft_json_props_error(p, WEFT_EPARSE,
                                     "idx: cannot parse '%s' (expected e.g. \"1:3, 2, ::-1\")",
                                     text);
    if (cls == &weft__subtensor_class)
        s = weft_subtensor_op(g, n, idx, out);
    else
        s = weft_set_subtensor_op(g, n, idx, cls == &weft__inc_subtensor_class, inplace, out);
    if (s != WEFT_OK) return weft_json_props_error(p, s, "idx: '%s' rejected", text);
    return WEFT_OK;
}

/* The cyclic graph of tests/support/shared_cycle.h. */
#include "support/shared_cycle.h"

#include <stddef.h>
#include <string.h>

static weft_fgraph_t *shared_fgraph(weft_graph_t *g, weft_var_t *x, weft_var_t *y, weft_var_t *out)
{
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    weft_var_t *in[2] = {x, y};
    weft_fgraph_t *fg = NULL;
    return weft_fgraph_create(g, 2, in, 1, &out, &o, NULL, &fg) == WEFT_OK ? fg : NULL;
}

weft_var_t *shared_cycle_build(weft_graph_t *g, const weft_op_t *u, const weft_op_t *v,
                               const weft_op_t *b, weft_var_t *x, weft_var_t *y,
                               weft_fgraph_t **first, weft_fgraph_t **second)
{
    weft_var_t *ux = NULL, *vy = NULL, *vvy = NULL, *out = NULL;
    bool ok = (ux = weft_op_call(g, u, 1, &x)) != NULL &&
              (vy = weft_op_call(g, v, 1, &y)) != NULL &&
              (vvy = weft_op_call(g, v, 1, &vy)) != NULL;
    weft_var_t *bin[2] = {ux, vvy};
    ok = ok && (out = weft_op_call(g, b, 2, bin)) != NULL;
    weft_fgraph_t *a = ok ? shared_fgraph(g, x, y, out) : NULL;
    weft_fgraph_t *c = a ? shared_fgraph(g, x, y, out) : NULL;
    ok = c && weft_fgraph_change_node_input(c, weft_var_owner(ux), 0, vvy, "shared") == WEFT_OK &&
         weft_fgraph_change_node_input(a, weft_var_owner(vy), 0, ux, "shared") == WEFT_OK;
    if (first && ok)
        *first = a;
    else
        weft_fgraph_destroy(a);
    if (second && ok)
        *second = c;
    else
        weft_fgraph_destroy(c);
    return ok ? out : NULL;
}

const char *msg_without_sites(const char *msg)
{
    static char buf[1024];
    size_t n = 0;
    for (const char *p = msg; *p && n + 1 < sizeof(buf); p++) {
        if (strncmp(p, ", built at ", 11) == 0 || strncmp(p, ", created at ", 13) == 0) {
            while (*p && *p != ')') p++;
            if (!*p) break;
        }
        buf[n++] = *p;
    }
    buf[n] = '\0';
    return buf;
}

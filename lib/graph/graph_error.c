/* The kept constructor error of a graph context (weft/graph.h "Errors"):
 * constructors return NULL on failure and the first failure's status and
 * text stay on the context until weft_graph_clear_error, so a nested
 * expression needs one check. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph_int.h"

weft_status_t weft_graph_error(const weft_graph_t *g)
{
    return g ? g->kept_status : WEFT_OK;
}

const char *weft_graph_error_message(const weft_graph_t *g)
{
    return g && g->kept_status != WEFT_OK ? g->kept : "";
}

void weft_graph_clear_error(weft_graph_t *g)
{
    if (!g) return;
    g->kept_status = WEFT_OK;
    g->kept[0] = '\0';
}

void weft__ctor_begin(weft_graph_t *g)
{
    if (g) g->err[0] = '\0';
}

/* Keeps "fmt..." as g's first error unless one is kept (vsnprintf cuts a
 * longer text at the buffer's end). */
static void keepf(weft_graph_t *g, weft_status_t s, const char *fmt, ...) WEFT_PRINTF(3, 4);
static void keepf(weft_graph_t *g, weft_status_t s, const char *fmt, ...)
{
    g->ctor_status = s;
    if (g->kept_status != WEFT_OK) return; /* the first error stays */
    g->kept_status = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->kept, sizeof(g->kept), fmt, ap);
    va_end(ap);
}

void *weft__ctor_end(weft_graph_t *g, weft_status_t s, void *out, const char *ctor,
                     const char *file, int line)
{
    if (s == WEFT_OK) return out;
    if (!g) return NULL;
    char site[300];
    snprintf(site, sizeof(site), "%s:%d", file ? file : "?", line);
    if (!g->err[0])
        keepf(g, s, "%s at %s: %s", ctor, site, weft_status_str(s));
    else if (file && !strstr(g->err, site))
        keepf(g, s, "%s (%s at %s)", g->err, ctor, site);
    else
        keepf(g, s, "%s", g->err);
    return NULL;
}

weft_status_t weft__ctor_status(const weft_graph_t *g)
{
    return g && g->ctor_status != WEFT_OK ? g->ctor_status : WEFT_EINVAL;
}

void weft__graph_error_save(weft_graph_t *g, weft__kept_error_t *saved)
{
    /* Rewrites call this per node tried: copy the text only when there is one. */
    saved->status = g->kept_status;
    if (g->kept_status != WEFT_OK) memcpy(saved->text, g->kept, sizeof(saved->text));
    weft_graph_clear_error(g);
}

void weft__graph_error_restore(weft_graph_t *g, const weft__kept_error_t *saved)
{
    weft_graph_clear_error(g);
    g->kept_status = saved->status;
    if (saved->status != WEFT_OK) memcpy(g->kept, saved->text, sizeof(g->kept));
}

/* Constructor errors (lib/graph/graph_error.c; weft/graph.h "Errors"): the
 * helpers every module's constructors end with, and what library code that
 * returns a status uses around constructors. Interface of weft_graph. */
#ifndef WEFT_GRAPH_CTOR_INT_H
#define WEFT_GRAPH_CTOR_INT_H

#include "weft/graph.h"
#include "weft/status.h"

#define WEFT__KEPT_CAP 1024

/* Starts a constructor: forgets g's last-error text, so a failure path that
 * writes none is reported by its status rather than by a stale message. */
void weft__ctor_begin(weft_graph_t *g);
/* Ends a constructor that returns `out` (NULL unless s is WEFT_OK): on
 * failure keeps g's last-error text, with "(CTOR at FILE:LINE)" appended
 * when the text lacks the site, as the first error (a later one is dropped:
 * so a constructor given the NULL of an earlier failure adds nothing).
 * Returns out, or NULL on failure. */
void *weft__ctor_end(weft_graph_t *g, weft_status_t s, void *out, const char *ctor,
                     const char *file, int line);
/* The status of the latest failed constructor on g (kept or not): what code
 * that returns a status passes on when a constructor gave NULL. */
weft_status_t weft__ctor_status(const weft_graph_t *g);
/* A saved kept error, for library code that builds speculatively (a rewrite
 * trying a replacement): save clears g's kept error; restore puts the saved
 * one back and drops what was kept in between. */
typedef struct weft__kept_error {
    weft_status_t status;
    char text[WEFT__KEPT_CAP];
} weft__kept_error_t;
void weft__graph_error_save(weft_graph_t *g, weft__kept_error_t *saved);
void weft__graph_error_restore(weft_graph_t *g, const weft__kept_error_t *saved);

/* The status of storing constructor result v: WEFT_OK, or the latest
 * failure's. For code returning a status: st = weft__got(g, v = weft_add(..)). */
static inline weft_status_t weft__got(const weft_graph_t *g, const void *v)
{
    return v ? WEFT_OK : weft__ctor_status(g);
}

#endif /* WEFT_GRAPH_CTOR_INT_H */

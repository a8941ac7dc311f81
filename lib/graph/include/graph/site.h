/* Creation sites as messages print them (lib/graph/site.c). A site is a
 * file and a line; line 0 means the file alone names the place: the nodes
 * of a loaded JSON graph are at "g.json node 6" (docs/graph-format.md §5),
 * an entry's index, which "g.json node:6" would misread as a line.
 * Interface of weft_graph. */
#ifndef WEFT_GRAPH_SITE_H
#define WEFT_GRAPH_SITE_H

#include <stddef.h>

/* Room for any site a message prints (a longer one is cut). */
#define WEFT__SITE_CAP 320

/* Writes "file:line", or "file" when line is 0 ("?" for a NULL file), to
 * buf (cap bytes); returns buf, for use as a printf argument. */
const char *weft__site_str(char *buf, size_t cap, const char *file, int line);

#endif /* WEFT_GRAPH_SITE_H */

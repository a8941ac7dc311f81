/* weft-rewrite-bench's wide-graph lines (widebench.c). */
#ifndef WEFT_TOOLS_WIDEBENCH_H
#define WEFT_TOOLS_WIDEBENCH_H

/* Prints one "rewritebench wide graph=..." line per wide graph. */
void weft__widebench_run(void);

#endif

/* Status codes returned by every fallible weft function.
 *
 * WEFT_OK is 0 and every error is negative. Details of an error (which node,
 * variable or op, and where it was created) are kept on the object that
 * failed, e.g. weft_fgraph_last_error(); the status itself is only the kind.
 *
 * One X-macro table generates the enum, weft_status_name() and
 * weft_status_str(). Later modules append codes at the end of the table;
 * values never change once released. */
#ifndef WEFT_STATUS_H
#define WEFT_STATUS_H

#include "weft/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, value, "description") */
#define WEFT_STATUS_TABLE(X)                                                        \
    X(WEFT_OK, 0, "success")                                                        \
    X(WEFT_EINVAL, -1, "invalid argument")                                          \
    X(WEFT_ENOMEM, -2, "out of memory")                                             \
    X(WEFT_ETYPE, -3, "type mismatch")                                              \
    X(WEFT_ESHAPE, -4, "shape mismatch")                                            \
    X(WEFT_ECYCLE, -5, "graph contains a cycle")                                    \
    X(WEFT_ENOTFOUND, -6, "not found")                                              \
    X(WEFT_EDUPLICATE, -7, "duplicate entry")                                       \
    X(WEFT_EBUSY, -8, "object is in use (running, or has runs in flight)")         \
    X(WEFT_ECANCELED, -9, "canceled")                                               \
    X(WEFT_EFOREIGN, -10, "object belongs to another graph, pool or DAG")           \
    X(WEFT_EMISSING_INPUT, -11, "undeclared graph input")                           \
    X(WEFT_EINCONSISTENT, -12, "graph state rejected by a feature")                 \
    X(WEFT_ENOTIMPL, -13, "not supported for these arguments")                      \
    X(WEFT_ESTATE, -14, "operation not allowed in the current state")               \
    X(WEFT_ENODE_FAILED, -15, "a node failed while running")                        \
    X(WEFT_EALREADY, -16, "already present")                                        \
    X(WEFT_ERANGE, -17, "value out of range")                                       \
    X(WEFT_EOVERFLOW, -18, "size overflow")                                         \
    X(WEFT_EIO, -19, "input/output error")                                          \
    X(WEFT_EPARSE, -20, "malformed input text")                                     \
    X(WEFT_EDISCONNECTED, -21, "gradient input is disconnected from the cost")      \
    X(WEFT_ENOGRAD, -22, "operation has no gradient")                               \
    X(WEFT_ENAN, -23, "NaN or Inf produced")                                        \
    X(WEFT_ESYSTEM, -24, "system call failed")                                      \
    X(WEFT_ENOCONVERGE, -25, "rewrite did not reach a fixed point within its bound")

typedef enum weft_status {
#define WEFT_STATUS_ENUM_(name, value, text) name = value,
    WEFT_STATUS_TABLE(WEFT_STATUS_ENUM_)
#undef WEFT_STATUS_ENUM_
} weft_status_t;

/* The enum constant's name, e.g. "WEFT_EINVAL"; "WEFT_UNKNOWN" for a value
 * outside the table. Returns a static string. */
WEFT_API const char *weft_status_name(weft_status_t s);

/* A short English description; "unknown status" outside the table.
 * Returns a static string. */
WEFT_API const char *weft_status_str(weft_status_t s);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_STATUS_H */

/* The JSON graph format: saving any graph (inputs, outputs, updates) to text
 * and loading it back, and the registry of op classes by name.
 *
 * Format (version 1). One JSON object:
 *
 *   {
 *    "format": "weft-graph", "version": 1,
 *    "inputs": [
 *     {"id": 0, "name": "x", "dtype": "float64", "shape": [64, null], "mutable": false},
 *     {"id": 1, "name": "w", "dtype": "float64", "shape": [256, 256], "mutable": true}],
 *    "constants": [
 *     {"id": 2, "dtype": "float64", "shape": [], "data": [0.5]}],
 *    "nodes": [
 *     {"op": "Dot", "inputs": [0, 1], "outputs": [3]},
 *     {"op": "Mul", "props": {"inplace": -1}, "inputs": [3, 2], "outputs": [4],
 *      "names": ["h"]}],
 *    "outputs": [4],
 *    "updates": [{"input": 1, "value": 4}]
 *   }
 *
 * - Every variable has an integer id (>= 0, unique in its graph object):
 *   inputs, constants and node outputs. Saving numbers them 0, 1, ... in the
 *   order inputs, then constants and node outputs as the topological walk
 *   meets them, so saving the same graph twice gives the same text.
 * - inputs: dtype ("bool", "int32", "int64", "float32", "float64"), shape
 *   (a length >= 0, or null for an unknown length), optional name, optional
 *   mutable (default false, as a NULL input_mutable in C: only with true may
 *   an in-place op overwrite the caller's tensor; updated inputs always may).
 * - constants: dtype, shape (every length known), data: the elements in C
 *   order as numbers (bool: true/false or 0/1; floats may be the strings
 *   "nan", "inf", "-inf"); doubles are written with 17 significant digits so
 *   they load back bit for bit.
 * - nodes: in topological order (a node only names ids defined before it).
 *   op: the op class name, looked up in the op class registry
 *   (weft_op_class_find: weft's own classes and those registered with
 *   weft_op_class_register); props:
 *   the object written by the class's props_to_json hook (absent for
 *   classes without props); inputs: ids; outputs: one new id per output of
 *   the node; names (optional): one name or null per output.
 * - outputs: ids of the graph outputs. updates (optional): pairs
 *   {input id, value id}: after a call, the input (or shared variable)
 *   takes the value (PyTensor's updates of shared variables).
 * - shared (optional): shared variables (weft/shared.h) with their current
 *   values, entries as constants': {"id", "name", "dtype", "shape", "data"}
 *   (docs/graph-format.md, "Shared variables"). Loading makes a new shared
 *   variable of g per entry; the graph's updates name them by id.
 * - OpFromGraph's props hold its inner graph in this same format (nested:
 *   {"name", "inline", "graph": {...}, "grad_override": {"op", "props"}}).
 * - Elementwise nodes broadcast as the C constructors do: lower-rank inputs
 *   are left-padded with DimShuffles when the graph is loaded.
 * - Any key the format does not define, props included, is an error naming
 *   it. docs/graph-format.md documents every op's props;
 *   docs/weft-graph.schema.json is the JSON Schema.
 * Saving writes one node, input or constant per line, so a line number points
 * at one entry.
 *
 * Errors when loading name the place at fault: a JSON syntax error gives the
 * source name with jansson's line and column ("g.json:12:7: ..."), anything
 * else the key path ("nodes[3].op: unknown op 'Foo'", "nodes[3].inputs[1]:
 * unknown variable id 99", "constants[0].data: 5 values for shape [2,3]").
 *
 * Thread: the class registry is locked (any thread); a save or load uses its
 * graph context from one thread. */
#ifndef WEFT_GRAPH_IO_H
#define WEFT_GRAPH_IO_H

#include <stdbool.h>
#include <stddef.h>

#include "weft/export.h"
#include "weft/function.h" /* weft_update_t */
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_GRAPH_IO_VERSION 1

/* A graph to save, or a loaded graph. For saving, the caller fills it (arrays
 * borrowed); loading fills it with arrays owned by the struct (release with
 * weft_graph_io_clear; the variables themselves belong to the context).
 * input_mutable may be NULL: no input mutable (only updated ones), as NULL
 * means in weft_function_options_t; saved as "mutable": false. */
typedef struct weft_graph_io {
    size_t n_inputs;
    weft_var_t **inputs;
    bool *input_mutable;
    size_t n_outputs;
    weft_var_t **outputs;
    /* Updates in the form weft_function_compile takes: each var is one of
     * the inputs or a shared variable (weft/shared.h); value is what it
     * takes after a call. */
    size_t n_updates;
    weft_update_t *updates;
} weft_graph_io_t;

/* Saves the graph as JSON text (NUL-terminated).
 * Every root variable the outputs and update values depend on must be an
 * input, a constant or a shared variable. Constants are saved with their
 * data, shared variables with their current value (weft_shared_get).
 * Ownership: borrows graph; *text is new, free with weft_graph_io_free_text.
 * Errors (message on the outputs' context, weft_graph_last_error):
 *   WEFT_EINVAL (NULL args, no outputs, a NULL variable, an input that has an
 *     owner, is shared or is listed twice, an update whose variable is not
 *     among the inputs nor a shared variable),
 *   WEFT_EFOREIGN (variables of different contexts),
 *   WEFT_EMISSING_INPUT (an undeclared root, named),
 *   WEFT_ENOTIMPL (an op class with props but no props_to_json hook, named),
 *   WEFT_ECYCLE (the nodes form a cycle: docs/fgraph.md §3; its nodes named),
 *   or a hook's error, WEFT_ENOMEM. */
WEFT_API weft_status_t weft_graph_io_save(const weft_graph_io_t *graph, char **text);
/* As weft_graph_io_save, written to path. Errors: as save, plus WEFT_EIO. */
WEFT_API weft_status_t weft_graph_io_save_file(const weft_graph_io_t *graph, const char *path);
WEFT_API void weft_graph_io_free_text(char *text);

/* Loads JSON text (len bytes) into g and fills *out. source names the text
 * in error messages (e.g. its file name; NULL: "<string>").
 * Ownership: borrows g, text, source; *out's arrays are new (release with
 * weft_graph_io_clear; cleared on error); nodes built before an error stay
 * in g, unused.
 * Errors (message on g, weft_graph_last_error, naming the line or key):
 *   WEFT_EINVAL (NULL args),
 *   WEFT_EPARSE (JSON syntax, a missing key or wrong JSON type, wrong format
 *     name or version, an unknown key (props included; "nodes[0].props:
 *     unknown key 'x' (Dot reads no props)"), unknown op, dangling or
 *     duplicate variable id, a node
 *     outputs list of the wrong length, an update input not among the inputs
 *     nor the shared variables),
 *   WEFT_ETYPE (unknown dtype; a node whose op rejects its input types),
 *   WEFT_ESHAPE (constant data length vs shape, a bad shape entry),
 *   WEFT_ENOTIMPL (an op class with props but no props_from_json hook),
 *   or the op's make_node error, WEFT_ENOMEM. */
WEFT_API weft_status_t weft_graph_io_load(weft_graph_t *g, const char *text, size_t len,
                                          const char *source, weft_graph_io_t *out);
/* Reads path and loads it (source = path). Errors: as load, plus WEFT_EIO
 * (cannot read the file, named). */
WEFT_API weft_status_t weft_graph_io_load_file(weft_graph_t *g, const char *path,
                                               weft_graph_io_t *out);
/* Frees the arrays of a loaded graph and zeroes it. NULL: no-op. */
WEFT_API void weft_graph_io_clear(weft_graph_io_t *graph);


#ifdef __cplusplus
}
#endif
#endif /* WEFT_GRAPH_IO_H */

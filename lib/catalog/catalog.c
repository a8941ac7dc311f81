/* What weft ships, listed in one place: the op classes in the op class
 * registry (weft/op.h) and the contents of the default rewrite database
 * (weft/rewrite_db.h). The modules below only define their classes and
 * rewrites; none registers itself as a side effect of being used, and the
 * JSON loader (lib/io) finds classes through the registry alone.
 *
 * Registration runs once, at load (a constructor), so the registry is full
 * before main and before any thread can look a name up. The static library
 * keeps this object through the link option -u weft__catalog_anchor, which
 * the CMake package and weft.pc carry for static consumers. An out-of-memory
 * failure at load leaves a class unregistered: loading a graph naming it then
 * reports an unknown op. */
#include "graph/ctor_int.h"
#include "graph/input_prep.h"
#include "rewrite/default_db.h"
#include "weft/elemwise.h"
#include "weft/op.h"
#include "weft/opfromgraph.h"
#include "weft/ops.h"
#include "weft/rewrite_db.h"
#include "weft/scan.h"
#include "weft/shape_ops.h"

/* The default rewrite database: the rewrite module's pipeline (merge,
 * folding, canonicalization, specialization, fusion, in-place), then the
 * rewrites other modules contribute. */
static weft_status_t fill_default_rewrites(weft_rewrite_db_t *db)
{
    weft_status_t st = weft_rewrite_db_add_builtins(db);
    if (st == WEFT_OK) st = weft_ofg_register_rewrites(db); /* OpFromGraph inlining */
    if (st == WEFT_OK) st = weft_scan_register_rewrites(db); /* scan_save_mem */
    return st;
}

static void register_op_classes(void)
{
    for (size_t i = 0; i < weft_ops_n_classes(); i++)
        (void)weft_op_class_register(weft_ops_class_at(i)); /* every built-in op */
    (void)weft_op_class_register(weft_ofg_class());
    (void)weft_op_class_register(weft_scan_class());
}

/* The JSON loader's input preparation (graph/input_prep.h): elementwise
 * nodes left-pad lower-rank inputs with DimShuffles, as the C constructors
 * do (weft_add and friends); every other op takes its inputs as stored. */
static weft_status_t prep_inputs(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                 weft_var_t *const *in, const char *file, int line,
                                 weft_var_t **out)
{
    int ndim = 0;
    bool elemwise = weft_elemwise_op_info(op, NULL, NULL);
    for (size_t i = 0; i < n_in; i++) {
        out[i] = in[i];
        const weft_type_t *t = in[i] ? weft_var_type(in[i]) : NULL;
        if (elemwise && t && weft_type_kind(t) == WEFT_TYPE_TENSOR && weft_type_ndim(t) > ndim)
            ndim = weft_type_ndim(t);
    }
    for (size_t i = 0; elemwise && i < n_in; i++) {
        const weft_type_t *t = in[i] ? weft_var_type(in[i]) : NULL;
        if (!t || weft_type_kind(t) != WEFT_TYPE_TENSOR || weft_type_ndim(t) == ndim) continue;
        weft_status_t st = weft__got(g, out[i] = weft_pad_left_at(g, in[i], ndim, file, line));
        if (st != WEFT_OK) return st;
    }
    return WEFT_OK;
}

__attribute__((constructor)) static void catalog_init(void)
{
    register_op_classes();
    weft__input_prep_set(prep_inputs);
    weft__rewrite_db_set_default_contents(fill_default_rewrites);
}

/* Referenced by the static library's consumers' link line (see above). */
__attribute__((used)) void weft__catalog_anchor(void);
void weft__catalog_anchor(void)
{
}

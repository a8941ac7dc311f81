/* The rounding, integer and logical kinds (issue 17, weft/elemwise.h): their
 * dtype rules (NumPy 1.24's, within weft's dtypes), which of them read any
 * dtype and write bool, and the Clip constructor. Kernels:
 * elemwise_int_kernels.c; gradients: elemwise_grad.c. */
#include <math.h>

#include "graph/ctor_int.h"
#include "ops_int.h"

bool weft__ew_int_is_predicate(weft_elemwise_kind_t k)
{
    switch (k) {
    case WEFT_ELEMWISE_ISNAN: case WEFT_ELEMWISE_ISINF: case WEFT_ELEMWISE_ISFINITE:
    case WEFT_ELEMWISE_LOGICAL_NOT: case WEFT_ELEMWISE_LOGICAL_AND:
    case WEFT_ELEMWISE_LOGICAL_OR: case WEFT_ELEMWISE_LOGICAL_XOR:
        return true;
    default:
        return false;
    }
}

bool weft__ew_int_is_costly(weft_elemwise_kind_t k)
{
    return k == WEFT_ELEMWISE_MOD || k == WEFT_ELEMWISE_FLOOR_DIVIDE || k == WEFT_ELEMWISE_FMOD;
}

/* What a kind accepts: the class of its common input dtype. */
typedef enum rule {
    RULE_NONE,     /* not a kind of this file */
    RULE_TO_FLOAT, /* float stays, else weft_dtype_float_of (Floor Ceil Trunc Rint) */
    RULE_NUMERIC,  /* integer or float kept, bool widened (Round Mod FloorDivide Fmod Clip) */
    RULE_ANY,      /* any dtype, kept (NanToNum; Abs of bool) */
    RULE_BOOL_OUT, /* any dtype in, bool out (the predicates) */
    RULE_BITS,     /* bool or integer, kept (Invert, bitwise and/or/xor) */
    RULE_INT,      /* integer kept, bool as int8 (shifts) */
} rule_t;

static rule_t kind_rule(weft_elemwise_kind_t k, weft_dtype_t dt)
{
    if (weft__ew_int_is_predicate(k)) return RULE_BOOL_OUT;
    switch (k) {
    case WEFT_ELEMWISE_FLOOR: case WEFT_ELEMWISE_CEIL: case WEFT_ELEMWISE_TRUNC:
    case WEFT_ELEMWISE_RINT:
        return RULE_TO_FLOAT;
    case WEFT_ELEMWISE_ROUND: case WEFT_ELEMWISE_MOD: case WEFT_ELEMWISE_FLOOR_DIVIDE:
    case WEFT_ELEMWISE_FMOD: case WEFT_ELEMWISE_CLIP:
        return RULE_NUMERIC;
    case WEFT_ELEMWISE_NAN_TO_NUM: return RULE_ANY;
    case WEFT_ELEMWISE_ABS: return dt == WEFT_BOOL ? RULE_ANY : RULE_NONE;
    case WEFT_ELEMWISE_INVERT: case WEFT_ELEMWISE_BITWISE_AND: case WEFT_ELEMWISE_BITWISE_OR:
    case WEFT_ELEMWISE_BITWISE_XOR:
        return RULE_BITS;
    case WEFT_ELEMWISE_LEFT_SHIFT: case WEFT_ELEMWISE_RIGHT_SHIFT: return RULE_INT;
    default: return RULE_NONE;
    }
}

bool weft__ew_int_dtype(weft_graph_t *g, weft_elemwise_kind_t k, weft_dtype_t dt,
                        weft_dtype_t *out, weft_status_t *st)
{
    rule_t r = kind_rule(k, dt);
    const char *name = weft_elemwise_name(k), *need = NULL;
    bool is_float = weft__dtype_is_float(dt);
    *st = WEFT_OK;
    *out = dt;
    switch (r) {
    case RULE_NONE: return false;
    case RULE_BOOL_OUT: *out = WEFT_BOOL; return true;
    case RULE_ANY: return true;
    case RULE_TO_FLOAT: /* NumPy's loops: bool and integers as the float-only kinds */
        *out = weft_dtype_float_of(dt);
        break;
    case RULE_NUMERIC: /* bool: Round's loop is float16's, the others' int8's */
        if (dt == WEFT_BOOL && k == WEFT_ELEMWISE_CLIP) need = "a numeric input is required";
        else if (dt == WEFT_BOOL) *out = k == WEFT_ELEMWISE_ROUND ? WEFT_FLOAT16 : WEFT_INT8;
        break;
    case RULE_BITS:
        if (is_float) need = "bitwise ops need integer or bool inputs";
        break;
    case RULE_INT: /* bool shifts as int8, as NumPy */
        if (is_float) need = "shifts need an integer input";
        else if (dt == WEFT_BOOL) *out = WEFT_INT8;
        break;
    }
    if (need)
        *st = weft_graph_set_error(g, WEFT_ETYPE, "%s: inputs are %s; %s", name,
                                   weft_dtype_name(dt), need);
    return true;
}

weft_var_t *weft_clip_at(weft_graph_t *g, weft_var_t *x, weft_var_t *lo, weft_var_t *hi,
                         const char *file, int line)
{
    weft_var_t *in[3] = {x, lo, hi};
    return weft_elemwise_at(g, WEFT_ELEMWISE_CLIP, 3, in, file, line);
}

/* where(x == v, c, y) with v, c 0-d constants of x's dtype. */
static weft_var_t *replace_value(weft_graph_t *g, weft_var_t *x, double v, double c,
                                 weft_var_t *y, const char *file, int line)
{
    weft_dtype_t dt = weft_type_dtype(weft_var_type(x));
    weft_var_t *hit = weft_binary_scalar_at(g, WEFT_ELEMWISE_EQ, x, v, file, line);
    return weft_switch_at(g, hit, weft_constant_scalar_at(g, dt, c, file, line), y, file, line);
}

static weft_status_t nan_to_num_build(weft_graph_t *g, weft_var_t *x, double nan, double posinf,
                                      double neginf, const char *file, int line,
                                      weft_var_t **out)
{
    if (!x)
        return weft_graph_set_error(g, WEFT_EINVAL, "NanToNum at %s:%d: input 0 is NULL", file,
                                    line);
    const weft_type_t *t = weft_var_type(x);
    if (weft_type_kind(t) == WEFT_TYPE_TENSOR && !weft__dtype_is_float(weft_type_dtype(t)))
        return weft__got(g, *out = weft_unary_at(g, WEFT_ELEMWISE_NAN_TO_NUM, x, file, line));
    weft_var_t *y = replace_value(g, x, -INFINITY, neginf, x, file, line);
    y = replace_value(g, x, INFINITY, posinf, y, file, line);
    weft_var_t *isnan_x = weft_unary_at(g, WEFT_ELEMWISE_ISNAN, x, file, line);
    weft_var_t *c = isnan_x ? weft_constant_scalar_at(g, weft_type_dtype(t), nan, file, line)
                            : NULL;
    return weft__got(g, *out = weft_switch_at(g, isnan_x, c, y, file, line));
}

weft_var_t *weft_nan_to_num_values_at(weft_graph_t *g, weft_var_t *x, double nan, double posinf,
                                      double neginf, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st =
        g ? nan_to_num_build(g, x, nan, posinf, neginf, file, line, &out) : WEFT_EINVAL;
    return weft__ctor_end(g, st, out, "weft_nan_to_num_values", file, line);
}

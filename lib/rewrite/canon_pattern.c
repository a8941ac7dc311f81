/* Built-in rewrites written as patterns (weft/rewrite_pattern.h): the
 * cancellations x*y/y -> x and (x/y)*y -> x (commutative Mul matching covers
 * y*x/y). Like PyTensor's multiplicative canonicalizer they ignore y = 0,
 * Inf or NaN, so they carry the tag fast_math (docs/rewrites.md §6.5); their
 * tag shape_unsafe says they also drop y's own shape check (a y that could
 * not broadcast against x no longer raises). They only fire when x's type may
 * replace the output (no broadcasting by y; dtype fixed by a Cast). */
#include <string.h>

#include "rewrite_int.h"

typedef struct builtin_pattern {
    const char *name, *in, *out;
} builtin_pattern_t;

static const builtin_pattern_t patterns[] = {
    {"local_div_mul_cancel", "(Div (Mul x y) y)", "x"},
    {"local_mul_div_cancel", "(Mul (Div x y) y)", "x"},
};

static const builtin_pattern_t *find(const char *name)
{
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++)
        if (strcmp(patterns[i].name, name) == 0) return &patterns[i];
    return NULL;
}

bool weft__pattern_builtin_exists(const char *name)
{
    return find(name) != NULL;
}

weft_status_t weft__pattern_builtin_create(const char *name, weft_rewriter_t **out)
{
    const builtin_pattern_t *b = find(name);
    if (!b) return WEFT_ENOTFOUND;
    weft_pattern_desc_t d = WEFT_PATTERN_DESC_INIT;
    d.name = b->name;
    d.in_pattern = b->in;
    d.out_pattern = b->out;
    return weft_rewriter_pattern_create(&d, out);
}

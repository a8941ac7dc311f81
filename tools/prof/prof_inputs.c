/* weft-prof's input data (prof.h): seeded random tensors of each input's
 * static type (floats uniform in [-1, 1), integers in [0, 10), booleans
 * 0/1), or .npy files given per input name. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "prof.h"

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Seeded random tensor of v's static type; 1 with a message if a length is
 * unknown. */
static int random_input(const weft_var_t *v, uint64_t seed, weft_tensor_t **out)
{
    const weft_type_t *t = weft_var_type(v);
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < weft_type_ndim(t); d++) {
        shape[d] = weft_type_dim(t, d);
        if (shape[d] == WEFT_DIM_UNKNOWN) {
            fprintf(stderr,
                    "weft-prof: input '%s' has an unknown length on axis %d: give "
                    "--input %s=FILE.npy\n",
                    weft_var_name(v) ? weft_var_name(v) : "?", d,
                    weft_var_name(v) ? weft_var_name(v) : "NAME");
            return 1;
        }
    }
    weft_dtype_t dt = weft_type_dtype(t);
    bool is_float = weft_dtype_kind(dt) == WEFT_KIND_FLOAT;
    /* float16: drawn in float32, then rounded */
    weft_dtype_t draw = dt == WEFT_FLOAT16 ? WEFT_FLOAT32 : dt;
    weft_tensor_t *drawn = NULL;
    weft_status_t s = is_float
                          ? weft_verify_grad_random(draw, weft_type_ndim(t), shape, -1, 1, seed, &drawn)
                          : weft_tensor_zeros(dt, weft_type_ndim(t), shape, out);
    if (s == WEFT_OK && is_float) {
        s = draw == dt ? (*out = drawn, WEFT_OK) : weft_tensor_copy_as(drawn, dt, out);
        if (draw != dt) weft_tensor_release(drawn);
    }
    if (s != WEFT_OK) {
        fprintf(stderr, "weft-prof: cannot make input data: %s\n", weft_tensor_last_error());
        return 1;
    }
    if (is_float) return 0;
    uint64_t st = seed;
    for (size_t i = 0; i < weft_tensor_size(*out); i++) {
        int64_t idx[WEFT_MAX_NDIM];
        size_t r = i;
        for (int d = weft_type_ndim(t) - 1; d >= 0; d--) {
            idx[d] = (int64_t)(r % (size_t)shape[d]);
            r /= (size_t)shape[d];
        }
        weft_tensor_set(*out, idx, (double)(splitmix(&st) % (dt == WEFT_BOOL ? 2 : 10)));
    }
    return 0;
}

int prof_make_inputs(const prof_opts_t *o, const weft_graph_io_t *gr, weft_tensor_t **vals)
{
    for (size_t n = 0; n < o->n_npy; n++) {
        bool found = false;
        for (size_t k = 0; k < gr->n_inputs; k++)
            found = found || (weft_var_name(gr->inputs[k]) &&
                              strcmp(weft_var_name(gr->inputs[k]), o->npy_name[n]) == 0);
        if (!found) {
            fprintf(stderr, "weft-prof: --input %s: the graph has no input of that name\n",
                    o->npy_name[n]);
            return 1;
        }
    }
    for (size_t k = 0; k < gr->n_inputs; k++) {
        const char *name = weft_var_name(gr->inputs[k]), *path = NULL;
        for (size_t n = 0; name && n < o->n_npy; n++)
            if (strcmp(name, o->npy_name[n]) == 0) path = o->npy_path[n];
        if (!path && random_input(gr->inputs[k], o->seed + 1000003u * k, &vals[k])) return 1;
        char msg[512];
        if (path && weft_npy_load(path, &vals[k], msg, sizeof(msg)) != WEFT_OK) {
            fprintf(stderr, "weft-prof: --input %s: %s\n", name, msg);
            return 1;
        }
    }
    return 0;
}

#include <stdio.h>
#include <weft/weft.h>

int main(void) /* tanh(x * y) on two float64 vectors, compiled once, run on the pool */
{
    weft_graph_t *g; /* owns everything built in it */
    const weft_type_t *vec;
    weft_var_t *xy, *out, *in_vars[2];
    weft_function_t *f;
    weft_graph_create(NULL, &g);
    weft_type_tensor(g, WEFT_FLOAT64, 1, NULL, &vec); /* float64[?] */
    weft_var_create(g, vec, "x", &in_vars[0]);
    weft_var_create(g, vec, "y", &in_vars[1]);
    weft_mul(g, in_vars[0], in_vars[1], &xy);
    weft_tanh(g, xy, &out);
    if (weft_function_compile(2, in_vars, 1, &out, 0, NULL, NULL, &f) != WEFT_OK)
        return fprintf(stderr, "%s\n", weft_function_last_error(NULL)), 1;
    double xs[3] = {1, 2, 3}, ys[3] = {0.5, 0.25, 0.1}, r[3];
    int64_t n = 3;
    weft_tensor_t *in[2], *res; /* tensors borrowing our arrays */
    weft_tensor_from_data(WEFT_FLOAT64, 1, &n, NULL, xs, &in[0]);
    weft_tensor_from_data(WEFT_FLOAT64, 1, &n, NULL, ys, &in[1]);
    weft_tensor_from_data(WEFT_FLOAT64, 1, &n, NULL, r, &res);
    weft_status_t s = weft_function_call(f, 2, in, 1, &res); /* fills r */
    printf("%s: %.6f %.6f %.6f\n", weft_status_name(s), r[0], r[1], r[2]);
    weft_tensor_release(in[0]), weft_tensor_release(in[1]), weft_tensor_release(res);
    weft_function_destroy(f);
    weft_graph_destroy(g);
    return s != WEFT_OK;
}

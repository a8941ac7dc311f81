#include <stdio.h>
#include <weft/weft.h>

/* Trains a 2-layer tanh MLP: each call is one SGD step on the parameters,
 * loss = mean((tanh(x W1 + b1) W2 + b2 - y)^2), p <- p - 0.5 * d loss / d p */
int main(void)
{
    weft_graph_t *g; /* owns everything built in it */
    const weft_type_t *mat, *vec;
    weft_graph_create(NULL, &g);
    weft_type_tensor(g, WEFT_FLOAT64, 2, NULL, &mat); /* float64[?,?] */
    weft_type_tensor(g, WEFT_FLOAT64, 1, NULL, &vec); /* float64[?] */
    weft_var_t *in[6] = {weft_var_create(g, mat, "x"),  weft_var_create(g, mat, "y"),
                         weft_var_create(g, mat, "W1"), weft_var_create(g, vec, "b1"),
                         weft_var_create(g, mat, "W2"), weft_var_create(g, vec, "b2")};
    weft_var_t *h = weft_tanh(g, weft_add(g, weft_dot(g, in[0], in[2]), in[3]));
    weft_var_t *err = weft_sub(g, weft_add(g, weft_dot(g, h, in[4]), in[5]), in[1]);
    weft_var_t *loss = weft_mean(g, weft_sqr(g, err), 0, NULL, false), **p = in + 2, *grads[4];
    weft_grads(g, loss, 4, p, NULL, grads); /* d loss / d W1, b1, W2, b2 */
    weft_update_t up[4];
    for (int k = 0; k < 4; k++) /* p - 0.5 * grad */
        up[k] = (weft_update_t){p[k], weft_sub(g, p[k], weft_mul_scalar(g, grads[k], 0.5))};
    weft_function_t *f; /* one check: a construction error is kept and reported here */
    if (weft_function_compile(6, in, 1, &loss, 4, up, NULL, &f) != WEFT_OK)
        return fprintf(stderr, "%s\n", weft_function_last_error(NULL)), 1;
    double x[8] = {0, 0, 0, 1, 1, 0, 1, 1}, y[4] = {0, 1, 1, 0}, l;
    double w1[6] = {0.5, -0.4, 0.3, -0.2, 0.6, 0.1}, b1[3] = {0}, w2[3] = {0.7, -0.5, 0.2};
    double b2[1] = {0};
    int64_t s[6][2] = {{4, 2}, {4, 1}, {2, 3}, {3}, {3, 1}, {1}};
    void *data[6] = {x, y, w1, b1, w2, b2};
    weft_tensor_t *t[6], *lt; /* tensors borrowing our arrays; updates write the parameters */
    for (int k = 0; k < 6; k++)
        weft_tensor_from_data(WEFT_FLOAT64, k == 3 || k == 5 ? 1 : 2, s[k], NULL, data[k], &t[k]);
    weft_tensor_from_data(WEFT_FLOAT64, 0, NULL, NULL, &l, &lt);
    weft_status_t st = WEFT_OK;
    for (int step = 0; step < 3 && st == WEFT_OK; step++) {
        st = weft_function_call(f, 6, t, 1, &lt); /* fills l, then updates W1, b1, W2, b2 */
        printf("%s%.6f", step ? " " : "loss: ", l);
    }
    printf("\n%s\n", weft_status_name(st));
    for (int k = 0; k < 6; k++) weft_tensor_release(t[k]);
    weft_tensor_release(lt);
    weft_function_destroy(f);
    weft_graph_destroy(g);
    return st != WEFT_OK;
}

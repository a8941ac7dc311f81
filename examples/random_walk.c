/* Random numbers with an explicit key: a random walk (docs/random.md).
 *
 * The key (the generator's state) is a shared variable, like the walkers'
 * positions: each call of the compiled step draws normal increments from
 * the key, and its updates store the new key and the new positions, so the
 * next call draws new increments. Setting the key back to the seed's value
 * repeats the same increments. The values are the same at any thread count.
 *
 * Build: see examples/CMakeLists.txt. Run: ./example_random_walk */
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>

#define WALKERS 4

#define CHECK(call)                                                                 \
    do {                                                                            \
        weft_status_t st_ = (call);                                                 \
        if (st_ != WEFT_OK) {                                                       \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,    \
                    weft_status_name(st_));                                         \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

static void print_positions(const char *label, weft_var_t *pos)
{
    weft_tensor_t *t;
    CHECK(weft_shared_get(pos, &t));
    printf("%s:", label);
    for (int i = 0; i < WALKERS; i++) printf(" %+.6f", ((const double *)weft_tensor_data(t))[i]);
    printf("\n");
    weft_tensor_release(t);
}

int main(void)
{
    weft_graph_t *g;
    CHECK(weft_graph_create(NULL, &g));
    const int64_t n = WALKERS;
    weft_tensor_t *key0, *zeros;
    CHECK(weft_random_key_tensor(2026, &key0)); /* {2026, 0} */
    CHECK(weft_tensor_zeros(WEFT_FLOAT64, 1, &n, &zeros));
    weft_var_t *rng = weft_shared(g, key0, "rng"), *pos = weft_shared(g, zeros, "pos");
    weft_var_t *rng_next = NULL; /* the key after the draw: {2026, stream + 1} */
    weft_var_t *step = weft_random_normal(g, rng, weft_constant_scalar(g, WEFT_FLOAT64, 0.0),
                                          weft_constant_scalar(g, WEFT_FLOAT64, 0.1),
                                          WEFT_FLOAT64, 1, &n, &rng_next);
    weft_var_t *pos_next = weft_add(g, pos, step);
    weft_update_t up[2] = {{rng, rng_next}, {pos, pos_next}};
    weft_function_t *walk; /* no inputs, no outputs: the updates are the result */
    if (weft_function_compile(0, NULL, 0, NULL, 2, up, NULL, &walk) != WEFT_OK) {
        fprintf(stderr, "%s\n", weft_function_last_error(NULL));
        return 1;
    }
    for (int t = 1; t <= 3; t++) {
        CHECK(weft_function_call(walk, 0, NULL, 0, NULL));
        char label[16];
        snprintf(label, sizeof label, "step %d", t);
        print_positions(label, pos);
    }
    /* the same seed and start: the same walk */
    CHECK(weft_shared_set(rng, key0));
    CHECK(weft_shared_set(pos, zeros));
    CHECK(weft_function_call(walk, 0, NULL, 0, NULL));
    print_positions("again 1", pos);
    weft_function_destroy(walk);
    weft_tensor_release(key0);
    weft_tensor_release(zeros);
    weft_graph_destroy(g);
    return 0;
}

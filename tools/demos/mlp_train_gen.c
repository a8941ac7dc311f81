/* weft-mlp-gen: writes tools/demos/mlp_train.json, the demo graph of
 * weft-prof: one training step of a 4-layer tanh MLP (width 256, batch 64,
 * float64) with plain SGD, built with weft_grad and saved with the JSON graph
 * format (weft/graph_io.h).
 *
 *   h1 = tanh(x W1 + b1), h2 = tanh(h1 W2 + b2), h3 = tanh(h2 W3 + b3),
 *   out = h3 W4 + b4, loss = mean((out - y)^2);
 *   outputs: loss; updates: Wk -= lr * dloss/dWk, bk -= lr * dloss/dbk.
 *
 * Usage: weft-mlp-gen [OUT.json]      write the graph (stdout without OUT)
 *        weft-mlp-gen --check FILE    exit 1 unless FILE holds exactly what
 *                                     would be written (the ctest that keeps
 *                                     the checked-in file from going stale) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

#define BATCH  64
#define WIDTH  256
#define LAYERS 4
#define LR     0.01

typedef struct mlp {
    weft_graph_t *g;
    weft_var_t *x, *y, *w[LAYERS], *b[LAYERS];
    weft_var_t *loss, *grads[2 * LAYERS], *news[2 * LAYERS];
} mlp_t;

#define CHECK(call)                                                                     \
    do {                                                                                \
        weft_status_t s_ = (call);                                                      \
        if (s_ != WEFT_OK) {                                                            \
            fprintf(stderr, "weft-mlp-gen: %s: %s (%s)\n", #call, weft_status_name(s_), \
                    weft_graph_last_error(m->g));                                       \
            return s_;                                                                  \
        }                                                                               \
    } while (0)
static weft_status_t make_inputs(mlp_t *m)
{
    const weft_type_t *tx, *tw, *tb;
    int64_t xs[2] = {BATCH, WIDTH}, ws[2] = {WIDTH, WIDTH}, bs[1] = {WIDTH};
    CHECK(weft_type_tensor(m->g, WEFT_FLOAT64, 2, xs, &tx));
    CHECK(weft_type_tensor(m->g, WEFT_FLOAT64, 2, ws, &tw));
    CHECK(weft_type_tensor(m->g, WEFT_FLOAT64, 1, bs, &tb));
    m->x = weft_var_create(m->g, tx, "x");
    m->y = weft_var_create(m->g, tx, "y");
    for (int k = 0; k < LAYERS; k++) {
        char wn[8], bn[8];
        snprintf(wn, sizeof(wn), "W%d", k + 1);
        snprintf(bn, sizeof(bn), "b%d", k + 1);
        m->w[k] = weft_var_create(m->g, tw, wn);
        m->b[k] = weft_var_create(m->g, tb, bn);
    }
    return WEFT_OK;
}

/* Construction errors are kept on m->g and checked once, in build_text. */
static weft_status_t make_forward(mlp_t *m)
{
    weft_var_t *h = m->x;
    for (int k = 0; k < LAYERS; k++) {
        h = weft_add(m->g, weft_dot(m->g, h, m->w[k]), m->b[k]);
        if (k == LAYERS - 1) break;
        char hn[8];
        snprintf(hn, sizeof(hn), "h%d", k + 1);
        h = weft_tanh(m->g, h);
        if (h) CHECK(weft_var_set_name(h, hn));
    }
    m->loss = weft_mean(m->g, weft_sqr(m->g, weft_sub(m->g, h, m->y)), 0, NULL, false);
    if (m->loss) CHECK(weft_var_set_name(m->loss, "loss"));
    return WEFT_OK;
}

static void make_step(mlp_t *m)
{
    weft_var_t *wrt[2 * LAYERS];
    for (int k = 0; k < LAYERS; k++) {
        wrt[2 * k] = m->w[k];
        wrt[2 * k + 1] = m->b[k];
    }
    weft_grads(m->g, m->loss, 2 * LAYERS, wrt, NULL, m->grads);
    for (int i = 0; i < 2 * LAYERS; i++)
        m->news[i] = weft_sub(m->g, wrt[i], weft_mul_scalar(m->g, m->grads[i], LR));
}

/* The graph as JSON text (free with weft_graph_io_free_text). */
static weft_status_t build_text(mlp_t *m, char **text)
{
    weft_status_t s = make_inputs(m);
    if (s == WEFT_OK) s = make_forward(m);
    if (s != WEFT_OK) return s;
    make_step(m);
    if (weft_graph_error(m->g) != WEFT_OK) { /* the one check of the construction */
        fprintf(stderr, "weft-mlp-gen: %s\n", weft_graph_error_message(m->g));
        return weft_graph_error(m->g);
    }
    weft_var_t *in[2 + 2 * LAYERS] = {m->x, m->y}, *ui[2 * LAYERS];
    bool mut[2 + 2 * LAYERS] = {false, false};
    for (int k = 0; k < LAYERS; k++) {
        ui[2 * k] = in[2 + 2 * k] = m->w[k];
        ui[2 * k + 1] = in[3 + 2 * k] = m->b[k];
    }
    for (int i = 2; i < 2 + 2 * LAYERS; i++) mut[i] = true;
    weft_graph_io_t gr = {2 + 2 * LAYERS, in, mut, 1, &m->loss, 2 * LAYERS, ui, m->news};
    CHECK(weft_graph_io_save(&gr, text));
    return WEFT_OK;
}

static int check_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "weft-mlp-gen: cannot read %s\n", path);
        return 1;
    }
    size_t n = strlen(text);
    char *buf = malloc(n + 2);
    size_t k = buf ? fread(buf, 1, n + 1, f) : 0;
    fclose(f);
    int same = buf && k == n && memcmp(buf, text, n) == 0;
    free(buf);
    if (!same)
        fprintf(stderr,
                "weft-mlp-gen: %s is stale: regenerate it with "
                "`weft-mlp-gen %s`\n",
                path, path);
    return same ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: weft-mlp-gen [OUT.json] | --check FILE\n"
               "Writes the 4-layer tanh MLP training step (width %d, batch %d) as a weft "
               "JSON graph.\n",
               WIDTH, BATCH);
        return 0;
    }
    mlp_t m = {0};
    char *text = NULL;
    if (weft_graph_create(NULL, &m.g) != WEFT_OK || build_text(&m, &text) != WEFT_OK) {
        weft_graph_destroy(m.g);
        return 1;
    }
    int rc = 0;
    if (argc > 2 && strcmp(argv[1], "--check") == 0) {
        rc = check_file(argv[2], text);
    } else if (argc > 1) {
        FILE *f = fopen(argv[1], "wb");
        rc = !f || fputs(text, f) < 0;
        if (f && fclose(f) != 0) rc = 1;
        if (rc) fprintf(stderr, "weft-mlp-gen: cannot write %s\n", argv[1]);
    } else {
        fputs(text, stdout);
    }
    weft_graph_io_free_text(text);
    weft_graph_destroy(m.g);
    return rc;
}

/* weft-graph-bench: ns per node of the graph core's operations on seeded
 * random DAGs of 10^4, 10^5 and 10^6 nodes (targets: at most 2 us per node,
 * 10x the nodes at most 12x the time). With no arguments it prints every
 * step at every size. Options: --n N (one size), --steps a,b,... (subset, in
 * table order), --seed S, --warm (caches not flushed before each timed
 * region; see graphbench.h). Output: "graphbench step=STEP n=NODES ns_per_node=X". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphbench.h"

/* DestroyHandler steps: dh_attach, dh_validate, dh_toposort (steps_destroy.c). */
extern const gb_step_table_t gb_destroy_steps;

/* Every step table, run in this order. Other modules' steps append here. */
static const gb_step_table_t *const gb_step_tables[] = {
    &gb_graph_steps,
    &gb_destroy_steps,
};

static int usage(void)
{
    fprintf(stderr, "usage: weft-graph-bench [--n N] [--steps s1,s2,...] [--seed S] [--warm]\n");
    return 2;
}

static int wanted(const char *list, const char *name)
{
    if (!list) return 1;
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == len && strncmp(p, name, len) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

static int known(const char *list)
{
    if (!list) return 1;
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        int found = 0;
        for (size_t t = 0; t < sizeof(gb_step_tables) / sizeof(gb_step_tables[0]); t++)
            for (size_t k = 0; k < gb_step_tables[t]->n; k++) {
                const char *nm = gb_step_tables[t]->steps[k].name;
                found |= strlen(nm) == l && strncmp(nm, p, l) == 0;
            }
        if (!found) {
            fprintf(stderr, "weft-graph-bench: unknown step '%.*s'\n", (int)l, p);
            return 0;
        }
        if (!e) break;
        p = e + 1;
    }
    return 1;
}

static int run_size(size_t n, uint64_t seed, const char *steps)
{
    gb_ctx_t c = {0};
    c.n = n;
    c.seed = seed;
    c.rng = seed * 0x9e3779b97f4a7c15ull + 1;
    int rc = 0;
    for (size_t t = 0; t < sizeof(gb_step_tables) / sizeof(gb_step_tables[0]) && !rc; t++) {
        for (size_t k = 0; k < gb_step_tables[t]->n && !rc; k++) {
            const gb_step_t *s = &gb_step_tables[t]->steps[k];
            if (!wanted(steps, s->name)) continue;
            double ns = 0;
            rc = s->run(&c, &ns);
            if (!rc) {
                printf("graphbench step=%s n=%zu ns_per_node=%.1f\n", s->name, n, ns / (double)n);
                fflush(stdout);
            }
        }
    }
    gb_ctx_fini(&c);
    return rc;
}

int main(int argc, char **argv)
{
    size_t sizes[3] = {10000, 100000, 1000000}, n_sizes = 3;
    const char *steps = NULL;
    uint64_t seed = 42;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
            sizes[0] = strtoull(argv[++i], NULL, 10);
            n_sizes = 1;
            if (sizes[0] < 2) return usage();
        } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            steps = argv[++i];
        } else if (strcmp(argv[i], "--warm") == 0) {
            gb_cold = 0;
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 10);
        } else {
            return usage();
        }
    }
    if (!known(steps)) return 2;
    for (size_t s = 0; s < n_sizes; s++)
        if (run_size(sizes[s], seed, steps)) return 1;
    return 0;
}

/* The fgraph's client vectors: v's (node, index) pairs in the order they were
 * added, with O(1) expected add and removal.
 *
 * Each vector keeps, next to its entries, an increasing order key per entry
 * (from one per-fgraph counter), and the fgraph keeps, for every (node, input
 * i) pair it has seen, the entry's slot in its input's vector (a flat uint32
 * array; ibase[node id] is 1 + the node's first slot). A removal finds its
 * entry through that slot and leaves a tombstone (node NULL, key kept); the
 * vector is compacted (order kept, moved entries' slots renumbered) once the
 * dead entries outnumber the live ones, when it is full, and before anyone
 * reads it as a list (weft__fg_clients_live). A revert reinserts an entry by
 * its key: keys stay sorted, so the key finds the old position whatever
 * compactions happened in between (usually the entry's own tombstone). */
#include <string.h>

#include "fgraph_int.h"

/* ---- storage: power-of-two capacities from per-class free lists ------------ */

#define ENTRY_BYTES (sizeof(weft_client_t) + sizeof(uint64_t))

static size_t cv_cap(const weft__cvec_t *c)
{
    return (size_t)2 << c->cls;
}

/* The keys live in the same block, after the cap entries. */
static uint64_t *cv_keys(const weft__cvec_t *c)
{
    return (uint64_t *)(void *)(c->items + cv_cap(c));
}

static weft_client_t *client_block(weft_fgraph_t *fg, uint32_t cls)
{
    weft_client_t *b = fg->cfree[cls];
    if (b) {
        fg->cfree[cls] = (weft_client_t *)(void *)b->node; /* free-list link */
        return b;
    }
    return weft__arena_alloc(&fg->carena, (ENTRY_BYTES << 1) << cls);
}

static void client_release(weft_fgraph_t *fg, weft_client_t *b, uint32_t cls)
{
    b->node = (weft_apply_t *)(void *)fg->cfree[cls];
    fg->cfree[cls] = b;
}

/* ---- slots ------------------------------------------------------------------ */

static uint32_t *slot_ref(const weft_fgraph_t *fg, const weft_apply_t *node, size_t i)
{
    if (node->id >= fg->ibase_cap || !fg->ibase[node->id]) return NULL;
    return &fg->islot[fg->ibase[node->id] - 1 + i];
}

/* node's slot for input i, assigning the node's slot range on first use. */
static uint32_t *slot_make(weft_fgraph_t *fg, const weft_apply_t *node, size_t i)
{
    uint32_t *s = slot_ref(fg, node, i);
    if (s) return s;
    /* headroom as weft__fg_reserve: the context keeps growing while rewriting */
    size_t need = (size_t)node->id + 1;
    if (need > fg->ibase_cap) need += need / 2;
    if (fg->islot_n + node->n_in >= UINT32_MAX ||
        !weft__vec_grow(fg->alloc, (void **)&fg->ibase, &fg->ibase_cap, need, sizeof(uint32_t)) ||
        !weft__vec_grow(fg->alloc, (void **)&fg->islot, &fg->islot_cap, fg->islot_n + node->n_in,
                        sizeof(uint32_t)))
        return NULL;
    fg->ibase[node->id] = (uint32_t)fg->islot_n + 1;
    fg->islot_n += node->n_in;
    return slot_ref(fg, node, i);
}

uint32_t weft__fg_client_slot(const weft_fgraph_t *fg, const weft_apply_t *node, size_t i)
{
    const uint32_t *s = slot_ref(fg, node, i);
    return s ? *s : UINT32_MAX;
}

/* ---- compaction --------------------------------------------------------------- */

static void compact(weft_fgraph_t *fg, weft__cvec_t *c)
{
    uint64_t *keys = cv_keys(c);
    uint32_t w = 0;
    for (uint32_t r = 0; r < c->end; r++) {
        if (!c->items[r].node) continue;
        if (w != r) {
            c->items[w] = c->items[r];
            keys[w] = keys[r];
            *slot_ref(fg, c->items[w].node, c->items[w].index) = w;
        }
        w++;
    }
    c->end = w;
}

const weft__cvec_t *weft__fg_clients_live(const weft_fgraph_t *fg, const weft_var_t *v)
{
    /* Logically const: compaction changes no client, order or count. The
     * fgraph is used by one thread at a time (fgraph.h). */
    weft__cvec_t *c = &((weft_fgraph_t *)fg)->clients[v->id];
    if (c->end != c->n) compact((weft_fgraph_t *)fg, c);
    return c;
}

/* ---- add / remove ------------------------------------------------------------- */

/* Room for one more entry: compacts when that frees some, else doubles. */
static bool make_room(weft_fgraph_t *fg, weft__cvec_t *c)
{
    if (c->items && c->end < cv_cap(c)) return true;
    if (c->items && c->n < c->end) {
        compact(fg, c);
        return true;
    }
    uint32_t ncls = c->items ? c->cls + 1 : 0;
    if (ncls >= WEFT__CLIENT_CLASSES) return false;
    weft_client_t *nb = client_block(fg, ncls);
    if (!nb) return false;
    if (c->items) {
        memcpy(nb, c->items, c->end * sizeof(*nb));
        memcpy(nb + ((size_t)2 << ncls), cv_keys(c), c->end * sizeof(uint64_t));
        client_release(fg, c->items, c->cls);
    }
    c->items = nb;
    c->cls = ncls;
    return true;
}

/* Index of the first entry whose key is above key (keys are sorted). */
static uint32_t key_upper(const weft__cvec_t *c, uint64_t key)
{
    const uint64_t *keys = cv_keys(c);
    uint32_t lo = 0, hi = c->end;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (keys[mid] <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Position for a reinserted entry: a tombstone just before its successor is
 * reused; otherwise the tail moves one place (and its slots follow). */
static uint32_t insert_at_key(weft_fgraph_t *fg, weft__cvec_t *c, uint64_t key)
{
    uint32_t p = key_upper(c, key);
    if (p > 0 && !c->items[p - 1].node) return p - 1;
    uint64_t *keys = cv_keys(c);
    memmove(c->items + p + 1, c->items + p, (c->end - p) * sizeof(*c->items));
    memmove(keys + p + 1, keys + p, (c->end - p) * sizeof(*keys));
    c->end++;
    for (uint32_t k = p + 1; k < c->end; k++)
        if (c->items[k].node) *slot_ref(fg, c->items[k].node, c->items[k].index) = k;
    return p;
}

bool weft__fg_add_client(weft_fgraph_t *fg, weft_var_t *v, weft_apply_t *node, size_t i,
                         uint64_t key)
{
    weft__cvec_t *c = &fg->clients[v->id];
    uint32_t *slot = slot_make(fg, node, i);
    if (!slot || !make_room(fg, c)) return false;
    uint32_t p;
    if (key == WEFT__CLIENT_NOKEY) {
        key = fg->client_key++;
        p = c->end++;
    } else {
        p = insert_at_key(fg, c, key);
    }
    c->items[p] = (weft_client_t){node, i};
    cv_keys(c)[p] = key;
    c->n++;
    *slot = p;
    return true;
}

uint64_t weft__fg_client_take(weft_fgraph_t *fg, const weft_var_t *v, const weft_apply_t *node,
                              size_t i, uint32_t slot)
{
    if (v->id >= fg->vcap) return WEFT__CLIENT_NOKEY;
    if (slot == UINT32_MAX) slot = weft__fg_client_slot(fg, node, i);
    weft__cvec_t *c = &fg->clients[v->id];
    if (slot >= c->end || c->items[slot].node != node || c->items[slot].index != i)
        return WEFT__CLIENT_NOKEY; /* not a client (already removed) */
    uint64_t key = cv_keys(c)[slot];
    c->items[slot].node = NULL;
    c->n--;
    while (c->end > 0 && !c->items[c->end - 1].node) c->end--;
    if (c->end - c->n > c->n) compact(fg, c);
    return key;
}

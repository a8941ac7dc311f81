/* Running an OpFromGraph node without inlining it: the perform hook
 * interprets the plan (ofg_plan.c) inside the outer node, each inner node's
 * perform writing into a slot of a run's storage.
 *
 * Run storage (slot cells, input scratch, and per slot the raw handle of the
 * view it held last, tensor/tensor_int.h) is kept in a cache on the plan
 * and reused, so a warm call allocates nothing: inner values come from the
 * outer runtime's allocator (its buffer pool) and go back to it
 * (weft_kernel_scratch_done), inner views are rebuilt in their slot's kept
 * handle (weft_kernel_view_output). The cache hands one storage to each
 * concurrent run of the same OpFromGraph (calls of several functions, or
 * concurrent calls of one); its size is the highest concurrency seen. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "tensor/kernel_int.h"
#include "tensor/tensor_int.h"
#include "ofg_int.h"
#include "weft/kernel.h"

typedef struct ofg_run {
    struct ofg_run *next;
    size_t n_slots;
    weft_tensor_t **slots; /* n_slots cells, then max_in input pointers */
    weft_tensor_t **stash; /* per slot: raw view handle or NULL */
} ofg_run_t;

struct weft__ofg_runs {
    pthread_mutex_t lock;
    ofg_run_t *free; /* under lock */
};

struct weft__ofg_runs *weft__ofg_runs_create(void)
{
    struct weft__ofg_runs *r = calloc(1, sizeof *r);
    if (r && pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r);
        return NULL;
    }
    return r;
}

static void run_free(ofg_run_t *run)
{
    for (size_t i = 0; i < run->n_slots; i++) weft__tensor_handle_free(run->stash[i]);
    free(run->slots);
    free(run->stash);
    free(run);
}

void weft__ofg_runs_free(struct weft__ofg_runs *r)
{
    if (!r) return;
    for (ofg_run_t *run = r->free, *next; run; run = next) {
        next = run->next;
        run_free(run);
    }
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static ofg_run_t *run_take(const weft__ofg_plan_t *p)
{
    pthread_mutex_lock(&p->runs->lock);
    ofg_run_t *run = p->runs->free;
    if (run) p->runs->free = run->next;
    pthread_mutex_unlock(&p->runs->lock);
    if (run) return run;
    run = calloc(1, sizeof *run);
    if (!run) return NULL;
    run->n_slots = p->n_slots;
    run->slots = calloc(p->n_slots + p->max_in + 1, sizeof *run->slots);
    run->stash = calloc(p->n_slots + 1, sizeof *run->stash);
    if (!run->slots || !run->stash) {
        run_free(run);
        return NULL;
    }
    return run;
}

static void run_put(const weft__ofg_plan_t *p, ofg_run_t *run)
{
    pthread_mutex_lock(&p->runs->lock);
    run->next = p->runs->free;
    p->runs->free = run;
    pthread_mutex_unlock(&p->runs->lock);
}

/* Empties the slots, last first: a view (a later slot than its base) drops
 * its buffer reference, keeping its handle in the stash, before its base
 * goes back to the allocator, where it is then exclusive and reusable. */
static void run_empty(ofg_run_t *run, weft_kernel_ctx_t *ctx)
{
    for (size_t i = run->n_slots; i-- > 0;) {
        weft_tensor_t *t = run->slots[i];
        run->slots[i] = NULL;
        if (!t) continue;
        if (!weft__tensor_is_block_base(t) && !run->stash[i] &&
            (run->stash[i] = weft__tensor_detach(t)))
            continue;
        weft_kernel_scratch_done(ctx, t);
    }
}

static weft_tensor_t *ref_value(const weft__ofg_plan_t *p, weft_tensor_t *const *inputs,
                                weft_tensor_t *const *slots, ofg_ref_t r)
{
    if (r.kind == OFG_REF_INPUT) return inputs[r.idx];
    if (r.kind == OFG_REF_CONST) return p->consts[r.idx];
    return slots[r.idx];
}

/* Runs inner node j with ctx pointing at its own output slots (so its views
 * find their stashed handles); ctx's outer fields are restored after. */
static weft_status_t run_node(const weft__ofg_plan_t *p, size_t j, weft_tensor_t *const *inputs,
                              ofg_run_t *run, weft_kernel_ctx_t *ctx)
{
    const weft_apply_t *a = p->nodes[j];
    const weft_op_class_t *c = weft_op_class(weft_apply_op(a));
    weft_status_t (*perform)(const weft_apply_t *, weft_tensor_t *const *, weft_tensor_t **,
                             weft_kernel_ctx_t *) = WEFT__OFG_HOOK(c, perform);
    char buf[160];
    if (!perform) {
        weft_apply_describe(a, buf, sizeof(buf));
        return weft_kernel_error(ctx, WEFT_ENOTIMPL, "inner node %s has no perform hook", buf);
    }
    weft_tensor_t **args = run->slots + p->n_slots, **out = run->slots + p->slot0[j];
    for (size_t i = p->in_off[j]; i < p->in_off[j + 1]; i++)
        args[i - p->in_off[j]] = ref_value(p, inputs, run->slots, p->refs[i]);
    weft_tensor_t **outer_cells = ctx->out_cells, **outer_stash = ctx->stash;
    uint32_t outer_n = ctx->n_out;
    void **outer_plan = ctx->plan;
    ctx->out_cells = out;
    ctx->stash = run->stash + p->slot0[j];
    ctx->n_out = (uint32_t)weft_apply_n_outputs(a);
    ctx->plan = NULL; /* the cell is the outer node's: inner nodes plan per run */
    weft_status_t s = perform(a, args, out, ctx);
    ctx->out_cells = outer_cells;
    ctx->stash = outer_stash;
    ctx->n_out = outer_n;
    ctx->plan = outer_plan;
    ctx->out_typed = false; /* an inner kernel's word says nothing of the outer outputs */
    for (size_t o = 0; s == WEFT_OK && o < weft_apply_n_outputs(a); o++)
        if (!out[o]) {
            weft_apply_describe(a, buf, sizeof(buf));
            s = weft_kernel_error(ctx, WEFT_EINVAL, "inner node %s left output %zu empty", buf, o);
        }
    return s;
}

/* True when t shares memory with an input or an earlier output: the op
 * declares no view_map, so such an output is copied. */
static bool aliases(const weft_tensor_t *t, size_t n_in, weft_tensor_t *const *inputs, size_t k,
                    weft_tensor_t *const *outs)
{
    for (size_t i = 0; i < n_in; i++)
        if (weft_tensor_shares_buffer(t, inputs[i])) return true;
    for (size_t o = 0; o < k; o++)
        if (weft_tensor_shares_buffer(t, outs[o])) return true;
    return false;
}

/* The outer cell already holds a tensor the kernel may overwrite, of t's
 * dtype and shape (a small output kept in its cell, a value of the outer
 * function's memory plan: docs/execution.md §4.3, §4.6). */
static bool cell_fits(const weft_tensor_t *cell, const weft_tensor_t *t)
{
    return cell && weft_tensor_dtype(cell) == weft_tensor_dtype(t) &&
           weft_tensor_same_shape(cell, t) && weft_tensor_is_contiguous(cell) &&
           weft_tensor_is_exclusive(cell);
}

/* The input output k destroys (declared destroy_map), or SIZE_MAX. */
static size_t destroyed_input(const weft__ofg_t *d, size_t k)
{
    for (size_t j = 0; j < d->n_destroy; j++)
        if (d->destroy[j].output == k) return d->destroy[j].input;
    return SIZE_MAX;
}

/* Writes the destroy_map outputs into their inputs' tensors, after every
 * other output was emitted (those may read the inputs). A value sharing
 * memory with any input is first copied to scratch, so no write clobbers a
 * value still to be written. */
static weft_status_t emit_destroyed(const weft__ofg_t *d, weft_tensor_t *const *inputs,
                                    weft_tensor_t *const *slots, weft_tensor_t **outputs,
                                    weft_kernel_ctx_t *ctx)
{
    weft_tensor_t *val[WEFT_OP_MAX_ALIAS] = {0}, *tmp[WEFT_OP_MAX_ALIAS] = {0};
    weft_status_t s = WEFT_OK;
    for (size_t j = 0; j < d->n_destroy && s == WEFT_OK; j++) {
        weft_tensor_t *t = ref_value(&d->plan, inputs, slots, d->plan.out_refs[d->destroy[j].output]);
        val[j] = t;
        if (t == inputs[d->destroy[j].input] || !aliases(t, d->n_in, inputs, 0, NULL)) continue;
        s = weft_kernel_scratch(ctx, weft_tensor_dtype(t), weft_tensor_ndim(t),
                                weft_tensor_shape(t), &tmp[j]);
        if (s == WEFT_OK) weft_tensor_copy(tmp[j], t); /* same shape and dtype */
        val[j] = tmp[j];
    }
    for (size_t j = 0; j < d->n_destroy && s == WEFT_OK; j++) {
        weft_tensor_t *in = inputs[d->destroy[j].input];
        if (val[j] != in && weft_tensor_copy(in, val[j]) != WEFT_OK)
            s = weft_kernel_error(ctx, WEFT_ESHAPE,
                                  "OpFromGraph: output %u does not fit the input %u it destroys "
                                  "(shapes differ)",
                                  d->destroy[j].output, d->destroy[j].input);
        else
            weft_kernel_set_output(ctx, &outputs[d->destroy[j].output], weft_tensor_retain(in));
    }
    for (size_t j = 0; j < d->n_destroy; j++) weft_kernel_scratch_done(ctx, tmp[j]);
    return s;
}

/* Output k: the inner value itself when it is a fresh buffer the node owns
 * alone, else a copy in an output from the allocator. A view of an inner
 * value is copied too: handed out, it would keep its base's buffer from
 * going back to the allocator, and the next run would allocate anew. So is
 * a value whose outer cell holds a tensor that fits: swapping would release
 * that tensor and leave the inner value's buffer outside the allocator,
 * one allocation per warm call. */
static weft_status_t emit_outputs(const weft__ofg_t *d, weft_tensor_t *const *inputs,
                                  weft_tensor_t *const *slots, weft_tensor_t **outputs,
                                  weft_kernel_ctx_t *ctx)
{
    const weft__ofg_plan_t *p = &d->plan;
    for (size_t k = 0; k < d->n_out; k++) {
        if (destroyed_input(d, k) != SIZE_MAX) continue; /* emit_destroyed */
        weft_tensor_t *t = ref_value(p, inputs, slots, p->out_refs[k]);
        bool copy = p->out_refs[k].kind != OFG_REF_SLOT || !weft__tensor_is_block_base(t) ||
                    aliases(t, d->n_in, inputs, k, outputs) || cell_fits(outputs[k], t);
        if (!copy) {
            weft_kernel_set_output(ctx, &outputs[k], weft_tensor_retain(t));
            continue;
        }
        weft_status_t s = weft_kernel_alloc_output(ctx, &outputs[k], weft_tensor_dtype(t),
                                                   weft_tensor_ndim(t), weft_tensor_shape(t));
        if (s != WEFT_OK) return s;
        weft_tensor_copy(outputs[k], t); /* same shape and dtype: cannot fail */
    }
    return d->n_destroy ? emit_destroyed(d, inputs, slots, outputs, ctx) : WEFT_OK;
}

weft_status_t weft__ofg_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft__ofg_t *d = weft__ofg_get(weft_apply_op(node));
    const weft__ofg_plan_t *p = &d->plan;
    ofg_run_t *run = run_take(p);
    if (!run) return weft_kernel_error(ctx, WEFT_ENOMEM, "OpFromGraph: out of memory");
    weft_status_t s = WEFT_OK;
    for (size_t j = 0; j < p->n_nodes && s == WEFT_OK; j++) s = run_node(p, j, inputs, run, ctx);
    if (s == WEFT_OK) s = emit_outputs(d, inputs, run->slots, outputs, ctx);
    run_empty(run, ctx);
    run_put(p, run);
    return s;
}

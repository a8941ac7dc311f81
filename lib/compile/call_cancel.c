/* Cancelling calls (weft/function.h, weft_call_token_t): the token, a
 * sticky flag any thread may set, and the per-call protocol that makes a
 * canceled call either run in full or leave the caller's tensors alone.
 *
 * Protocol. A token holds `canceled` (set by cancel, cleared by reset) and
 * the number of calls given it (`users`, for destroy's and reset's EBUSY).
 * A cancel only sets the flag: it never touches a call, so it cannot reach a
 * call that was not given the token, whatever per-call state that call
 * reuses. Each call reads the flag itself:
 *   - before it starts (weft__token_enter): canceled -> WEFT_ECANCELED, no
 *     node runs;
 *   - before each node (weft__call_stop, from weft__node_body): canceled ->
 *     the node returns WEFT_ECANCELED without running, which stops the
 *     run; the scheduler skips the nodes not yet started (sched.h);
 *   - at its commit: the start of a node that overwrites a caller's input
 *     (f->writes_caller), or the delivery after the run.
 * The decision between "canceled" and "committed" is one CAS on the call's
 * phase (OPEN -> CANCELED or OPEN -> COMMITTED): whichever comes first
 * wins, so a call that committed ignores later cancels (it completes), and
 * a call that saw the cancel first never writes the caller's memory. */
#include <stdlib.h>

#include "compile_int.h"

#define TOKEN_MAGIC 0x746f6b6eu

struct weft_call_token {
    uint32_t magic;
    /* set by cancel, cleared by reset; read by the calls given the token */
    _Atomic int canceled;
    atomic_uint users; /* calls given the token and in flight */
};

static bool token_ok(const weft_call_token_t *tok)
{
    return tok && tok->magic == TOKEN_MAGIC;
}

weft_status_t weft_call_token_create(weft_call_token_t **out)
{
    if (!out) return WEFT_EINVAL;
    weft_call_token_t *tok = calloc(1, sizeof *tok);
    *out = tok;
    if (!tok) return WEFT_ENOMEM;
    tok->magic = TOKEN_MAGIC;
    atomic_init(&tok->canceled, 0);
    atomic_init(&tok->users, 0);
    return WEFT_OK;
}

/* Calls given tok are in flight. */
static bool token_busy(const weft_call_token_t *tok)
{
    /* acquire: the calls' last uses of tok happen before what the caller
     * does next (free it, reset it); pairs with the release decrement in
     * weft__token_leave */
    return atomic_load_explicit(&((weft_call_token_t *)tok)->users, memory_order_acquire) != 0;
}

weft_status_t weft_call_token_destroy(weft_call_token_t *tok)
{
    if (!tok) return WEFT_OK;
    if (!token_ok(tok)) return WEFT_EINVAL;
    if (token_busy(tok)) return WEFT_EBUSY;
    tok->magic = 0;
    free(tok);
    return WEFT_OK;
}

weft_status_t weft_call_token_cancel(weft_call_token_t *tok)
{
    if (!token_ok(tok)) return WEFT_EINVAL;
    /* relaxed: a request flag that publishes no data; each call decides on
     * its own phase (CAS) what the cancel means for it */
    atomic_store_explicit(&tok->canceled, 1, memory_order_relaxed);
    return WEFT_OK;
}

bool weft_call_token_is_canceled(const weft_call_token_t *tok)
{
    /* relaxed: as in weft_call_token_cancel */
    return token_ok(tok) &&
           atomic_load_explicit(&((weft_call_token_t *)tok)->canceled, memory_order_relaxed);
}

weft_status_t weft_call_token_reset(weft_call_token_t *tok)
{
    if (!token_ok(tok)) return WEFT_EINVAL;
    if (token_busy(tok)) return WEFT_EBUSY;
    /* relaxed: as in weft_call_token_cancel; the calls that follow are
     * ordered after this by the caller */
    atomic_store_explicit(&tok->canceled, 0, memory_order_relaxed);
    return WEFT_OK;
}

weft_status_t weft__token_enter(const weft_function_t *f, weft_call_token_t *tok)
{
    if (!tok) return WEFT_OK;
    if (!token_ok(tok))
        return weft__fn_error(f, WEFT_EINVAL, "%s: the call options' token is not a token",
                              f->name);
    /* relaxed: a count for EBUSY; its release partner is weft__token_leave */
    atomic_fetch_add_explicit(&tok->users, 1, memory_order_relaxed);
    if (!weft_call_token_is_canceled(tok)) return WEFT_OK;
    weft__token_leave(tok);
    return weft__fn_error(f, WEFT_ECANCELED, "%s: canceled before it started (its call token "
                          "is canceled): no node ran", f->name);
}

void weft__token_leave(weft_call_token_t *tok)
{
    /* release: this call's uses of tok happen before its destroy or reset;
     * pairs with the acquire load in token_busy */
    if (tok) atomic_fetch_sub_explicit(&tok->users, 1, memory_order_release);
}

/* OPEN -> `to`; returns the phase the call is in afterwards. */
static int phase_decide(weft__call_state_t *cs, int to)
{
    int open = WEFT__PHASE_OPEN;
    /* relaxed: the phase carries no data, only the decision; every decision
     * is a CAS on this one variable, so all of the call's threads agree on
     * which came first */
    if (atomic_compare_exchange_strong_explicit(&cs->phase, &open, to, memory_order_relaxed,
                                                memory_order_relaxed))
        return to;
    return open;
}

/* The token is canceled and the call had not committed: it is canceled. */
static bool call_canceled(weft__call_state_t *cs)
{
    if (!weft_call_token_is_canceled(cs->token)) return false;
    return phase_decide(cs, WEFT__PHASE_CANCELED) == WEFT__PHASE_CANCELED;
}

bool weft__call_commit(weft__call_state_t *cs)
{
    if (!cs->token) return true;
    if (call_canceled(cs)) return false;
    return phase_decide(cs, WEFT__PHASE_COMMITTED) == WEFT__PHASE_COMMITTED;
}

bool weft__call_stop(weft__call_state_t *cs, uint32_t node)
{
    const uint8_t *w = cs->f->writes_caller;
    return w && w[node] ? !weft__call_commit(cs) : call_canceled(cs);
}

/* Whether apply a overwrites memory the caller sees: a destroyed input
 * whose alias root is a function input. */
static bool writes_caller(const weft_function_t *f, const weft_apply_t *a)
{
    const weft_op_alias_t *e;
    size_t nd;
    weft_op_destroy_map(weft_apply_op(a), &e, &nd);
    for (size_t d = 0; d < nd; d++) {
        weft_var_t *root = weft__alias_root(weft_apply_input(a, e[d].input));
        for (size_t k = 0; k < f->n_in; k++)
            if (f->in_vars[k] == root) return true;
    }
    return false;
}

weft_status_t weft__cancel_plan(weft_function_t *f)
{
    if (!f->any_mutable) return WEFT_OK; /* only mutable inputs are ever written */
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        if (!writes_caller(f, f->nodes[i].apply)) continue;
        if (!f->writes_caller && !(f->writes_caller = calloc(f->n_nodes, 1)))
            return weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
        f->writes_caller[i] = 1;
    }
    return WEFT_OK;
}

/* Verbose rewriting (weft/fgraph.h, docs/rewrites.md §9): the hook that
 * committed ReplaceValidate transactions report to, and the standard log
 * line, PyTensor's "rewriting: rewrite R replaces r of node with new_r of
 * node" with each node's creation site. */
#include <stdio.h>

#include "fgraph_int.h"

weft_status_t weft_fgraph_set_replace_hook(weft_fgraph_t *fg, weft_replace_hook_fn fn, void *user)
{
    if (!fg) return WEFT_EINVAL;
    fg->replace_hook = fn;
    fg->replace_hook_user = fn ? user : NULL;
    return WEFT_OK;
}

static void log_to_file(void *user, weft_fgraph_t *fg, const char *reason, weft_var_t *old_var,
                        weft_var_t *new_var)
{
    (void)fg;
    char line[1700];
    weft_fgraph_replace_line(reason, old_var, new_var, line, sizeof(line));
    fprintf((FILE *)user, "%s\n", line); /* one call: lines of threads do not interleave */
}

weft_status_t weft_fgraph_set_replace_log(weft_fgraph_t *fg, FILE *f)
{
    return weft_fgraph_set_replace_hook(fg, f ? log_to_file : NULL, f);
}

/* "x of apply 7 (Mul, built at f.c:3)" or "x (created at f.c:1)". */
static int where(const weft_var_t *v, char *buf, size_t cap)
{
    char vb[256], ab[512];
    weft_var_print(v, vb, sizeof(vb));
    if (!v || !v->owner) {
        const char *file = v && v->file ? v->file : "?";
        return snprintf(buf, cap, "%s (created at %s:%d)", vb, file, v ? v->line : 0);
    }
    weft_apply_describe(v->owner, ab, sizeof(ab));
    return snprintf(buf, cap, "%s of %s", vb, ab);
}

int weft_fgraph_replace_line(const char *reason, const weft_var_t *old_var,
                             const weft_var_t *new_var, char *buf, size_t cap)
{
    if (!buf && cap) return -1; /* snprintf would write through NULL */
    char ob[800], nb[800];
    where(old_var, ob, sizeof(ob));
    where(new_var, nb, sizeof(nb));
    return snprintf(buf, cap, "rewriting: rewrite %s replaces %s with %s", reason ? reason : "?",
                    ob, nb);
}

void weft__fg_report_replace(weft_fgraph_t *fg, size_t n, weft_var_t *const *vars,
                             weft_var_t *const *new_vars, const char *reason)
{
    if (!fg->replace_hook) return;
    for (size_t k = 0; k < n; k++)
        if (vars[k] != new_vars[k])
            fg->replace_hook(fg->replace_hook_user, fg, reason, vars[k], new_vars[k]);
}

/* Text report (PyTensor ProfileStats layout, docs/execution.md §9, plus the
 * parallel executor's figures and the compile's rewrite profile). The data
 * exports (JSON, CSV, Chrome trace) are in profile_export.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

static double sec(uint64_t ns)
{
    return (double)ns * 1e-9;
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_header(const weft_profile_t *p, FILE *out)
{
    fprintf(out, "Function profiling\n==================\n");
    fprintf(out, "  Message: %s%s\n", p->function,
            p->scope == WEFT_PROFILE_LAST_CALL ? " (last call)" : "");
    fprintf(out, "  Time in %llu calls to weft_function_call: %.6es\n",
            (unsigned long long)p->calls, sec(p->call_time_ns));
    fprintf(out, "  Time in task DAG runs (the pool running the nodes): %.6es (%.1f%%)\n",
            sec(p->run_time_ns), pct(p->run_time_ns, p->call_time_ns));
    fprintf(out, "  Time in nodes: %.6es (%.1f%% of the call time; summed over workers)\n",
            sec(p->node_time_ns), pct(p->node_time_ns, p->call_time_ns));
    fprintf(out, "  Achieved parallelism (time in nodes / run wall time): %.2f on %u workers\n",
            p->parallelism, p->workers);
    fprintf(out, "  Critical path: %.6es over %zu nodes; ideal speedup (nodes / path): %.2f\n",
            sec(p->critical_path_ns), p->n_critical, p->ideal_speedup);
    for (unsigned w = 0; w < p->workers; w++)
        fprintf(out, "  Worker %u: busy %.6es, idle %.6es\n", w, sec(p->worker_busy_ns[w]),
                sec(p->worker_idle_ns[w]));
    fprintf(out, "  Peak memory of intermediates: %.1f KB\n", (double)p->peak_bytes / 1024.0);
    fprintf(out, "  Memory plan: arena %.1f KB; sequential run, free after last use: %.1f KB\n",
            (double)p->arena_bytes / 1024.0, (double)p->sequential_peak_bytes / 1024.0);
    fprintf(out, "  Total compilation time: %.6es\n", sec(p->compile_time_ns));
    fprintf(out, "    Number of Apply nodes: %zu\n", p->n_applies);
    fprintf(out, "    Rewrite time: %.6es\n\n", sec(p->rewrite_time_ns));
}

static void print_groups(const weft_profile_t *p, const weft_profile_group_t *g, size_t n,
                         size_t rows, const char *title, const char *what, FILE *out)
{
    fprintf(out, "%s\n%.*s\n", title, (int)strlen(title), "--------------------------------");
    fprintf(out, "<%% time> <sum %%> <apply time> <time per call> <type> <#call> <#apply> "
                 "<%s name>\n", what);
    double sum = 0.0;
    size_t shown = 0;
    uint64_t rest_ns = 0;
    for (size_t i = 0; i < n; i++) {
        if (g[i].calls == 0) continue;
        if (shown == rows) {
            rest_ns += g[i].time_ns;
            continue;
        }
        sum += g[i].percent;
        fprintf(out, "  %5.1f%%   %6.1f%%  %10.3es  %13.3es     C  %7llu  %7u   %s\n",
                g[i].percent, sum, sec(g[i].time_ns), sec(g[i].time_ns) / (double)g[i].calls,
                (unsigned long long)g[i].calls, g[i].applies, g[i].name);
        shown++;
    }
    size_t remaining = 0;
    for (size_t i = 0; i < n; i++) remaining += g[i].calls != 0;
    fprintf(out, "   ... (remaining %zu %s account for %6.2f%%(%.2fs) of the runtime)\n\n",
            remaining - shown, strcmp(what, "Op") ? "Classes" : "Ops",
            pct(rest_ns, p->node_time_ns), sec(rest_ns));
}

static int cmp_rows(const void *a, const void *b)
{
    const weft_profile_apply_t *x = *(const weft_profile_apply_t *const *)a;
    const weft_profile_apply_t *y = *(const weft_profile_apply_t *const *)b;
    if (x->time_ns != y->time_ns) return x->time_ns < y->time_ns ? 1 : -1;
    return (x->index > y->index) - (x->index < y->index);
}

/* The row after prev in the table's order (time descending, then index), or
 * NULL: the order without a scratch array, O(n) per row. */
static const weft_profile_apply_t *next_row(const weft_profile_t *p,
                                            const weft_profile_apply_t *prev)
{
    const weft_profile_apply_t *best = NULL;
    for (size_t i = 0; i < p->n_applies; i++) {
        const weft_profile_apply_t *c = &p->applies[i];
        if ((!prev || cmp_rows(&c, &prev) > 0) && (!best || cmp_rows(&c, &best) < 0)) best = c;
    }
    return best;
}

/* Bytes as "12.0KB"-style text into buf. */
static const char *bytes_text(uint64_t b, char *buf, size_t cap)
{
    if (b < 1024) snprintf(buf, cap, "%lluB", (unsigned long long)b);
    else if (b < 1024 * 1024) snprintf(buf, cap, "%.1fKB", (double)b / 1024.0);
    else snprintf(buf, cap, "%.1fMB", (double)b / (1024.0 * 1024.0));
    return buf;
}

/* One Apply row; sum: the running percentage including this row. */
static void print_apply_row(const weft_profile_apply_t *a, double sum, FILE *out)
{
    char mb[32];
    fprintf(out, "  %5.1f%%   %6.1f%%  %10.3es  %13.3es  %6llu  %4u  %6u%s  %9s  %s  %s\n",
            a->percent, sum, sec(a->time_ns), sec(a->time_ns) / (double)a->calls,
            (unsigned long long)a->calls, a->index, a->worker, a->on_critical_path ? " *" : "  ",
            bytes_text(a->out_bytes, mb, sizeof mb), a->out_types, a->name);
}

/* The Apply table, rows by time: sorted in a scratch array, or found one at a
 * time when there is no memory for it (printing never fails for lack of it). */
static void print_applies(const weft_profile_t *p, size_t rows, FILE *out)
{
    const weft_profile_apply_t **r = malloc((p->n_applies + 1) * sizeof *r);
    if (r) {
        for (size_t i = 0; i < p->n_applies; i++) r[i] = &p->applies[i];
        qsort(r, p->n_applies, sizeof *r, cmp_rows);
    }
    fprintf(out, "Apply\n------\n<%% time> <sum %%> <apply time> <time per call> <#call> <id> "
                 "<worker> <out bytes> <out types> <Apply name>\n");
    size_t remaining = 0, shown = 0;
    uint64_t called_ns = 0, shown_ns = 0;
    for (size_t i = 0; i < p->n_applies; i++) {
        remaining += p->applies[i].calls != 0;
        called_ns += p->applies[i].calls ? p->applies[i].time_ns : 0;
    }
    double sum = 0.0;
    const weft_profile_apply_t *a = NULL;
    for (size_t i = 0; i < p->n_applies && shown < rows; i++) {
        a = r ? r[i] : next_row(p, a);
        if (!a || a->calls == 0) continue;
        sum += a->percent;
        print_apply_row(a, sum, out);
        shown++;
        shown_ns += a->time_ns;
    }
    fprintf(out, "   ... (remaining %zu Apply instances account for %.2f%%(%.2fs) of the "
                 "runtime)\n   (* = on the critical path)\n\n",
            remaining - shown, pct(called_ns - shown_ns, p->node_time_ns),
            sec(called_ns - shown_ns));
    free(r);
}

/* Nodes of IfElse branches not taken: skipped, not run (no time, no
 * allocation); listed apart so they never read as zero-time runs. */
static void print_skipped(const weft_profile_t *p, size_t rows, FILE *out)
{
    size_t n = 0, shown = 0;
    for (size_t i = 0; i < p->n_applies; i++) n += p->applies[i].skips != 0;
    if (n == 0) return;
    fprintf(out, "Skipped (IfElse branches not taken)\n-----------------------------------\n"
                 "<#skipped> <#call> <id> <Apply name>\n");
    for (size_t i = 0; i < p->n_applies && shown < rows; i++) {
        const weft_profile_apply_t *a = &p->applies[i];
        if (!a->skips) continue;
        fprintf(out, "  %9llu  %6llu  %4u  %s\n", (unsigned long long)a->skips,
                (unsigned long long)a->calls, a->index, a->name);
        shown++;
    }
    if (n > shown) fprintf(out, "   ... (%zu more skipped nodes)\n", n - shown);
    fprintf(out, "\n");
}

static void print_critical(const weft_profile_t *p, size_t rows, FILE *out)
{
    fprintf(out, "Critical path\n-------------\n<id> <apply time> <Apply name>\n");
    for (size_t i = 0; i < p->n_critical && i < rows; i++) {
        const weft_profile_apply_t *r = &p->applies[p->critical_path[i]];
        fprintf(out, "  %4u  %10.3es  %s\n", r->index, sec(r->time_ns), r->name);
    }
    if (p->n_critical > rows) fprintf(out, "   ... (%zu more nodes)\n", p->n_critical - rows);
    fprintf(out, "\n");
}

/* The compile's rewrite profile: time, applications and failures per rewriter. */
static void print_rewrites(const weft_profile_t *p, size_t rows, FILE *out)
{
    fprintf(out, "Rewrites (compile)\n------------------\n<time> <applied> <failed> <rewriter>\n");
    size_t shown = 0;
    for (size_t i = 0; i < p->n_rewrites && shown < rows; i++, shown++)
        fprintf(out, "  %10.3es  %7llu  %6llu  %s\n", sec(p->rewrites[i].time_ns),
                (unsigned long long)p->rewrites[i].applied,
                (unsigned long long)p->rewrites[i].failed, p->rewrites[i].name);
    if (p->n_rewrites > shown) fprintf(out, "   ... (%zu more rewriters)\n", p->n_rewrites - shown);
    fprintf(out, "\n");
}

weft_status_t weft_profile_print(const weft_profile_t *p, size_t max_rows, FILE *out)
{
    if (!p || !out) return WEFT_EINVAL;
    size_t rows = max_rows ? max_rows : 20;
    print_header(p, out);
    print_groups(p, p->classes, p->n_classes, rows, "Class", "Class", out);
    print_groups(p, p->ops, p->n_ops, rows, "Ops", "Op", out);
    print_applies(p, rows, out);
    print_skipped(p, rows, out);
    print_critical(p, rows, out);
    print_rewrites(p, rows, out);
    return ferror(out) ? WEFT_EIO : WEFT_OK;
}

weft_status_t weft_function_print_profile(const weft_function_t *f, FILE *out)
{
    if (!f || !out) return WEFT_EINVAL;
    weft_profile_t *p;
    weft_status_t st = weft_profile_create(f, WEFT_PROFILE_TOTAL, &p);
    if (st != WEFT_OK) return st;
    st = weft_profile_print(p, 0, out);
    weft_profile_destroy(p);
    return st;
}

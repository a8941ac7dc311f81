/* The profile as data (docs/profiling.md): a JSON document
 * (docs/weft-profile.schema.json), CSV rows of the Apply table, and Chrome
 * trace / Perfetto JSON of one or several calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

/* A JSON string literal: quotes, backslashes and control characters escaped. */
static void json_str(const char *s, FILE *out)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

/* lead (punctuation and key, e.g. ", \"op\": ") then the string value. */
static void json_field(FILE *out, const char *lead, const char *value)
{
    fputs(lead, out);
    json_str(value, out);
}

static void json_u64s(const uint64_t *v, size_t n, FILE *out)
{
    fputc('[', out);
    for (size_t i = 0; i < n; i++) fprintf(out, "%s%llu", i ? ", " : "", (unsigned long long)v[i]);
    fputc(']', out);
}

static void json_summary(const weft_profile_t *p, FILE *out)
{
    fprintf(out, "{\n \"format\": \"weft-profile\",\n \"version\": 1,\n \"function\": ");
    json_str(p->function, out);
    fprintf(out, ",\n \"scope\": \"%s\",\n", p->scope == WEFT_PROFILE_LAST_CALL ? "last_call" : "total");
    fprintf(out, " \"calls\": %llu,\n \"call_time_ns\": %llu,\n \"run_time_ns\": %llu,\n"
                 " \"node_time_ns\": %llu,\n \"parallelism\": %.6g,\n"
                 " \"critical_path_ns\": %llu,\n \"ideal_speedup\": %.6g,\n"
                 " \"compile_time_ns\": %llu,\n \"rewrite_time_ns\": %llu,\n"
                 " \"peak_bytes\": %llu,\n \"arena_bytes\": %llu,\n"
                 " \"sequential_peak_bytes\": %llu,\n \"workers\": %u,\n \"worker_idle_ns\": ",
            (unsigned long long)p->calls, (unsigned long long)p->call_time_ns,
            (unsigned long long)p->run_time_ns, (unsigned long long)p->node_time_ns,
            p->parallelism, (unsigned long long)p->critical_path_ns, p->ideal_speedup,
            (unsigned long long)p->compile_time_ns, (unsigned long long)p->rewrite_time_ns,
            (unsigned long long)p->peak_bytes, (unsigned long long)p->arena_bytes,
            (unsigned long long)p->sequential_peak_bytes, p->workers);
    json_u64s(p->worker_idle_ns, p->workers, out);
    fprintf(out, ",\n \"worker_busy_ns\": ");
    json_u64s(p->worker_busy_ns, p->workers, out);
}

static void json_apply(const weft_profile_apply_t *a, FILE *out)
{
    fprintf(out, "  {\"id\": %u", a->index);
    json_field(out, ", \"name\": ", a->name);
    json_field(out, ", \"op\": ", a->op);
    json_field(out, ", \"class\": ", a->op_class);
    fprintf(out, ", \"calls\": %llu, \"time_ns\": %llu, \"percent\": %.6g, \"worker\": %u, "
                 "\"start_ns\": %llu, \"end_ns\": %llu, \"critical\": %s, \"out_types\": ",
            (unsigned long long)a->calls, (unsigned long long)a->time_ns, a->percent, a->worker,
            (unsigned long long)a->start_ns, (unsigned long long)a->end_ns,
            a->on_critical_path ? "true" : "false");
    json_str(a->out_types, out);
    fprintf(out,
            ", \"out_bytes\": %llu, \"destroys\": %d, \"inplace_bytes\": %llu, "
            "\"inplace_orderings\": %u, \"reuses_input\": %d, \"skips\": %llu}",
            (unsigned long long)a->out_bytes, a->destroys, (unsigned long long)a->inplace_bytes,
            a->inplace_orderings, a->reuses_input, (unsigned long long)a->skips);
}

static void json_groups(const char *key, const weft_profile_group_t *g, size_t n, FILE *out)
{
    fprintf(out, ",\n \"%s\": [", key);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%s\n  {\"name\": ", i ? "," : "");
        json_str(g[i].name, out);
        fprintf(out, ", \"time_ns\": %llu, \"percent\": %.6g, \"calls\": %llu, \"applies\": %u}",
                (unsigned long long)g[i].time_ns, g[i].percent, (unsigned long long)g[i].calls,
                g[i].applies);
    }
    fprintf(out, "%s]", n ? "\n " : "");
}

static void json_rewrites(const weft_profile_t *p, FILE *out)
{
    fprintf(out, ",\n \"rewrites\": [");
    for (size_t i = 0; i < p->n_rewrites; i++) {
        const weft_profile_rewrite_t *r = &p->rewrites[i];
        fprintf(out, "%s\n  {\"name\": ", i ? "," : "");
        json_str(r->name, out);
        fprintf(out, ", \"applied\": %llu, \"failed\": %llu, \"time_ns\": %llu}",
                (unsigned long long)r->applied, (unsigned long long)r->failed,
                (unsigned long long)r->time_ns);
    }
    fprintf(out, "%s]", p->n_rewrites ? "\n " : "");
}

weft_status_t weft_profile_write_json(const weft_profile_t *p, FILE *out)
{
    if (!p || !out) return WEFT_EINVAL;
    json_summary(p, out);
    fprintf(out, ",\n \"applies\": [");
    for (size_t i = 0; i < p->n_applies; i++) {
        fprintf(out, "%s\n", i ? "," : "");
        json_apply(&p->applies[i], out);
    }
    fprintf(out, "%s],\n \"critical_path\": [", p->n_applies ? "\n " : "");
    for (size_t i = 0; i < p->n_critical; i++)
        fprintf(out, "%s%u", i ? ", " : "", p->critical_path[i]);
    fprintf(out, "]");
    json_groups("ops", p->ops, p->n_ops, out);
    json_groups("classes", p->classes, p->n_classes, out);
    json_rewrites(p, out);
    fprintf(out, "\n}\n");
    return ferror(out) ? WEFT_EIO : WEFT_OK;
}

/* A CSV field (RFC 4180): quoted, inner quotes doubled. */
static void csv_str(const char *s, FILE *out)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

weft_status_t weft_profile_write_csv(const weft_profile_t *p, FILE *out)
{
    if (!p || !out) return WEFT_EINVAL;
    fprintf(out, "id,name,op,class,calls,time_ns,percent,worker,critical,out_types,out_bytes,"
                 "destroys,inplace_bytes,inplace_orderings,reuses_input,skips\n");
    for (size_t i = 0; i < p->n_applies; i++) {
        const weft_profile_apply_t *a = &p->applies[i];
        fprintf(out, "%u,", a->index);
        csv_str(a->name, out);
        fputc(',', out);
        csv_str(a->op, out);
        fputc(',', out);
        csv_str(a->op_class, out);
        fprintf(out, ",%llu,%llu,%.6g,%u,%d,", (unsigned long long)a->calls,
                (unsigned long long)a->time_ns, a->percent, a->worker, a->on_critical_path);
        csv_str(a->out_types, out);
        fprintf(out, ",%llu,%d,%llu,%u,%d,%llu\n", (unsigned long long)a->out_bytes, a->destroys,
                (unsigned long long)a->inplace_bytes, a->inplace_orderings, a->reuses_input,
                (unsigned long long)a->skips);
    }
    return ferror(out) ? WEFT_EIO : WEFT_OK;
}

/* The node slices of one call (number call), shifted by off_ns. */
static void trace_call(const weft_profile_t *p, uint64_t off_ns, size_t call, FILE *out)
{
    for (size_t i = 0; i < p->n_applies; i++) {
        const weft_profile_apply_t *r = &p->applies[i];
        if (r->end_ns == 0 && r->start_ns == 0) continue;
        json_field(out, ",\n  {\"name\": ", r->name);
        json_field(out, ", \"cat\": ", r->op_class);
        fprintf(out, ", \"ph\": \"X\", \"pid\": 1, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, "
                     "\"args\": {\"id\": %u, \"call\": %zu, \"critical\": %s}}",
                r->worker, (double)(off_ns + r->start_ns) / 1e3,
                (double)(r->end_ns - r->start_ns) / 1e3, r->index, call,
                r->on_critical_path ? "true" : "false");
    }
}

weft_status_t weft_profile_write_trace_calls(const weft_profile_t *const *calls,
                                             const uint64_t *offset_ns, size_t n, FILE *out)
{
    if (!calls || !offset_ns || n == 0 || !out) return WEFT_EINVAL;
    for (size_t k = 0; k < n; k++)
        if (!calls[k]) return WEFT_EINVAL;
    const weft_profile_t *p = calls[0];
    fprintf(out, "{\"traceEvents\": [\n");
    fprintf(out, "  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, "
                 "\"args\": {\"name\": ");
    json_str(p->function, out);
    fprintf(out, "}}");
    for (unsigned w = 0; w < p->workers; w++)
        fprintf(out, ",\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %u, "
                     "\"args\": {\"name\": \"worker %u\"}}", w, w);
    for (size_t k = 0; k < n; k++) trace_call(calls[k], offset_ns[k], k, out);
    fprintf(out, "\n], \"displayTimeUnit\": \"ns\"}\n");
    return ferror(out) ? WEFT_EIO : WEFT_OK;
}

weft_status_t weft_profile_write_trace(const weft_profile_t *p, FILE *out)
{
    uint64_t zero = 0;
    return weft_profile_write_trace_calls(&p, &zero, 1, out);
}

/* The rewrite database: top-level entries (rewriters or groups of member
 * rewriters) ordered by position, tags, and the query that turns a mode plus
 * include/exclude lists into one sequence rewriter. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite/default_db.h"
#include "rewrite_int.h"

typedef struct tagged {
    char *name;
    char **tags;
    size_t n_tags;
    double pos;
    size_t seq; /* registration order: breaks position ties */
} tagged_t;

typedef struct db_member {
    tagged_t t;
    weft_rewriter_t *rw;
    weft_rewrite_role_t role;
} db_member_t;

typedef struct db_entry {
    tagged_t t;
    weft_rewriter_t *rw; /* NULL for a group */
    bool group;
    weft_rewrite_group_kind_t kind;
    double ratio;
    db_member_t *m;
    size_t n_m, cap_m;
} db_entry_t;

struct weft_rewrite_db {
    pthread_mutex_t lock;
    db_entry_t *e;
    size_t n, cap, seq;
    bool is_default;
};

weft_status_t weft_rewrite_db_create(weft_rewrite_db_t **out)
{
    if (!out) return WEFT_EINVAL;
    weft_rewrite_db_t *db = calloc(1, sizeof *db);
    if (!db) return WEFT_ENOMEM;
    if (pthread_mutex_init(&db->lock, NULL) != 0) {
        free(db);
        return WEFT_ENOMEM;
    }
    *out = db;
    return WEFT_OK;
}

static void tagged_fini(tagged_t *t)
{
    for (size_t i = 0; i < t->n_tags; i++) free(t->tags[i]);
    free(t->tags);
    free(t->name);
}

static void db_free(weft_rewrite_db_t *db)
{
    for (size_t i = 0; i < db->n; i++) {
        db_entry_t *e = &db->e[i];
        for (size_t k = 0; k < e->n_m; k++) {
            tagged_fini(&e->m[k].t);
            weft_rewriter_release(e->m[k].rw);
        }
        free(e->m);
        tagged_fini(&e->t);
        weft_rewriter_release(e->rw);
    }
    free(db->e);
    pthread_mutex_destroy(&db->lock);
    free(db);
}

void weft_rewrite_db_destroy(weft_rewrite_db_t *db)
{
    if (db && !db->is_default) db_free(db);
}

static bool tags_valid(size_t n, const char *const *tags)
{
    if (n && !tags) return false;
    for (size_t i = 0; i < n; i++)
        if (!tags[i] || !tags[i][0]) return false;
    return true;
}

static weft_status_t tagged_init(tagged_t *t, const char *name, double pos, size_t n_tags,
                                 const char *const *tags, size_t seq)
{
    memset(t, 0, sizeof *t);
    t->pos = pos;
    t->seq = seq;
    t->name = weft__strdup(name);
    t->tags = calloc(n_tags + 1, sizeof *t->tags);
    if (!t->name || !t->tags) return WEFT_ENOMEM;
    for (; t->n_tags < n_tags; t->n_tags++)
        if (!(t->tags[t->n_tags] = weft__strdup(tags[t->n_tags]))) return WEFT_ENOMEM;
    return WEFT_OK;
}

static bool tagged_has(const tagged_t *t, const char *s)
{
    if (strcmp(t->name, s) == 0) return true;
    for (size_t i = 0; i < t->n_tags; i++)
        if (strcmp(t->tags[i], s) == 0) return true;
    return false;
}

static bool has_tag(const tagged_t *t, const char *s)
{
    for (size_t i = 0; i < t->n_tags; i++)
        if (strcmp(t->tags[i], s) == 0) return true;
    return false;
}

static db_entry_t *find_entry(weft_rewrite_db_t *db, const char *name)
{
    for (size_t i = 0; i < db->n; i++)
        if (strcmp(db->e[i].t.name, name) == 0) return &db->e[i];
    return NULL;
}

static bool name_used_by_member(weft_rewrite_db_t *db, const char *name)
{
    for (size_t i = 0; i < db->n; i++)
        for (size_t k = 0; k < db->e[i].n_m; k++)
            if (strcmp(db->e[i].m[k].t.name, name) == 0) return true;
    return false;
}

static weft_status_t add_entry(weft_rewrite_db_t *db, const char *name, double pos, size_t n_tags,
                               const char *const *tags, db_entry_t **out)
{
    if (find_entry(db, name) || name_used_by_member(db, name)) return WEFT_EDUPLICATE;
    if (!weft__vec_grow(NULL, (void **)&db->e, &db->cap, db->n + 1, sizeof *db->e))
        return WEFT_ENOMEM;
    db_entry_t *e = &db->e[db->n];
    memset(e, 0, sizeof *e);
    weft_status_t st = tagged_init(&e->t, name, pos, n_tags, tags, db->seq++);
    if (st != WEFT_OK) {
        tagged_fini(&e->t);
        return st;
    }
    db->n++;
    *out = e;
    return WEFT_OK;
}

weft_status_t weft_rewrite_db_register(weft_rewrite_db_t *db, const char *name,
                                       weft_rewriter_t *rw, double position, size_t n_tags,
                                       const char *const *tags)
{
    if (!db || !name || !rw || !tags_valid(n_tags, tags)) {
        weft_rewriter_release(rw);
        return WEFT_EINVAL;
    }
    pthread_mutex_lock(&db->lock);
    db_entry_t *e;
    weft_status_t st = add_entry(db, name, position, n_tags, tags, &e);
    if (st == WEFT_OK) e->rw = rw;
    pthread_mutex_unlock(&db->lock);
    if (st != WEFT_OK) weft_rewriter_release(rw);
    return st;
}

weft_status_t weft_rewrite_db_register_group(weft_rewrite_db_t *db, const char *name,
                                             weft_rewrite_group_kind_t kind, double position,
                                             double max_use_ratio, size_t n_tags,
                                             const char *const *tags)
{
    if (!db || !name || !tags_valid(n_tags, tags) || max_use_ratio < 0 ||
        (kind != WEFT_REWRITE_GROUP_EQUILIBRIUM && kind != WEFT_REWRITE_GROUP_IN2OUT &&
         kind != WEFT_REWRITE_GROUP_OUT2IN))
        return WEFT_EINVAL;
    pthread_mutex_lock(&db->lock);
    db_entry_t *e;
    weft_status_t st = add_entry(db, name, position, n_tags, tags, &e);
    if (st == WEFT_OK) {
        e->group = true;
        e->kind = kind;
        e->ratio = max_use_ratio;
    }
    pthread_mutex_unlock(&db->lock);
    return st;
}

static weft_status_t add_member(weft_rewrite_db_t *db, db_entry_t *e, const char *name,
                                weft_rewriter_t *rw, weft_rewrite_role_t role, double pos,
                                size_t n_tags, const char *const *tags)
{
    if (find_entry(db, name)) return WEFT_EDUPLICATE;
    for (size_t k = 0; k < e->n_m; k++)
        if (strcmp(e->m[k].t.name, name) == 0) return WEFT_EDUPLICATE;
    if (!weft__vec_grow(NULL, (void **)&e->m, &e->cap_m, e->n_m + 1, sizeof *e->m))
        return WEFT_ENOMEM;
    db_member_t *m = &e->m[e->n_m];
    weft_status_t st = tagged_init(&m->t, name, pos, n_tags, tags, db->seq++);
    if (st != WEFT_OK) {
        tagged_fini(&m->t);
        return st;
    }
    m->rw = rw;
    m->role = role;
    e->n_m++;
    return WEFT_OK;
}

weft_status_t weft_rewrite_db_register_in(weft_rewrite_db_t *db, const char *group,
                                          const char *name, weft_rewriter_t *rw,
                                          weft_rewrite_role_t role, double position,
                                          size_t n_tags, const char *const *tags)
{
    bool ok = db && group && name && rw && tags_valid(n_tags, tags) &&
              role >= WEFT_REWRITE_ROLE_NODE && role <= WEFT_REWRITE_ROLE_GLOBAL &&
              (role != WEFT_REWRITE_ROLE_NODE || rw->kind == RW_NODE);
    if (!ok) {
        weft_rewriter_release(rw);
        return WEFT_EINVAL;
    }
    pthread_mutex_lock(&db->lock);
    db_entry_t *e = find_entry(db, group);
    weft_status_t st = WEFT_OK;
    if (!e || !e->group)
        st = WEFT_ENOTFOUND;
    else if (e->kind != WEFT_REWRITE_GROUP_EQUILIBRIUM && role != WEFT_REWRITE_ROLE_NODE)
        st = WEFT_EINVAL;
    else
        st = add_member(db, e, name, rw, role, position, n_tags, tags);
    pthread_mutex_unlock(&db->lock);
    if (st != WEFT_OK) weft_rewriter_release(rw);
    return st;
}

static bool db_has_unlocked(weft_rewrite_db_t *db, const char *name)
{
    for (size_t i = 0; i < db->n; i++) {
        if (tagged_has(&db->e[i].t, name)) return true;
        for (size_t k = 0; k < db->e[i].n_m; k++)
            if (tagged_has(&db->e[i].m[k].t, name)) return true;
    }
    return false;
}

bool weft_rewrite_db_has(weft_rewrite_db_t *db, const char *name)
{
    if (!db || !name) return false;
    pthread_mutex_lock(&db->lock);
    bool r = db_has_unlocked(db, name);
    pthread_mutex_unlock(&db->lock);
    return r;
}

/* ---- query ------------------------------------------------------------------------ */

typedef struct query {
    const char *mode;
    size_t n_inc, n_exc;
    const char *const *inc, *const *exc;
    const char *bad; /* the unknown name, for the message */
} query_t;

static bool in_list(const tagged_t *t, size_t n, const char *const *list)
{
    for (size_t i = 0; i < n; i++)
        if (tagged_has(t, list[i])) return true;
    return false;
}

static bool selected(const query_t *q, const tagged_t *t, bool parent_included)
{
    if (in_list(t, q->n_exc, q->exc)) return false;
    return has_tag(t, q->mode) || parent_included || in_list(t, q->n_inc, q->inc);
}

static int by_pos(const void *a, const void *b)
{
    const tagged_t *x = *(const tagged_t *const *)a, *y = *(const tagged_t *const *)b;
    if (x->pos != y->pos) return x->pos < y->pos ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

typedef struct rw_vec {
    weft_rewriter_t **v;
    size_t n, cap;
} rw_vec_t;

static weft_status_t vec_push(rw_vec_t *v, weft_rewriter_t *rw)
{
    if (!weft__vec_grow(NULL, (void **)&v->v, &v->cap, v->n + 1, sizeof *v->v)) return WEFT_ENOMEM;
    v->v[v->n++] = weft_rewriter_retain(rw);
    return WEFT_OK;
}

static void vec_fini(rw_vec_t *v)
{
    weft__rw_release_array(v->n, v->v);
    free(v->v);
}

/* The group's selected members, as one walker / equilibrium (NULL: none). */
static weft_status_t build_group(const query_t *q, db_entry_t *e, weft_rewriter_t **out)
{
    *out = NULL;
    bool inc = in_list(&e->t, q->n_inc, q->inc);
    const tagged_t **ord = weft__vec_malloc(e->n_m + 1, sizeof *ord);
    if (!ord) return WEFT_ENOMEM;
    for (size_t k = 0; k < e->n_m; k++) ord[k] = &e->m[k].t;
    qsort(ord, e->n_m, sizeof *ord, by_pos);
    rw_vec_t roles[4] = {{0}};
    weft_status_t st = WEFT_OK;
    for (size_t k = 0; k < e->n_m && st == WEFT_OK; k++) {
        const db_member_t *m = (const db_member_t *)ord[k]; /* t is the first member */
        if (selected(q, &m->t, inc)) st = vec_push(&roles[m->role], m->rw);
    }
    free(ord);
    bool any = roles[0].n || roles[1].n || roles[3].n;
    if (st == WEFT_OK && any && e->kind == WEFT_REWRITE_GROUP_EQUILIBRIUM) {
        weft_equilibrium_desc_t d = WEFT_EQUILIBRIUM_DESC_INIT;
        d.name = e->t.name;
        d.n_node = roles[0].n, d.node = roles[0].v;
        d.n_final = roles[1].n, d.final = roles[1].v;
        d.n_cleanup = roles[2].n, d.cleanup = roles[2].v;
        d.n_global = roles[3].n, d.global = roles[3].v;
        d.max_use_ratio = e->ratio;
        st = weft_rewriter_equilibrium_create(&d, out); /* takes the references */
        for (int r = 0; r < 4; r++) roles[r].n = 0;
    } else if (st == WEFT_OK && roles[0].n) {
        weft_walk_order_t o = e->kind == WEFT_REWRITE_GROUP_OUT2IN ? WEFT_WALK_OUT2IN
                                                                   : WEFT_WALK_IN2OUT;
        st = weft_rewriter_walk_create(e->t.name, o, false, roles[0].n, roles[0].v, out);
        roles[0].n = 0;
    }
    for (int r = 0; r < 4; r++) vec_fini(&roles[r]);
    return st;
}

static weft_status_t check_names(weft_rewrite_db_t *db, query_t *q)
{
    if (strcmp(q->mode, "none") != 0 && !db_has_unlocked(db, q->mode)) {
        q->bad = q->mode;
        return WEFT_ENOTFOUND;
    }
    for (size_t i = 0; i < q->n_inc + q->n_exc; i++) {
        const char *s = i < q->n_inc ? q->inc[i] : q->exc[i - q->n_inc];
        if (!db_has_unlocked(db, s)) {
            q->bad = s;
            return WEFT_ENOTFOUND;
        }
    }
    return WEFT_OK;
}

static weft_status_t build_query(weft_rewrite_db_t *db, query_t *q, weft_rewriter_t **out)
{
    weft_status_t st = check_names(db, q);
    if (st != WEFT_OK) return st;
    const tagged_t **ord = weft__vec_malloc(db->n + 1, sizeof *ord);
    if (!ord) return WEFT_ENOMEM;
    for (size_t i = 0; i < db->n; i++) ord[i] = &db->e[i].t;
    qsort(ord, db->n, sizeof *ord, by_pos);
    rw_vec_t seq = {0};
    for (size_t i = 0; i < db->n && st == WEFT_OK; i++) {
        db_entry_t *e = (db_entry_t *)ord[i]; /* t is the first member */
        if (!e->group) {
            if (selected(q, &e->t, false)) st = vec_push(&seq, e->rw);
            continue;
        }
        if (in_list(&e->t, q->n_exc, q->exc)) continue;
        weft_rewriter_t *g = NULL;
        st = build_group(q, e, &g);
        if (st == WEFT_OK && g) st = vec_push(&seq, g);
        weft_rewriter_release(g);
    }
    free(ord);
    if (st == WEFT_OK) {
        st = weft_rewriter_sequence_create(q->mode, seq.n, seq.v, out); /* takes them */
        seq.n = 0;
    }
    vec_fini(&seq);
    return st;
}

static bool list_ok(size_t n, const char *const *l)
{
    if (n && !l) return false;
    for (size_t i = 0; i < n; i++)
        if (!l[i]) return false;
    return true;
}

static weft_status_t query_locked(weft_rewrite_db_t *db, query_t *q, weft_rewriter_t **out)
{
    pthread_mutex_lock(&db->lock);
    weft_status_t st = build_query(db, q, out);
    pthread_mutex_unlock(&db->lock);
    return st;
}

weft_status_t weft_rewrite_db_query(weft_rewrite_db_t *db, const char *mode, size_t n_include,
                                    const char *const *include, size_t n_exclude,
                                    const char *const *exclude, weft_rewriter_t **out)
{
    if (out) *out = NULL;
    if (!db || !mode || !out || !list_ok(n_include, include) || !list_ok(n_exclude, exclude))
        return WEFT_EINVAL;
    query_t q = {mode, n_include, n_exclude, include, exclude, NULL};
    return query_locked(db, &q, out);
}

weft_status_t weft_rewrite_db_apply(weft_rewrite_db_t *db, weft_fgraph_t *fg, const char *mode,
                                    size_t n_include, const char *const *include,
                                    size_t n_exclude, const char *const *exclude,
                                    weft_rewrite_stats_t *stats)
{
    if (!db || !fg || !mode || !list_ok(n_include, include) || !list_ok(n_exclude, exclude))
        return WEFT_EINVAL;
    query_t q = {mode, n_include, n_exclude, include, exclude, NULL};
    weft_rewriter_t *rw;
    weft_status_t st = query_locked(db, &q, &rw);
    if (st == WEFT_ENOTFOUND)
        return weft_fgraph_set_error(fg, st, "rewrite: unknown %s \"%s\"",
                                     q.bad == mode ? "mode" : "rewrite name or tag", q.bad);
    if (st == WEFT_ENOMEM)
        return weft_fgraph_set_error(fg, st, "rewrite: building mode %s: out of memory", mode);
    if (st != WEFT_OK) return st;
    st = weft_rewriter_apply(rw, fg, stats);
    weft_rewriter_release(rw);
    return st;
}

weft_status_t weft_rewrite_db_print(weft_rewrite_db_t *db, FILE *f)
{
    if (!db || !f) return WEFT_EINVAL;
    static const char *const kinds[] = {"equilibrium", "in2out", "out2in"};
    static const char *const roles[] = {"node", "final", "cleanup", "global"};
    pthread_mutex_lock(&db->lock);
    int bad = 0;
    for (size_t i = 0; i < db->n && !bad; i++) {
        db_entry_t *e = &db->e[i];
        bad |= fprintf(f, "%g %s [", e->t.pos, e->t.name) < 0;
        for (size_t k = 0; k < e->t.n_tags; k++)
            bad |= fprintf(f, k ? " %s" : "%s", e->t.tags[k]) < 0;
        bad |= fprintf(f, "] (%s)\n", e->group ? kinds[e->kind] : "rewriter") < 0;
        for (size_t m = 0; m < e->n_m && !bad; m++) {
            db_member_t *mb = &e->m[m];
            bad |= fprintf(f, "  %g %s [", mb->t.pos, mb->t.name) < 0;
            for (size_t k = 0; k < mb->t.n_tags; k++)
                bad |= fprintf(f, k ? " %s" : "%s", mb->t.tags[k]) < 0;
            bad |= fprintf(f, "] (%s)\n", roles[mb->role]) < 0;
        }
    }
    pthread_mutex_unlock(&db->lock);
    return bad ? WEFT_EIO : WEFT_OK;
}

/* ---- the default database ------------------------------------------------------ */

/* Built on first use under default_lock; a build that runs out of memory
 * leaves it NULL and the next use tries again (a once-only init would make
 * one failed allocation fail every later compile). */
static weft_rewrite_db_t *default_db;
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
/* Written once by lib/catalog's load-time constructor, before any thread of
 * the program can ask for the default database; read under default_lock. */
static weft__rewrite_db_fill_fn default_fill = weft_rewrite_db_add_builtins;

void weft__rewrite_db_set_default_contents(weft__rewrite_db_fill_fn fill)
{
    default_fill = fill ? fill : weft_rewrite_db_add_builtins;
}

static void default_init(void)
{
    weft_rewrite_db_t *db;
    if (weft_rewrite_db_create(&db) != WEFT_OK) return;
    if (default_fill(db) != WEFT_OK) {
        db_free(db);
        return;
    }
    db->is_default = true;
    default_db = db;
}

weft_rewrite_db_t *weft_rewrite_db_default(void)
{
    pthread_mutex_lock(&default_lock);
    if (!default_db) default_init();
    weft_rewrite_db_t *db = default_db;
    pthread_mutex_unlock(&default_lock);
    return db;
}

weft_status_t weft_rewrite_mode(weft_fgraph_t *fg, const char *mode, size_t n_include,
                                const char *const *include, size_t n_exclude,
                                const char *const *exclude, weft_rewrite_stats_t *stats)
{
    if (!fg || !mode) return WEFT_EINVAL;
    weft_rewrite_db_t *db = weft_rewrite_db_default();
    if (!db)
        return weft_fgraph_set_error(fg, WEFT_ENOMEM,
                                     "rewrite: the default database: out of memory");
    return weft_rewrite_db_apply(db, fg, mode, n_include, include, n_exclude, exclude, stats);
}

/* The rewrite database: named rewrites with tags, ordered by position,
 * selected by mode and include/exclude lists; plus the built-in rewriters.
 *
 * Layout (docs/rewrites.md §6.1). Top-level entries run in increasing position
 * (ties: registration order). An entry is either a rewriter (registered with
 * weft_rewrite_db_register) or a group (weft_rewrite_db_register_group): an
 * equilibrium, in2out or out2in stage whose member node rewriters are
 * registered into it by name (weft_rewrite_db_register_in). Members of an
 * equilibrium group have a role: node rewriters, final rewriters (constant
 * folding) or cleanup rewriters (merge).
 *
 * Selection. A query names a mode tag ("fast_run", "fast_compile") or "none",
 * and include/exclude lists of names or tags. A top-level rewriter entry runs
 * when (it carries the mode tag or its name/a tag is included) and neither its
 * name nor any tag is excluded. A group runs with the members that pass the
 * same test (a member also passes when its group's name or tag is included
 * and fails when its group's name or tag is excluded); a group left without
 * node members (and, for equilibrium, without final members) is skipped.
 *
 * The default database (weft_rewrite_db_default) holds the built-in pipeline;
 * see weft_rewrite_db_add_builtins for names, tags and positions.
 *
 * Ownership: a database owns its entries; registering takes the rewriter.
 * Thread: a database is locked internally: registration and queries
 * (weft_rewrite_db_apply) may come from several threads; registration while a
 * query runs waits for the next query to take effect. */
#ifndef WEFT_REWRITE_DB_H
#define WEFT_REWRITE_DB_H

#include <stdbool.h>
#include <stddef.h>

#include "weft/export.h"
#include "weft/fgraph.h"
#include "weft/rewrite.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_rewrite_db weft_rewrite_db_t;

typedef enum weft_rewrite_group_kind {
    WEFT_REWRITE_GROUP_EQUILIBRIUM = 0,
    WEFT_REWRITE_GROUP_IN2OUT = 1,
    WEFT_REWRITE_GROUP_OUT2IN = 2,
} weft_rewrite_group_kind_t;

typedef enum weft_rewrite_role {
    WEFT_REWRITE_ROLE_NODE = 0,    /* a node rewriter tried on every node */
    WEFT_REWRITE_ROLE_FINAL = 1,   /* equilibrium only: run at the end of each pass */
    WEFT_REWRITE_ROLE_CLEANUP = 2, /* equilibrium only: run after each success */
    WEFT_REWRITE_ROLE_GLOBAL = 3,  /* equilibrium only: run at the start of each pass */
} weft_rewrite_role_t;

/* An empty database. Ownership: returns new, free with
 * weft_rewrite_db_destroy. Errors: WEFT_EINVAL (NULL out), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_rewrite_db_create(weft_rewrite_db_t **out);
/* NULL is a no-op. Not for the default database (ignored). */
WEFT_API void weft_rewrite_db_destroy(weft_rewrite_db_t *db);

/* The process-wide database with the built-ins, created on first use.
 * Returns borrowed, valid for the process lifetime; NULL when creating it
 * runs out of memory (nothing is kept: the next call tries again). */
WEFT_API weft_rewrite_db_t *weft_rewrite_db_default(void);

/* Registers rw as a top-level entry `name` at `position` with n_tags tags
 * (copied; e.g. {"fast_run", "inplace"}).
 * Ownership: takes rw on every outcome; borrows name and tags.
 * Errors: WEFT_EINVAL (NULL db/name/rw, NULL tags with n_tags > 0, a NULL or
 * empty tag), WEFT_EDUPLICATE (name already used by an entry or member),
 * WEFT_ENOMEM. */
WEFT_API weft_status_t weft_rewrite_db_register(weft_rewrite_db_t *db, const char *name,
                                                weft_rewriter_t *rw, double position,
                                                size_t n_tags, const char *const *tags);
/* Registers an empty group entry. max_use_ratio: as weft_equilibrium_desc_t
 * (0: 8; ignored for walkers). Errors: as weft_rewrite_db_register, plus
 * WEFT_EINVAL for a bad kind. */
WEFT_API weft_status_t weft_rewrite_db_register_group(weft_rewrite_db_t *db, const char *name,
                                                      weft_rewrite_group_kind_t kind,
                                                      double position, double max_use_ratio,
                                                      size_t n_tags, const char *const *tags);
/* Registers rw as member `name` of group `group` with a role; members are
 * tried in increasing `position` (ties: registration order) - so a member
 * registered with a lower position than the others (e.g. -1) is tried first.
 * Ownership: takes rw on every outcome.
 * Errors: WEFT_EINVAL (NULL args, a NULL/empty tag, a ROLE_NODE member that
 * is not a node rewriter, a non-NODE role in a walker group),
 * WEFT_ENOTFOUND (no group of that name), WEFT_EDUPLICATE (name used),
 * WEFT_ENOMEM. */
WEFT_API weft_status_t weft_rewrite_db_register_in(weft_rewrite_db_t *db, const char *group,
                                                   const char *name, weft_rewriter_t *rw,
                                                   weft_rewrite_role_t role, double position,
                                                   size_t n_tags, const char *const *tags);
/* Whether `name` is an entry, member or tag of db. */
WEFT_API bool weft_rewrite_db_has(weft_rewrite_db_t *db, const char *name);

/* Builds the rewriter that a query selects (a sequence of the selected
 * entries) without running it. mode: a tag, or "none" (only included ones).
 * Ownership: returns new, release with weft_rewriter_release.
 * Errors: WEFT_EINVAL (NULL db/mode/out, NULL array with count > 0, a NULL
 * entry), WEFT_ENOTFOUND (mode not "none" and not a tag of db; an include or
 * exclude entry that is neither a name nor a tag), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_rewrite_db_query(weft_rewrite_db_t *db, const char *mode,
                                             size_t n_include, const char *const *include,
                                             size_t n_exclude, const char *const *exclude,
                                             weft_rewriter_t **out);
/* Query then apply to fg (weft_rewrite_mode does this on the default db; an
 * ENOTFOUND message goes to fg). Errors: as the query, and as
 * weft_rewriter_apply. */
WEFT_API weft_status_t weft_rewrite_db_apply(weft_rewrite_db_t *db, weft_fgraph_t *fg,
                                             const char *mode, size_t n_include,
                                             const char *const *include, size_t n_exclude,
                                             const char *const *exclude,
                                             weft_rewrite_stats_t *stats);
/* Writes one line per entry and member: "position name [tags] (kind)".
 * Errors: WEFT_EINVAL, WEFT_EIO. */
WEFT_API weft_status_t weft_rewrite_db_print(weft_rewrite_db_t *db, FILE *f);

/* Registers weft's built-in rewrites into db (what the default db holds):
 *   0     merge1            graph     fast_run fast_compile merge
 *   0.6   useless           in2out    fast_run   (members: local_* useless)
 *   0.65  merge_useless     graph     fast_run merge
 *   1     canonicalize      equilibrium fast_run (node members, final
 *                           constant_folding [fast_compile], cleanup merge)
 *   1.2   merge_canon       graph     fast_run merge
 *   2     specialize        equilibrium fast_run (local_gemm...)
 *   48    elemwise_fusion   out2in    fast_run fusion (local_elemwise_fusion:
 *                                     elementwise chains -> Composite)
 *   49    merge2            graph     fast_run merge
 *   49.5  add_destroy_handler graph   fast_run inplace
 *   50.4  update_inplace    graph     fast_run inplace (update outputs in
 *                                     their own state: fgraph update pairs)
 *   50.5  inplace           graph     fast_run inplace
 *   100   merge3            graph     fast_run merge
 * with fast_compile getting merge1 and constant folding (in canonicalize).
 * Members that may change a result's bits under IEEE arithmetic carry the
 * tag fast_math (local_add_zero, local_mul_zero, local_sub_self,
 * local_exp_log, local_log_exp, the two cancellations,
 * local_sum_broadcastable, local_gemm: docs/rewrites.md §6.5); excluding it
 * gives mode none's bits.
 * Errors: WEFT_EINVAL (NULL db), WEFT_EDUPLICATE (already added), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_rewrite_db_add_builtins(weft_rewrite_db_t *db);

/* ---- built-in rewriters (each returns new; release with weft_rewriter_release;
 *      Errors: WEFT_EINVAL (NULL out), WEFT_ENOMEM) ----------------------------- */

/* MergeOptimizer: merges identical applies (equal ops, same input objects)
 * and equal constants, cascading to a fixpoint in one apply; attaches a merge
 * feature (hash index) to fg. */
WEFT_API weft_status_t weft_rewriter_merge_create(const char *name, weft_rewriter_t **out);
/* Constant folding as a node rewriter (tracks every node): a node whose inputs
 * are all constants and whose op allows it (do_constant_folding hook) is
 * evaluated with its perform hook and replaced by constants. */
WEFT_API weft_status_t weft_rewriter_constant_folding_create(const char *name,
                                                             weft_rewriter_t **out);
/* Attaches a DestroyHandler to fg if it has none (weft_dh_attach). */
WEFT_API weft_status_t weft_rewriter_add_destroy_handler_create(const char *name,
                                                                weft_rewriter_t **out);
/* The inplace rewrite (docs/rewrites.md §6.4): replaces ops by their in-place
 * variants (op class inplace_variant hook) where the DestroyHandler and the
 * Supervisor accept it, largest outputs first, preferring inputs whose last
 * reader is the node. Attaches a DestroyHandler if none. */
WEFT_API weft_status_t weft_rewriter_inplace_create(const char *name, weft_rewriter_t **out);
/* In-place priority for updates (docs/execution.md §6): for each update pair of fg
 * (weft_fgraph_set_update, in output order), the node computing the output
 * is replaced by its in-place variant on the updated input (its first
 * occurrence among the node's inputs; all of the node's outputs in one
 * validated transaction) when the op has one and the DestroyHandler and
 * Supervisor accept it; a rejection changes nothing and counts as a failure
 * in the stats. Run before inplace, so an update gets its state's buffer
 * before another reader could. No update pairs: does nothing; else attaches
 * a DestroyHandler if none. */
WEFT_API weft_status_t weft_rewriter_update_inplace_create(const char *name,
                                                           weft_rewriter_t **out);
/* A built-in node rewriter by name ("local_mul_by_one", "local_gemm", ... the
 * members listed by weft_rewrite_db_print on the default db). Errors:
 * WEFT_EINVAL (NULL args), WEFT_ENOTFOUND (unknown name), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_rewriter_builtin_create(const char *name, weft_rewriter_t **out);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_REWRITE_DB_H */

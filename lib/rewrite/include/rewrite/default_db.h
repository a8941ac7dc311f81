/* How the process-wide default rewrite database gets its contents. The
 * rewrite module only knows its own pipeline (weft_rewrite_db_add_builtins);
 * what the default database holds besides is listed by lib/catalog, which
 * sits above every module that contributes rewrites and installs its list
 * here before main runs. Internal: not part of the API. */
#ifndef WEFT_REWRITE_DEFAULT_DB_H
#define WEFT_REWRITE_DEFAULT_DB_H

#include "weft/rewrite_db.h"

typedef weft_status_t (*weft__rewrite_db_fill_fn)(weft_rewrite_db_t *db);

/* Sets the function that fills the default database when it is first used
 * (weft_rewrite_db_default). Without one, it holds the rewrite module's own
 * pipeline only. Call before the first use (lib/catalog does, at load). */
void weft__rewrite_db_set_default_contents(weft__rewrite_db_fill_fn fill);

#endif /* WEFT_REWRITE_DEFAULT_DB_H */

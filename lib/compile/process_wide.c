/* Process-wide pieces of the compile module: the shared default pool (created
 * lazily and thread-safely, freed at exit), the registry of live functions
 * (so WEFT_PROFILE=1 can print the reports of functions still alive at
 * exit) and function serial numbers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static weft_pool_t *rt_pool;        /* the default pool, under rt_lock */
static weft_function_t *rt_live;    /* live functions (profiled ones), under rt_lock */
static uint64_t rt_serial;          /* under rt_lock */
static bool rt_atexit;              /* handler registered, under rt_lock */

bool weft__env_profile(void)
{
    const char *v = getenv("WEFT_PROFILE");
    return v && v[0] && strcmp(v, "0") != 0;
}

/* At exit: print the reports of profiled functions still alive, then stop the
 * default pool (it stays if live functions still use it: their runs are
 * attached to it). */
static void rt_at_exit(void)
{
    pthread_mutex_lock(&rt_lock);
    for (weft_function_t *f = rt_live; f; f = f->reg_next)
        if (f->env_profile) weft_function_print_profile(f, stderr);
    weft_pool_t *p = rt_pool;
    if (p && weft_pool_destroy(p) == WEFT_OK) rt_pool = NULL;
    pthread_mutex_unlock(&rt_lock);
}

static void rt_register_atexit_locked(void)
{
    if (!rt_atexit && atexit(rt_at_exit) == 0) rt_atexit = true;
}

weft_status_t weft__default_pool(weft_pool_t **out)
{
    weft_status_t st = WEFT_OK;
    pthread_mutex_lock(&rt_lock);
    if (!rt_pool) {
        st = weft_pool_create(weft_pool_default_threads(), NULL, &rt_pool);
        if (st == WEFT_OK) rt_register_atexit_locked();
    }
    *out = rt_pool;
    pthread_mutex_unlock(&rt_lock);
    return st;
}

uint64_t weft__next_serial(void)
{
    pthread_mutex_lock(&rt_lock);
    uint64_t s = ++rt_serial;
    pthread_mutex_unlock(&rt_lock);
    return s;
}

void weft__registry_add(weft_function_t *f)
{
    pthread_mutex_lock(&rt_lock);
    f->reg_prev = NULL;
    f->reg_next = rt_live;
    if (rt_live) rt_live->reg_prev = f;
    rt_live = f;
    rt_register_atexit_locked();
    pthread_mutex_unlock(&rt_lock);
}

void weft__registry_remove(weft_function_t *f)
{
    pthread_mutex_lock(&rt_lock);
    if (f->reg_prev) f->reg_prev->reg_next = f->reg_next;
    else if (rt_live == f) rt_live = f->reg_next;
    if (f->reg_next) f->reg_next->reg_prev = f->reg_prev;
    f->reg_prev = f->reg_next = NULL;
    pthread_mutex_unlock(&rt_lock);
}

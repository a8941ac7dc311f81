/* OpenBLAS threading around compiled-function calls (docs/execution.md §10;
 * docs/performance-notes.md §3.1, §3.2): kernels run single-threaded inside
 * nodes, so while any call is running OpenBLAS is set to one thread; the
 * previous setting comes back when the last concurrent call finishes. The
 * serial OpenBLAS build is refused at compile time. */
#include <pthread.h>

#include "compile_int.h"

/* From OpenBLAS's cblas.h; declared here so the module needs no BLAS include
 * path (libweft links OpenBLAS). */
extern int openblas_get_parallel(void);
extern int openblas_get_num_threads(void);
extern void openblas_set_num_threads(int n);

static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned blas_active; /* calls running, under blas_lock */
static int blas_saved;       /* setting before the first active call */

weft_status_t weft__compile_blas_check(void)
{
    if (openblas_get_parallel() == 0)
        return weft__fn_error(NULL, WEFT_ESTATE,
                              "the serial OpenBLAS build is not safe to call from several "
                              "threads at once: install the pthread build (docs/performance-notes.md §3.2)");
    return WEFT_OK;
}

void weft__compile_blas_enter(void)
{
    pthread_mutex_lock(&blas_lock);
    if (blas_active++ == 0) {
        blas_saved = openblas_get_num_threads();
        if (blas_saved != 1) openblas_set_num_threads(1);
    }
    pthread_mutex_unlock(&blas_lock);
}

void weft__compile_blas_exit(void)
{
    pthread_mutex_lock(&blas_lock);
    if (--blas_active == 0 && blas_saved != 1 && blas_saved > 0)
        openblas_set_num_threads(blas_saved);
    pthread_mutex_unlock(&blas_lock);
}

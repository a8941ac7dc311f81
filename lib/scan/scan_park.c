/* Parking of the row views a Scan keeps between its runs (scan_run.c keeps
 * one handle per inner input and output, rewritten in place every step so
 * that steps allocate no handles). Between runs such a view would still
 * hold a reference to the buffer of the run's last row: the stacked
 * outputs and the sequences - intermediates of the outer function - could
 * then not go back to its buffer pool when their last reader ran
 * (docs/execution.md §4.2), and each call allocated them anew, the kernel
 * zeroing their pages again (a 100x32x256 float64 stacked state: 6.5 MB a
 * call, in huge pages). Parked, a view points at a process-lifetime
 * 0-d tensor instead, and the next run rewrites it as before. */
#include <pthread.h>

#include "scan_int.h"
#include "tensor/tensor_int.h"

static weft_tensor_t *park_base; /* written once under park_once, never freed */
static pthread_once_t park_once = PTHREAD_ONCE_INIT;

static void park_init(void)
{
    if (weft_tensor_empty(WEFT_FLOAT64, 0, NULL, &park_base) != WEFT_OK) park_base = NULL;
}

void weft__scan_views_park(weft_tensor_t **views, size_t n)
{
    pthread_once(&park_once, park_init);
    static const int64_t zero[WEFT_MAX_NDIM] = {0};
    for (size_t i = 0; i < n; i++) {
        if (!views[i] || views[i] == park_base) continue;
        if (park_base && weft__tensor_handle_alone(views[i])) {
            /* an empty view (length-0 axes): reads nothing, holds no row */
            weft__tensor_repoint(views[i], park_base, zero, zero, weft_tensor_data(park_base));
            continue;
        }
        weft_tensor_release(views[i]); /* shared, or no parking tensor: a new view next run */
        views[i] = NULL;
    }
}

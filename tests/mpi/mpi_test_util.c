/* See mpi_test_util.h. */
#include "mpi_test_util.h"

#include <string.h>
#include <unistd.h>

#include "weft/custom_op.h"
#include "weft/mpi.h"

int mpi_test_run(int argc, char **argv, const char *name, const struct CMUnitTest *tests,
                 size_t n, int *rank, int *nranks)
{
    alarm(200);
    if (weft_mpi_init(&argc, &argv, NULL) != WEFT_OK) return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
    int failed = _cmocka_run_group_tests(name, tests, n, NULL, NULL);
    MPI_Finalize();
    return failed;
}

static weft_status_t picky_kernel(weft_kernel_ctx_t *ctx, size_t n_in, weft_tensor_t *const *in,
                                  size_t n_out, weft_tensor_t *const *out, void *user)
{
    (void)n_in, (void)n_out, (void)user;
    const double *x = weft_tensor_data(in[0]);
    size_t n = weft_tensor_size(in[0]);
    for (size_t i = 0; i < n; i++)
        if (x[i] >= 1e6) return weft_kernel_error(ctx, WEFT_ERANGE, "picky: %g at %zu", x[i], i);
    if (n) memcpy(weft_tensor_data(out[0]), x, n * sizeof *x);
    return WEFT_OK;
}

weft_var_t *mpi_test_picky(weft_graph_t *g, weft_var_t *x)
{
    static const weft_op_class_t *cls;
    if (!cls) {
        weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
        d.name = "MpiTestPickyBig";
        d.kernel = picky_kernel;
        if (weft_custom_op_class(&d, &cls) != WEFT_OK) return NULL;
    }
    return weft_custom_call(g, cls, 1, &x);
}

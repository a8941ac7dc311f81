/* Shared by the MPI tests added with updates, gradients and dynamic shapes
 * (test_mpi_updates.c, test_mpi_grad.c, test_mpi_dynamic.c): the program's
 * main (watchdog, MPI, cmocka) and a custom op that fails on demand. */
#ifndef WEFT_TESTS_MPI_TEST_UTIL_H
#define WEFT_TESTS_MPI_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "weft/graph.h"

/* Arms a watchdog (alarm: a hung rank dies, and mpirun ends the others),
 * initializes MPI (weft_mpi_init), sets *rank and *nranks (MPI_COMM_WORLD)
 * before running tests[0..n) as the group `name`, then finalizes MPI.
 * Returns the failed test count (1 when MPI cannot start). */
int mpi_test_run(int argc, char **argv, const char *name, const struct CMUnitTest *tests,
                 size_t n, int *rank, int *nranks);

/* picky(x): a float64 copy of x whose node fails (WEFT_ERANGE, "picky: V at
 * I") when an element is at least 1e6: a node failing on the rank that runs
 * it. Op class "MpiTestPickyBig". */
weft_var_t *mpi_test_picky(weft_graph_t *g, weft_var_t *x);

#endif /* WEFT_TESTS_MPI_TEST_UTIL_H */

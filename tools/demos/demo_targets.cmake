# The demos (included from this folder's CMakeLists.txt):
#   mlp_train      weft vs hand-written C + cblas, MLP training step
#   tile_cholesky  tile Cholesky graph (in-place tile ops) vs LAPACKE_dpotrf
# Their code lives in weft_demo_core so tests/demos can call it directly. The
# demos include cblas.h / lapacke.h themselves (the references are direct
# calls), so they link OpenBLAS and LAPACKE besides libweft.
add_library(weft_demo_core STATIC mlp_train_core.c mlp_train_handc.c
  tile_cholesky_core.c tile_cholesky_ops.c tile_cholesky_kernel.c)
target_include_directories(weft_demo_core PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(weft_demo_core PUBLIC weft_static ${WEFT_LAPACKE} ${WEFT_BLAS}
  Threads::Threads m)

add_executable(mlp_train mlp_train.c)
target_link_libraries(mlp_train PRIVATE weft_demo_core)
add_executable(tile_cholesky tile_cholesky.c)
target_link_libraries(tile_cholesky PRIVATE weft_demo_core)

# tile_cholesky_mpi (tile_cholesky --mpi): the distributed tile Cholesky vs
# ScaLAPACK's pdpotrf (docs/distributed.md), with the MPI component only. It
# links the shared libweft (through libweft_mpi), so it compiles the demo's
# sources itself rather than weft_demo_core (which carries libweft.a).
find_library(WEFT_SCALAPACK scalapack-openmpi)
if(TARGET weft_mpi)
  # mlp_train_mpi (mlp_train --mpi): data-parallel training, gradients
  # allreduced in the graph, loss curve vs the single-process run
  add_executable(mlp_train_mpi mlp_train_mpi.c mlp_train_core.c mlp_train_handc.c)
  target_link_libraries(mlp_train_mpi PRIVATE weft_mpi ${WEFT_BLAS} Threads::Threads m)
endif()
if(TARGET weft_mpi AND WEFT_SCALAPACK)
  add_executable(tile_cholesky_mpi tile_cholesky_mpi.c tile_cholesky_core.c tile_cholesky_ops.c
    tile_cholesky_kernel.c)
  target_link_libraries(tile_cholesky_mpi PRIVATE weft_mpi ${WEFT_SCALAPACK} ${WEFT_LAPACKE}
    ${WEFT_BLAS} Threads::Threads m)
endif()

# cholesky_mpi_sim: the distributed tile Cholesky's DAG replayed at 2..1024
# ranks with measured kernel costs and a latency/bandwidth model (no MPI).
add_executable(cholesky_mpi_sim cholesky_mpi_sim.c sim_replay.c tile_cholesky_kernel.c)
target_link_libraries(cholesky_mpi_sim PRIVATE ${WEFT_LAPACKE} ${WEFT_BLAS} m)

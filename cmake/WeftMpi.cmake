# The optional MPI component (docs/distributed.md): libweft_mpi, built when
# WEFT_MPI is ON, or AUTO and both MPI (find_package(MPI)) and METIS
# (libmetis-dev) are found. libweft never depends on it.
set(WEFT_MPI AUTO CACHE STRING "Build libweft_mpi: AUTO (when MPI and METIS are found), ON, OFF")
set_property(CACHE WEFT_MPI PROPERTY STRINGS AUTO ON OFF)

set(WEFT_HAVE_MPI OFF)
if(NOT WEFT_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C QUIET)
  find_path(METIS_INCLUDE_DIR metis.h)
  find_library(METIS_LIBRARY metis)
  if(MPI_C_FOUND AND METIS_INCLUDE_DIR AND METIS_LIBRARY)
    set(WEFT_HAVE_MPI ON)
  elseif(WEFT_MPI STREQUAL "ON")
    message(FATAL_ERROR "WEFT_MPI=ON but MPI (found: ${MPI_C_FOUND}) or METIS "
                        "(${METIS_INCLUDE_DIR}, ${METIS_LIBRARY}) is missing")
  endif()
endif()
message(STATUS "weft: libweft_mpi ${WEFT_HAVE_MPI} (WEFT_MPI=${WEFT_MPI})")
if(WEFT_HAVE_MPI)
  add_subdirectory(${PROJECT_SOURCE_DIR}/mpi)
  # mpiexec for the tests and demos: CI runs as root on 2 cores
  set(WEFT_MPIEXEC ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe
      CACHE INTERNAL "mpiexec with the flags weft's tests need")
endif()

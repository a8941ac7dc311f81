# OpenBLAS (CBLAS interface) and LAPACKE, found through pkg-config with a plain
# find_library fallback. Linked into libweft from the start even where only
# later layers call them. Defines WEFT_LINK_DEPS (private link line of libweft)
# and WEFT_LINK_DEPS_INTERFACE (what a static consumer must add).
pkg_check_modules(OPENBLAS IMPORTED_TARGET openblas)
pkg_check_modules(LAPACKE IMPORTED_TARGET lapacke)

if(OPENBLAS_FOUND)
  set(WEFT_BLAS PkgConfig::OPENBLAS)
else()
  find_library(WEFT_OPENBLAS_LIB NAMES openblas REQUIRED)
  set(WEFT_BLAS ${WEFT_OPENBLAS_LIB})
endif()
if(LAPACKE_FOUND)
  set(WEFT_LAPACKE PkgConfig::LAPACKE)
else()
  find_library(WEFT_LAPACKE_LIB NAMES lapacke REQUIRED)
  set(WEFT_LAPACKE ${WEFT_LAPACKE_LIB})
endif()

# PkgConfig::JANSSON (the JSON graph format, lib/io) is found in
# lib/io/CMakeLists.txt as a GLOBAL imported target; names resolve at generate
# time.
set(WEFT_LINK_DEPS Threads::Threads PkgConfig::HWLOC ${WEFT_LAPACKE} ${WEFT_BLAS} m
  PkgConfig::JANSSON ${WEFT_HALF_RT})
set(WEFT_LINK_DEPS_INTERFACE
  Threads::Threads "$<LINK_ONLY:-lhwloc>" "$<LINK_ONLY:-llapacke>"
  "$<LINK_ONLY:-lopenblas>" "$<LINK_ONLY:m>" "$<LINK_ONLY:-ljansson>" ${WEFT_HALF_RT})

if(WEFT_BUILD_TESTS)
  pkg_check_modules(CMOCKA IMPORTED_TARGET cmocka)
  if(CMOCKA_FOUND)
    set(CMOCKA_LINK PkgConfig::CMOCKA)
  else()
    find_library(CMOCKA_LIB NAMES cmocka REQUIRED)
    set(CMOCKA_LINK ${CMOCKA_LIB})
  endif()
endif()

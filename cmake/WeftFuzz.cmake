# WEFT_FUZZ=ON: the libFuzzer build (docs/testing.md). Every module is
# compiled with libFuzzer's coverage instrumentation plus ASan and UBSan
# (clang only); tests/fuzz adds the fuzz targets, linked with the libFuzzer
# driver. tools/dev/test.sh's `fuzz` configuration builds and runs them.
option(WEFT_FUZZ "Build the libFuzzer targets (tests/fuzz; needs CC=clang)" OFF)

if(WEFT_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "WEFT_FUZZ needs clang (libFuzzer): configure with CC=clang "
                        "(found ${CMAKE_C_COMPILER_ID})")
  endif()
  if(NOT WEFT_SANITIZE STREQUAL "")
    message(FATAL_ERROR "WEFT_FUZZ brings its own sanitizers: leave WEFT_SANITIZE empty")
  endif()
  # -Wno-pass-failed: the instrumentation keeps clang from vectorizing the
  # loops that ask for it (WEFT_IVDEP), which is no defect here
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g -Wno-pass-failed)
  add_link_options(-fsanitize=address,undefined)
  # the same switch as WEFT_SANITIZE's (stress tests size themselves down)
  add_compile_definitions(WEFT_SANITIZED=1)
endif()

# weft_add_fuzz_target(NAME SOURCES ...): a fuzz target linked with libweft
# (static) and the libFuzzer driver; it sees only include/weft/.
function(weft_add_fuzz_target name)
  cmake_parse_arguments(F "" "" "SOURCES" ${ARGN})
  add_executable(${name} ${F_SOURCES})
  target_link_libraries(${name} PRIVATE weft_static)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
endfunction()

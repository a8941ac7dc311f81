# float16 (base/include/base/dtype_list.h): a clang without _Float16 (clang
# 14, Debian 12's, used by the sanitizer and fuzz builds) stores half values
# as __fp16 and converts them with compiler-rt's routines (__gnu_h2f_ieee,
# __gnu_f2h_ieee), which its default runtime (libgcc) lacks. WEFT_HALF_RT is
# then compiler-rt's builtins archive, linked by weft_base and by every
# consumer of the library (WeftBlas.cmake's link lists); else empty.
set(WEFT_HALF_RT "")
if(CMAKE_C_COMPILER_ID STREQUAL "Clang")
  include(CheckCSourceCompiles)
  check_c_source_compiles("_Float16 h; int main(void) { return (int)h; }" WEFT_HAVE_FLOAT16)
  if(NOT WEFT_HAVE_FLOAT16)
    execute_process(COMMAND ${CMAKE_C_COMPILER} --rtlib=compiler-rt -print-libgcc-file-name
                    OUTPUT_VARIABLE WEFT_HALF_RT OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT EXISTS "${WEFT_HALF_RT}")
      message(FATAL_ERROR "float16 needs compiler-rt's builtins with this clang "
                          "(${WEFT_HALF_RT} not found): use GCC >= 12 or clang >= 15")
    endif()
  endif()
endif()

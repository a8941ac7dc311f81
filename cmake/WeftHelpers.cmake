# Helpers shared by every folder's CMakeLists.txt.
#
# Modules: each folder of scheduler/ and lib/ is one OBJECT library registered
# with weft_add_module(); libweft (shared and static) is assembled from all of
# them. Tests link only the modules they need (weft_add_test MODULES ...), so a
# module being edited does not stop other modules' tests from building.

set_property(GLOBAL PROPERTY WEFT_MODULES "")

function(weft_set_warnings)
  add_compile_options(-Wall -Wextra -Wpedantic -Wshadow
                      $<$<COMPILE_LANGUAGE:C>:-Wstrict-prototypes>)
  if(WEFT_WERROR)
    add_compile_options(-Werror)
  endif()
endfunction()

function(weft_set_sanitizers)
  if(WEFT_SANITIZE STREQUAL "")
    return()
  endif()
  set(flags -fsanitize=${WEFT_SANITIZE} -fno-omit-frame-pointer -g)
  if(WEFT_SANITIZE MATCHES "undefined")
    list(APPEND flags -fno-sanitize-recover=all)
  endif()
  add_compile_options(${flags})
  add_link_options(-fsanitize=${WEFT_SANITIZE})
  # Under sanitizers, code may ask whether it runs instrumented (e.g. to size
  # stress tests); the macro is set for every target.
  add_compile_definitions(WEFT_SANITIZED=1)
endfunction()

# weft_add_module(NAME SOURCES ... [DEPS target...])
# DEPS are other modules or imported targets this module uses.
function(weft_add_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} OBJECT ${M_SOURCES})
  target_include_directories(${name}
    PUBLIC ${PROJECT_SOURCE_DIR}/include
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${name} PRIVATE WEFT_BUILDING)
  if(M_DEPS)
    target_link_libraries(${name} PUBLIC ${M_DEPS})
  endif()
  set_property(GLOBAL APPEND PROPERTY WEFT_MODULES ${name})
endfunction()

function(weft_add_public_library)
  get_property(mods GLOBAL PROPERTY WEFT_MODULES)
  set(objs "")
  foreach(m IN LISTS mods)
    list(APPEND objs $<TARGET_OBJECTS:${m}>)
  endforeach()
  add_library(weft_shared SHARED ${objs})
  add_library(weft_static STATIC ${objs})
  foreach(t weft_shared weft_static)
    set_target_properties(${t} PROPERTIES OUTPUT_NAME weft)
    target_include_directories(${t} PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  endforeach()
  target_link_libraries(weft_shared PRIVATE ${WEFT_LINK_DEPS})
  target_compile_definitions(weft_shared INTERFACE WEFT_SHARED)
  set_target_properties(weft_shared PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION 0)
  # The static archive's consumers must link the private dependencies themselves.
  target_link_libraries(weft_static INTERFACE ${WEFT_LINK_DEPS_INTERFACE})
  add_library(weft::weft ALIAS weft_shared)
  add_library(weft::weft_static ALIAS weft_static)
endfunction()

# weft_add_test(NAME SOURCES ... MODULES ... [LABELS ...] [TIMEOUT s])
# The test links the listed modules' objects directly (internal symbols are
# reachable), plus cmocka and the external dependencies.
function(weft_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;MODULES;LABELS;LIBS" ${ARGN})
  set(objs "")
  foreach(m IN LISTS T_MODULES)
    list(APPEND objs $<TARGET_OBJECTS:${m}>)
  endforeach()
  add_executable(${name} ${T_SOURCES} ${objs})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/include
    ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE WEFT_BUILDING)
  target_link_libraries(${name} PRIVATE ${CMOCKA_LINK} ${WEFT_LINK_DEPS} ${T_LIBS})
  add_test(NAME ${name} COMMAND ${name})
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()

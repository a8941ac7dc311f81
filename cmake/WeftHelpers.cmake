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
  set(sanitize ${WEFT_SANITIZE})
  # With clang, UBSan also checks float-to-int conversions that do not fit
  # (float-cast-overflow; GCC's UBSan has no such check) and implicit integer
  # conversions that change a value (truncation, sign change). Not checked:
  # unsigned wrap-around and unsigned shifts losing bits, which weft uses on
  # purpose (hashes, two's-complement integer kernels).
  if(WEFT_SANITIZE MATCHES "undefined" AND CMAKE_C_COMPILER_ID MATCHES "Clang")
    string(APPEND sanitize ",float-cast-overflow,integer")
  endif()
  set(flags -fsanitize=${sanitize} -fno-omit-frame-pointer -g)
  if(WEFT_SANITIZE MATCHES "undefined")
    list(APPEND flags -fno-sanitize-recover=all)
  endif()
  if(sanitize MATCHES "integer")
    list(APPEND flags -fno-sanitize=unsigned-integer-overflow,unsigned-shift-base)
  endif()
  if(CMAKE_C_COMPILER_ID MATCHES "Clang")
    # Instrumented loops do not vectorize: clang would report each loop
    # pragma (WEFT_IVDEP) it cannot honour.
    list(APPEND flags -Wno-pass-failed)
  endif()
  add_compile_options(${flags})
  add_link_options(-fsanitize=${sanitize})
  # Under sanitizers, code may ask whether it runs instrumented (e.g. to size
  # stress tests); the macro is set for every target.
  add_compile_definitions(WEFT_SANITIZED=1)
endfunction()

# weft_add_module(NAME SOURCES ... [DEPS module...] [LIBS target...] [PROBE])
#
# A module is an OBJECT library whose folder is the current source dir. What
# it may include is exactly (docs/architecture.md, "Layers"):
#   - include/weft/ (the public API), for everyone;
#   - its own folder (its private headers), for itself only;
#   - its own include/ subfolder, if any (its internal interface, headers
#     named <module>/..._int.h), for itself and the modules that declare it;
#   - the include/ subfolders of the modules listed in DEPS, not those of
#     their dependencies: a module names every module it uses.
# No module sees the project root. DEPS must name modules defined earlier, so
# the dependency graph is acyclic by construction. LIBS are external targets
# (pthreads, hwloc, OpenBLAS, jansson). PROBE builds the module on demand only
# and keeps it out of libweft (tests/layering uses it).
function(weft_add_module name)
  cmake_parse_arguments(M "PROBE" "" "SOURCES;DEPS;LIBS" ${ARGN})
  foreach(d IN LISTS M_DEPS)
    get_property(known TARGET ${d} PROPERTY WEFT_MODULE_DIR SET)
    if(NOT known)
      message(FATAL_ERROR "module ${name}: dependency '${d}' is not a module defined "
                          "before it (modules are defined in layer order, lib/CMakeLists.txt)")
    endif()
  endforeach()
  if(M_PROBE)
    add_library(${name} OBJECT EXCLUDE_FROM_ALL ${M_SOURCES})
  else()
    add_library(${name} OBJECT ${M_SOURCES})
    set_property(GLOBAL APPEND PROPERTY WEFT_MODULES ${name})
  endif()
  set_target_properties(${name} PROPERTIES WEFT_MODULE_DIR ${CMAKE_CURRENT_SOURCE_DIR}
                                           WEFT_MODULE_DEPS "${M_DEPS}")
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/include
                                     PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/include)
    target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  endif()
  target_compile_definitions(${name} PRIVATE WEFT_BUILDING)
  # PRIVATE: a dependency's interface headers reach this module only, never
  # the modules that depend on this one.
  if(M_DEPS)
    target_link_libraries(${name} PRIVATE ${M_DEPS})
  endif()
  if(M_LIBS)
    target_link_libraries(${name} PUBLIC ${M_LIBS})
  endif()
endfunction()

# The modules `mods` need, transitively, in `out` (mods included).
function(weft_module_closure out)
  set(todo ${ARGN})
  set(seen "")
  while(todo)
    list(POP_FRONT todo m)
    if(m IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${m})
    get_target_property(deps ${m} WEFT_MODULE_DEPS)
    if(deps)
      list(APPEND todo ${deps})
    endif()
  endwhile()
  set(${out} "${seen}" PARENT_SCOPE)
endfunction()

# weft_add_link_checks(): for every module, a shared object linked from that
# module and its dependency closure alone with --no-undefined, so a call into
# a module it does not declare fails the build (the symbol-level half of the
# layering; the include-level half is weft_add_module). Unsanitized builds
# only: sanitizer runtimes are not linked into shared objects.
function(weft_add_link_checks)
  if(NOT WEFT_SANITIZE STREQUAL "" OR WEFT_FUZZ)
    return()
  endif()
  get_property(mods GLOBAL PROPERTY WEFT_MODULES)
  foreach(m IN LISTS mods)
    weft_add_link_check(${m})
  endforeach()
endfunction()

# ${m}_linkcheck: m's objects and its dependency closure's, nothing else.
function(weft_add_link_check m)
  weft_module_closure(closure ${m})
  set(objs "")
  foreach(c IN LISTS closure)
    list(APPEND objs $<TARGET_OBJECTS:${c}>)
  endforeach()
  get_target_property(probe ${m} EXCLUDE_FROM_ALL)
  if(probe)
    add_library(${m}_linkcheck SHARED EXCLUDE_FROM_ALL ${objs})
  else()
    add_library(${m}_linkcheck SHARED ${objs})
  endif()
  target_link_libraries(${m}_linkcheck PRIVATE ${closure})
  target_link_options(${m}_linkcheck PRIVATE -Wl,--no-undefined)
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
  # The archive member listing weft's op classes and default rewrites
  # (lib/catalog) is referenced by nothing else: make every consumer keep it.
  target_link_options(weft_static INTERFACE "LINKER:--undefined=weft__catalog_anchor")
  add_library(weft::weft ALIAS weft_shared)
  add_library(weft::weft_static ALIAS weft_static)
endfunction()

# weft_add_test(NAME SOURCES ... MODULES ... [WHITEBOX module...] [LIBS ...]
#               [LABELS ...] [TIMEOUT s])
# The test links the objects of exactly the listed modules and sees their
# interface headers; the list must be closed under the modules' dependencies
# (a missing one is a configure error naming it). WHITEBOX modules (also
# listed in MODULES) expose their private headers to the test.
function(weft_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;MODULES;WHITEBOX;LABELS;LIBS" ${ARGN})
  weft_module_closure(closure ${T_MODULES})
  foreach(m IN LISTS closure)
    if(NOT m IN_LIST T_MODULES)
      message(FATAL_ERROR "test ${name}: module ${m} is needed by its modules but not listed")
    endif()
  endforeach()
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/include
                                             ${PROJECT_SOURCE_DIR}/tests)
  foreach(m IN LISTS T_WHITEBOX)
    get_target_property(dir ${m} WEFT_MODULE_DIR)
    target_include_directories(${name} PRIVATE ${dir})
  endforeach()
  target_compile_definitions(${name} PRIVATE WEFT_BUILDING)
  target_link_libraries(${name} PRIVATE ${T_MODULES} ${CMOCKA_LINK} ${T_LIBS})
  add_test(NAME ${name} COMMAND ${name})
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()

# Writes ${PROJECT_BINARY_DIR}/weft_modules.txt, one line per module,
# "module: dep dep ..." (its DEPS, sorted), for tests/layering to compare with
# the layer table of docs/architecture.md.
function(weft_write_module_graph)
  get_property(mods GLOBAL PROPERTY WEFT_MODULES)
  set(text "")
  foreach(m IN LISTS mods)
    get_target_property(deps ${m} WEFT_MODULE_DEPS)
    if(NOT deps)
      set(deps "")
    endif()
    list(SORT deps)
    list(JOIN deps " " line)
    string(APPEND text "${m}: ${line}\n")
  endforeach()
  file(WRITE ${PROJECT_BINARY_DIR}/weft_modules.txt "${text}")
endfunction()

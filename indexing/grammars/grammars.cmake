# The tree-sitter runtime and grammars, compiled from the C sources that npm
# installs into indexing/grammars/node_modules (`npm ci --ignore-scripts`,
# run by scripts/setup.sh; package.json pins every version). Nothing of npm
# runs at build time and no prebuilt binary is used: only src/parser.c,
# src/scanner.c and the runtime's lib/src/lib.c are compiled.
#
# QUICKFILL_TREE_SITTER: AUTO (the default) builds them when node_modules is
# there, ON requires them, OFF never builds them. Without the runtime every
# language keeps plain-text behaviour (no syntax trees). A grammar whose
# folder is missing is left out alone.
#
# Defines (in the caller's scope):
#   QF_TREE_SITTER_FOUND   TRUE when the runtime is built (target qf_tree_sitter)
#   QF_GRAMMAR_DEFINES     QF_GRAMMAR_<name>=1 for each grammar built (target qf_grammars)
set(QUICKFILL_TREE_SITTER AUTO CACHE STRING
    "Build tree-sitter and its grammars from indexing/grammars/node_modules: AUTO (when installed), ON, OFF")
set_property(CACHE QUICKFILL_TREE_SITTER PROPERTY STRINGS AUTO ON OFF)
set(QUICKFILL_GRAMMARS_DIR "${CMAKE_CURRENT_LIST_DIR}/node_modules" CACHE PATH
    "Folder holding the npm packages of the tree-sitter runtime and grammars")

set(QF_TREE_SITTER_FOUND FALSE)
set(QF_GRAMMAR_DEFINES "")
# Re-run the configure step when node_modules appears or goes away (the
# folder's own timestamp changes) and when the pins change.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             "${CMAKE_CURRENT_LIST_DIR}" "${CMAKE_CURRENT_LIST_DIR}/package-lock.json")

set(_qf_ts_lib "${QUICKFILL_GRAMMARS_DIR}/tree-sitter/vendor/tree-sitter/lib")
if(QUICKFILL_TREE_SITTER STREQUAL "OFF")
  message(STATUS "tree-sitter: off (QUICKFILL_TREE_SITTER=OFF)")
  return()
endif()
if(NOT EXISTS "${_qf_ts_lib}/src/lib.c")
  if(QUICKFILL_TREE_SITTER STREQUAL "ON")
    message(FATAL_ERROR "tree-sitter: ${_qf_ts_lib}/src/lib.c not found; run "
                        "(cd indexing/grammars && npm ci --ignore-scripts) or scripts/setup.sh")
  endif()
  message(STATUS "tree-sitter: not installed (${QUICKFILL_GRAMMARS_DIR}); building without syntax trees")
  return()
endif()

# Third-party C: its own warnings are not ours; -O2 (see docs/indexing.md for
# the compile-time figures behind it).
set(_qf_ts_c_options -w -O2)
function(_qf_ts_c_target target)
  set_target_properties(${target} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF
                                             POSITION_INDEPENDENT_CODE ON
                                             QUICKFILL_THIRD_PARTY ON)  # no -Werror (cmake/quickfill_flags.cmake)
  target_compile_options(${target} PRIVATE ${_qf_ts_c_options})
  target_compile_definitions(${target} PRIVATE _POSIX_C_SOURCE=200112L _DEFAULT_SOURCE)
  # setup.sh passes only a C++ launcher; give the C sources the same one.
  if(CMAKE_CXX_COMPILER_LAUNCHER AND NOT CMAKE_C_COMPILER_LAUNCHER)
    set_target_properties(${target} PROPERTIES C_COMPILER_LAUNCHER "${CMAKE_CXX_COMPILER_LAUNCHER}")
  endif()
endfunction()

add_library(qf_tree_sitter STATIC "${_qf_ts_lib}/src/lib.c")
target_include_directories(qf_tree_sitter PRIVATE "${_qf_ts_lib}/src")
target_include_directories(qf_tree_sitter SYSTEM PUBLIC "${_qf_ts_lib}/include")
_qf_ts_c_target(qf_tree_sitter)
set(QF_TREE_SITTER_FOUND TRUE)

# name  folder under node_modules (holding src/parser.c)
set(_qf_grammars
  python     tree-sitter-python
  javascript tree-sitter-javascript
  typescript tree-sitter-typescript/typescript
  tsx        tree-sitter-typescript/tsx
  c          tree-sitter-c
  cpp        tree-sitter-cpp
  go         tree-sitter-go
  rust       tree-sitter-rust
  java       tree-sitter-java)
set(_qf_grammar_sources "")
set(_qf_grammar_names "")
list(LENGTH _qf_grammars _n)
math(EXPR _last "${_n} - 1")
foreach(i RANGE 0 ${_last} 2)
  math(EXPR j "${i} + 1")
  list(GET _qf_grammars ${i} name)
  list(GET _qf_grammars ${j} folder)
  set(src "${QUICKFILL_GRAMMARS_DIR}/${folder}/src")
  if(NOT EXISTS "${src}/parser.c")
    message(STATUS "tree-sitter: grammar ${name} not installed (${src}/parser.c)")
    continue()
  endif()
  list(APPEND _qf_grammar_sources "${src}/parser.c")
  if(EXISTS "${src}/scanner.c")
    list(APPEND _qf_grammar_sources "${src}/scanner.c")
  endif()
  # Each grammar includes its own copy of tree_sitter/parser.h.
  set_property(SOURCE "${src}/parser.c" "${src}/scanner.c" APPEND PROPERTY INCLUDE_DIRECTORIES "${src}")
  list(APPEND QF_GRAMMAR_DEFINES "QF_GRAMMAR_${name}=1")
  list(APPEND _qf_grammar_names ${name})
endforeach()
if(_qf_grammar_sources)
  add_library(qf_grammars STATIC ${_qf_grammar_sources})
  _qf_ts_c_target(qf_grammars)
endif()
message(STATUS "tree-sitter: runtime from ${_qf_ts_lib}; grammars: ${_qf_grammar_names}")

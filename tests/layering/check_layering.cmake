# The direction of dependencies between source folders, checked on the
# #include lines (cmake -P; run by ctest as `layering`).
#
#   text/                nothing of the project (the bottom: UTF-8, line
#                        breaks, positions)
#   inference/core       nothing but itself
#   inference/backend    core (a backend never includes model/); only the
#                        selector (backend_select.*) and backend/cuda/ itself
#                        include backend/cuda/
#   inference/gguf       core
#   inference/tokenizer  core, gguf, text/
#   inference/sampling   core
#   inference/model      core, backend, gguf, tokenizer, sampling
#   inference/convert    core, backend, gguf, tokenizer, text/
#                        (of text/, only the folders whose list names "text")
#   inference/, lsp/, indexing/  text/ and themselves only: never server/,
#                        and never each other
#   server/<folder>/     one library per folder; what each may include of
#                        server/ and of the top-level folders is the table
#                        below (QF_SERVER_USES_* / QF_SERVER_TOP_*), the same
#                        order as server/CMakeLists.txt; a folder missing from
#                        the table is itself a violation. server/main.cpp (the
#                        executable) may use everything.
# Also: no weak symbols under inference/ (the CUDA backend is chosen by the
# selector, not by link order), no "../" includes, and qf_cuda does not link
# qf_inference (the library that holds the selector sits above it).
#
# Usage: cmake -DQF_SOURCE_DIR=<repo root> -P check_layering.cmake
# Prints each violation and "layering: N violation(s)"; fails when N > 0.
cmake_minimum_required(VERSION 3.25)

set(QF_LAYER_ALLOWED_core "core")
set(QF_LAYER_ALLOWED_backend "core;backend")
set(QF_LAYER_ALLOWED_gguf "core;gguf")
set(QF_LAYER_ALLOWED_tokenizer "core;gguf;tokenizer;text")
set(QF_LAYER_ALLOWED_sampling "core;sampling")
set(QF_LAYER_ALLOWED_model "core;backend;gguf;tokenizer;sampling;model")
set(QF_LAYER_ALLOWED_convert "core;backend;gguf;tokenizer;convert;text")
set(QF_LAYER_TOP_ALLOWED_text "text")
set(QF_LAYER_TOP_ALLOWED_inference "inference;text")
set(QF_LAYER_TOP_ALLOWED_lsp "lsp;text")
set(QF_LAYER_TOP_ALLOWED_indexing "indexing;text")

# server/: folder -> the server/ folders it may include ("completion/*" is
# every stage of the pipeline) and the top-level folders it may include.
set(QF_SERVER_FOLDERS net report completion_api completion_prompt completion_postprocess
    completion_decode completion_next_edit completion_pipeline remote routing core binding
    daemon http cli)
set(QF_SERVER_USES_net "")
set(QF_SERVER_TOP_net "")
set(QF_SERVER_USES_report "")
set(QF_SERVER_TOP_report "")
set(QF_SERVER_USES_completion_api "")
set(QF_SERVER_USES_completion_prompt "completion/api")
set(QF_SERVER_USES_completion_postprocess "completion/api")
set(QF_SERVER_USES_completion_decode "completion/api;completion/prompt;completion/postprocess")
set(QF_SERVER_USES_completion_next_edit "completion/api;completion/decode")
set(QF_SERVER_USES_completion_pipeline "completion/*")
foreach(stage api prompt postprocess decode next_edit pipeline)
  set(QF_SERVER_TOP_completion_${stage} "inference;indexing;text")
endforeach()
set(QF_SERVER_USES_remote "net;completion/api;completion/postprocess")
set(QF_SERVER_TOP_remote "indexing;text")
set(QF_SERVER_USES_routing "completion/*;net;remote")
set(QF_SERVER_TOP_routing "inference;indexing;text")
set(QF_SERVER_USES_core "completion/*;routing")
set(QF_SERVER_TOP_core "inference;indexing;text")
set(QF_SERVER_USES_binding "core;completion/*;report")
set(QF_SERVER_TOP_binding "inference;indexing;lsp;text")
set(QF_SERVER_USES_daemon "binding;core;completion/*")
set(QF_SERVER_TOP_daemon "inference;indexing;lsp;text")
set(QF_SERVER_USES_http "core;completion/*;report")
set(QF_SERVER_TOP_http "inference;indexing;text")
set(QF_SERVER_USES_cli "*")
set(QF_SERVER_TOP_cli "inference;indexing;lsp;text")

# Sets out_var to the table key of a path under server/ ("completion_decode",
# "core", ...) and its display name ("completion/decode"), or "" for a file at
# server/'s root.
function(qf_server_folder path out_key out_name)
  if(path MATCHES "^server/completion/([^/]+)/")
    set(${out_key} "completion_${CMAKE_MATCH_1}" PARENT_SCOPE)
    set(${out_name} "completion/${CMAKE_MATCH_1}" PARENT_SCOPE)
  elseif(path MATCHES "^server/([^/]+)/")
    set(${out_key} "${CMAKE_MATCH_1}" PARENT_SCOPE)
    set(${out_name} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  else()
    set(${out_key} "" PARENT_SCOPE)
    set(${out_name} "" PARENT_SCOPE)
  endif()
endfunction()

# Whether folder `name` matches one of the patterns ("completion/*", "*", or a
# folder name) in the list `patterns`.
function(qf_server_pattern_match name patterns out_var)
  set(hit FALSE)
  foreach(p IN LISTS patterns)
    if(p STREQUAL "*" OR p STREQUAL name OR (p STREQUAL "completion/*" AND name MATCHES "^completion/"))
      set(hit TRUE)
    endif()
  endforeach()
  set(${out_var} ${hit} PARENT_SCOPE)
endfunction()

# Appends "<file>: <message>" to the list named by out_var (in the caller).
function(qf_layering_check_file root rel out_var)
  set(found "${${out_var}}")
  string(REGEX MATCH "^[^/]+" top "${rel}")
  set(sub "")
  if(top STREQUAL "inference" AND rel MATCHES "^inference/([^/]+)/")
    set(sub "${CMAKE_MATCH_1}")
  endif()
  file(STRINGS "${root}/${rel}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\"")
      continue()
    endif()
    set(inc "${CMAKE_MATCH_1}")
    if(inc MATCHES "(^|/)\\.\\./")
      list(APPEND found "${rel}: includes \"${inc}\" (relative path: name the folder from the repository root)")
      continue()
    endif()
    if(NOT inc MATCHES "^(text|inference|lsp|indexing|server|tests|bench|tools|editors)/")
      continue()  # a file of the same folder or a third-party header
    endif()
    string(REGEX MATCH "^[^/]+" inc_top "${inc}")
    if(rel MATCHES "^server/")
      qf_server_folder("${rel}" key name)
      if(key STREQUAL "")
        continue()  # server/main.cpp, the executable, sits on everything
      endif()
      if(NOT key IN_LIST QF_SERVER_FOLDERS)
        list(APPEND found "${rel}: server/${name}/ is not in the layering table (tests/layering/check_layering.cmake)")
        continue()
      endif()
      if(inc MATCHES "^server/")
        qf_server_folder("${inc}" inc_key inc_name)
        qf_server_pattern_match("${inc_name}" "${QF_SERVER_USES_${key}}" ok)
        if(NOT inc_name STREQUAL name AND NOT ok)
          string(REPLACE ";" ", " uses "${QF_SERVER_USES_${key}}")
          if(uses STREQUAL "")
            set(uses "nothing")
          endif()
          list(APPEND found "${rel}: includes ${inc} (server/${name}/ may use of server/ only: ${uses})")
        endif()
      elseif(NOT inc_top IN_LIST QF_SERVER_TOP_${key})
        list(APPEND found "${rel}: includes ${inc} (server/${name}/ must not depend on ${inc_top}/)")
      endif()
      continue()
    endif()
    if(NOT inc_top IN_LIST QF_LAYER_TOP_ALLOWED_${top})
      list(APPEND found "${rel}: includes ${inc} (${top}/ must not depend on ${inc_top}/)")
      continue()
    endif()
    if(sub AND DEFINED QF_LAYER_ALLOWED_${sub} AND inc_top STREQUAL "text" AND NOT "text" IN_LIST QF_LAYER_ALLOWED_${sub})
      list(APPEND found "${rel}: includes ${inc} (inference/${sub}/ must not depend on text/)")
      continue()
    endif()
    if(sub AND DEFINED QF_LAYER_ALLOWED_${sub} AND inc MATCHES "^inference/([^/]+)/")
      set(inc_sub "${CMAKE_MATCH_1}")
      if(NOT inc_sub IN_LIST QF_LAYER_ALLOWED_${sub})
        list(APPEND found "${rel}: includes ${inc} (inference/${sub}/ must not depend on inference/${inc_sub}/)")
        continue()
      endif()
      if(inc MATCHES "^inference/backend/cuda/" AND NOT rel MATCHES "^inference/backend/(cuda/|backend_select\\.)")
        list(APPEND found "${rel}: includes ${inc} (only the selector and backend/cuda/ see the CUDA backend)")
        continue()
      endif()
    endif()
  endforeach()
  if(top STREQUAL "inference")
    file(STRINGS "${root}/${rel}" weak REGEX "__attribute__[ \t]*\\(\\([ \t]*weak|#[ \t]*pragma[ \t]+weak")
    if(weak)
      list(APPEND found "${rel}: defines a weak symbol (backends are chosen by backend_select.cpp)")
    endif()
  endif()
  set(${out_var} "${found}" PARENT_SCOPE)
endfunction()

# Sets out_var to the list of violations under root.
function(qf_layering_check root out_var)
  set(found "")
  file(GLOB_RECURSE files RELATIVE "${root}"
       "${root}/text/*" "${root}/inference/*" "${root}/lsp/*" "${root}/indexing/*" "${root}/server/*")
  list(FILTER files EXCLUDE REGEX "(^|/)node_modules/")  # grammar sources installed by npm
  list(SORT files)
  foreach(rel IN LISTS files)
    if(rel MATCHES "\\.(h|hh|hpp|c|cc|cpp|cu|cuh|inc)$")
      qf_layering_check_file("${root}" "${rel}" found)
    endif()
  endforeach()
  set(cuda_cmake "${root}/inference/backend/cuda/CMakeLists.txt")
  if(EXISTS "${cuda_cmake}")
    file(READ "${cuda_cmake}" text)
    if(text MATCHES "target_link_libraries\\([ \t\r\n]*qf_cuda[^)]*qf_inference")
      list(APPEND found "inference/backend/cuda/CMakeLists.txt: qf_cuda links qf_inference (it must depend on qf_backend only)")
    endif()
  endif()
  set(${out_var} "${found}" PARENT_SCOPE)
endfunction()

if(QF_SOURCE_DIR)
  qf_layering_check("${QF_SOURCE_DIR}" violations)
  list(LENGTH violations n)
  foreach(v IN LISTS violations)
    message("${v}")
  endforeach()
  message("layering: ${n} violation(s)")
  if(n GREATER 0)
    message(FATAL_ERROR "include direction broken (see tests/layering/check_layering.cmake)")
  endif()
endif()

# The direction of dependencies between source folders, checked on the
# #include lines (cmake -P; run by ctest as `layering`).
#
#   inference/core       nothing but itself
#   inference/backend    core (a backend never includes model/); only the
#                        selector (backend_select.*) and backend/cuda/ itself
#                        include backend/cuda/
#   inference/gguf       core
#   inference/tokenizer  core, gguf
#   inference/sampling   core
#   inference/model      core, backend, gguf, tokenizer, sampling
#   inference/convert    core, backend, gguf, tokenizer
#   inference/, lsp/, indexing/  never server/; inference/ never lsp/ or
#                        indexing/; lsp/ and indexing/ never inference/;
#                        indexing/ never lsp/ (lsp/ may use indexing/'s text
#                        helpers: UTF-8, line breaks)
#   server/completion/   nothing of server/ outside server/completion/ (the
#                        pipeline is below the LSP server; it may use inference/
#                        and indexing/)
#   server/net/          nothing of the project (the HTTP client; server/ uses it)
#   server/routing/      of server/ only server/completion/, server/net/ and
#                        server/remote/ (the router sits below the LSP server)
#   server/remote/       of server/, only server/net/ and server/completion/ (the
#                        remote completion sources sit below the LSP server)
#   server/http/         never lsp/, the LSP binding (server/lsp_server*,
#                        stdio_server, event_loop), server/daemon/ or server/cli/:
#                        the HTTP endpoint sits on the LSP-free core
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
set(QF_LAYER_ALLOWED_tokenizer "core;gguf;tokenizer")
set(QF_LAYER_ALLOWED_sampling "core;sampling")
set(QF_LAYER_ALLOWED_model "core;backend;gguf;tokenizer;sampling;model")
set(QF_LAYER_ALLOWED_convert "core;backend;gguf;tokenizer;convert")
set(QF_LAYER_TOP_ALLOWED_inference "inference")
set(QF_LAYER_TOP_ALLOWED_lsp "lsp;indexing")
set(QF_LAYER_TOP_ALLOWED_server "inference;lsp;indexing;server")
set(QF_LAYER_TOP_ALLOWED_indexing "indexing")

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
    if(NOT inc MATCHES "^(inference|lsp|indexing|server|tests|bench|tools|editors)/")
      continue()  # a file of the same folder or a third-party header
    endif()
    string(REGEX MATCH "^[^/]+" inc_top "${inc}")
    if(rel MATCHES "^server/net/" AND NOT inc MATCHES "^server/net/")
      list(APPEND found "${rel}: includes ${inc} (server/net/ must not depend on the rest of the project)")
      continue()
    endif()
    if(rel MATCHES "^server/remote/" AND inc MATCHES "^server/" AND NOT inc MATCHES "^server/(remote|net|completion)/")
      list(APPEND found "${rel}: includes ${inc} (server/remote/ may use only server/net/ and server/completion/)")
      continue()
    endif()
    if(rel MATCHES "^server/http/" AND inc MATCHES "^(lsp/|server/(lsp_server|stdio_server|event_loop|daemon/|cli/))")
      list(APPEND found "${rel}: includes ${inc} (server/http/ sits on the LSP-free core, not on the LSP binding)")
      continue()
    endif()
    if(rel MATCHES "^server/completion/" AND inc MATCHES "^server/" AND NOT inc MATCHES "^server/completion/")
      list(APPEND found "${rel}: includes ${inc} (server/completion/ must not depend on the rest of server/)")
      continue()
    endif()
    if(rel MATCHES "^server/routing/" AND inc MATCHES "^server/" AND NOT inc MATCHES "^server/(completion|net|remote|routing)/")
      list(APPEND found "${rel}: includes ${inc} (server/routing/ may use only server/completion/, net/ and remote/)")
      continue()
    endif()
    if(NOT inc_top IN_LIST QF_LAYER_TOP_ALLOWED_${top})
      list(APPEND found "${rel}: includes ${inc} (${top}/ must not depend on ${inc_top}/)")
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
       "${root}/inference/*" "${root}/lsp/*" "${root}/indexing/*" "${root}/server/net/*" "${root}/server/completion/*"
       "${root}/server/routing/*" "${root}/server/remote/*" "${root}/server/http/*")
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

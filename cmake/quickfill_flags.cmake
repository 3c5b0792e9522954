# Compiler flags shared by every target, warnings as errors for the project's
# own targets, and the per-file ISA flags that let SIMD kernels be compiled
# for AVX2/AVX-512 while the binary still runs on any x86-64 CPU (the kernel
# is chosen at run time by CPU detection).
add_compile_options(-Wall -Wextra -Wno-unused-parameter)

# QUICKFILL_WERROR: -Werror on every target defined in this source tree, once
# the whole tree is read (a deferred call at the end of the top
# CMakeLists.txt), except those marked QUICKFILL_THIRD_PARTY (the tree-sitter
# runtime and grammars, indexing/grammars/grammars.cmake): third-party code's
# warnings are not ours to fix. GoogleTest and the other libraries come from
# the system and are not compiled here. CUDA sources pass it to the host
# compiler only (-Xcompiler): nvcc's own -Werror takes a kind and means
# something else. scripts/setup.sh and the sanitizer presets turn it on
# (docs/testing.md); a build configured by hand keeps the option's default,
# OFF, so that a newer compiler's new warnings do not stop it.
function(quickfill_werror_targets dir)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    get_target_property(third_party ${t} QUICKFILL_THIRD_PARTY)
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$" AND NOT third_party)
      target_compile_options(${t} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:-Werror> $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Werror>)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    quickfill_werror_targets("${sub}")
  endforeach()
endfunction()
if(QUICKFILL_WERROR)
  cmake_language(DEFER DIRECTORY "${PROJECT_SOURCE_DIR}" CALL quickfill_werror_targets "${PROJECT_SOURCE_DIR}")
endif()
if(QUICKFILL_NATIVE)
  add_compile_options(-march=native)
endif()
# Fuzzing (tests/fuzz): libFuzzer needs clang. Every target gets coverage
# instrumentation and ASan+UBSan; only the fuzz executables link libFuzzer's
# main, so the test suite built in the same folder runs normally.
if(QUICKFILL_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "QUICKFILL_FUZZ=ON needs clang (libFuzzer): configure with "
                        "-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(QUICKFILL_TSAN)
    message(FATAL_ERROR "QUICKFILL_FUZZ=ON runs under ASan+UBSan and cannot be combined with QUICKFILL_TSAN")
  endif()
  set(QUICKFILL_ASAN ON)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
if(QUICKFILL_ASAN AND QUICKFILL_TSAN)
  message(FATAL_ERROR "QUICKFILL_ASAN and QUICKFILL_TSAN cannot be combined; use two build folders")
endif()
if(QUICKFILL_ASAN)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(QUICKFILL_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

set(QUICKFILL_AVX2_FLAGS -mavx2 -mfma -mf16c -mbmi2)
set(QUICKFILL_AVX512_FLAGS -mavx2 -mfma -mf16c -mbmi2 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni)

# quickfill_isa_flags(<sources...>): files named *_avx2.cpp / *_avx512.cpp get
# their ISA flags; everything else stays baseline x86-64.
function(quickfill_isa_flags)
  if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    return()
  endif()
  foreach(src IN LISTS ARGN)
    if(src MATCHES "_avx512\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${QUICKFILL_AVX512_FLAGS}")
    elseif(src MATCHES "_avx2\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${QUICKFILL_AVX2_FLAGS}")
    endif()
  endforeach()
endfunction()

# Included by ctest while it reads the test list, before any test folder's list
# (TEST_INCLUDE_FILES of tests/, after first_run_list.cmake, which names the
# test and benchmark executables). scripts/setup.sh builds the product only, so
# on the first ctest run after it these executables do not exist, and
# gtest_discover_tests can list an executable's tests only once it is built:
# the list would lack them (each would show as a failing <target>_NOT_BUILT).
# So on the first run, when one of them is missing, ctest builds them all here
# (target qf_test_targets) and then reads their lists; a stamp,
# tests/first_run.done in the build folder, records that this succeeded. After
# that, or when all exist, nothing is built here: rebuilding after a change
# stays `cmake --build build`, as before, and a test target added later shows as
# <target>_NOT_BUILT until it is built. -DQUICKFILL_TEST_FIRST_RUN_BUILD=OFF (the
# sanitizer presets: the TSan stage builds four targets on purpose) turns this
# off.
set(_qf_missing "")
foreach(_qf_exe IN LISTS QF_TEST_EXECUTABLES)
  if(NOT EXISTS "${_qf_exe}")
    list(APPEND _qf_missing "${_qf_exe}")
  endif()
endforeach()
set(_qf_stamp "${QF_BINARY_DIR}/tests/first_run.done")
if(_qf_missing AND QF_TEST_FIRST_RUN_BUILD AND NOT EXISTS "${_qf_stamp}")
  list(LENGTH _qf_missing _qf_n)
  list(LENGTH QF_TEST_EXECUTABLES _qf_all)
  message("ctest: first run: ${_qf_n} of ${_qf_all} test and benchmark executables are not built; "
                 "building them (cmake --build ${QF_BINARY_DIR} --target qf_test_targets)")
  string(TIMESTAMP _qf_t0 "%s")
  execute_process(COMMAND "${QF_CMAKE_COMMAND}" --build "${QF_BINARY_DIR}" --target qf_test_targets
                  RESULT_VARIABLE _qf_rc)
  string(TIMESTAMP _qf_t1 "%s")
  math(EXPR _qf_s "${_qf_t1} - ${_qf_t0}")
  if(_qf_rc EQUAL 0)
    message("ctest: first run: built the test and benchmark executables in ${_qf_s} s")
    file(TOUCH "${_qf_stamp}")
  else()
    message(WARNING "ctest: first run: building the test and benchmark executables failed (${_qf_rc}) after ${_qf_s} s; "
                    "the tests of each executable not built show as a failing <target>_NOT_BUILT")
  endif()
endif()

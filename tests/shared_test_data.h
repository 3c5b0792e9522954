// Where the shared test data (tiny models, tokenizer vocabularies; see
// ../shared/data/README.md) lives: $QUICKFILL_TEST_DATA when set and not
// empty, else the directory CMake configured (passed in by each test target as
// a compile definition). Tests skip cleanly when what they need is not there.
#pragma once

#include <cstdlib>
#include <string>

namespace qf::test {

inline std::string shared_test_data(const char* configured) {
  if (const char* env = std::getenv("QUICKFILL_TEST_DATA"); env && *env) return env;
  return configured;
}

}  // namespace qf::test

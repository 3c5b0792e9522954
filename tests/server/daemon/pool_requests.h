// Requests of the tests of the daemon's shared engine (test_engine_pool.cpp,
// test_daemon_load.cpp): a window's Python file with the cursor on an
// indented line, a keystroke there, and completion settings with which every
// keystroke reaches the (scripted) model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "server/completion/pipeline/provider_factory.h"
#include "server/daemon/engine_pool.h"

namespace {

using namespace qf::server;

// A Python file whose cursor line (k_line) is an indented empty line; `tag`
// makes each window's file different from the first line on.
inline std::string file_text(const std::string& tag, const std::string& typed) {
  std::string s = "# " + tag + "\nimport os\n\n";
  for (int i = 0; i < 8; ++i)
    s += "def " + tag + std::to_string(i) + "(self, x):\n    return self.g(x) + " + std::to_string(i) + "\n\n";
  s += "def main():\n    total = 0\n    " + typed + "\n    print(total)\n";
  return s;
}
constexpr int64_t k_line = 29;  // the line `    <typed>` in file_text

inline completion_request keystroke(const std::string& uri, const std::string& tag, const std::string& typed) {
  completion_request r;
  r.uri = uri;
  r.language_id = "python";
  r.text = file_text(tag, typed);
  r.cursor = {k_line, 4 + static_cast<int64_t>(typed.size())};
  r.explicit_trigger = true;
  r.received = clock::now();
  return r;
}

inline completion::completion_settings settings() {
  completion::completion_settings s;
  s.type_through = false;     // every keystroke reaches the model
  s.inflight_reuse = false;
  s.rebase_when_idle = false;
  s.sampling_explicit.candidates = 1;
  s.sampling_explicit.temperature = 0;
  s.max_tokens_explicit = 8;
  s.cache_slots = 3;          // the default: per window
  s.context_tokens = 1024;
  return s;
}

// Session `id`'s provider from `pool`, on the one model every test uses.
inline std::unique_ptr<completion_provider> acquire_session(daemon::engine_pool& pool, std::uint64_t id,
                                                            const completion::completion_settings& s) {
  provider_options o;
  o.model_path = "/models/one.gguf";
  o.completion = s;
  std::string err;
  auto p = pool.acquire(id, o, &err);
  EXPECT_TRUE(p) << err;
  return p;
}

}  // namespace

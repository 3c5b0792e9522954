// A test source kind, registered only in the routing tests' own registry:
// members `text` (the one suggestion), `fail` (a failure_kind name: every
// call throws source_failure of that kind), `sleepMs` (time a call takes),
// `promptTokens`, `completionTokens` (what its metrics report). Kind "test"
// counts as remote (audit lines, no memory check); "test-local" as local.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <boost/json.hpp>

#include "server/completion/api/source_failure.h"
#include "server/routing/source_registry.h"

namespace qf::server::routing::testing {

struct test_options {
  std::string text = "x";
  std::string fail;
  int sleep_ms = 0;
  std::int64_t prompt_tokens = 10;
  std::int64_t completion_tokens = 2;
};

class test_source final : public completion_provider {
 public:
  explicit test_source(test_options o) : o_(std::move(o)) {}
  completion_result complete(const completion_request& req, const cancel_token&) override {
    ++calls;
    if (o_.sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o_.sleep_ms));
    if (o_.fail == "unavailable") throw source_failure(failure_kind::unavailable, "test endpoint refused to connect");
    if (o_.fail == "timeout") throw source_failure(failure_kind::timeout, "test endpoint timed out");
    completion_result r;
    completion_candidate c;
    c.insert_text = o_.text;
    c.replace_begin = c.replace_end = req.cursor;
    r.items.push_back(c);
    r.metrics.tokens_evaluated = o_.prompt_tokens;
    r.metrics.tokens_generated = o_.completion_tokens;
    return r;
  }
  std::string describe() const override { return "test source " + o_.text; }
  inline static std::atomic<int> calls{0};

 private:
  test_options o_;
};

inline std::optional<test_options> parse_test(const boost::json::object& o, std::string* error) {
  test_options t;
  for (const auto& [k, v] : o) {
    if (k == "name" || k == "kind" || k == "quota") continue;
    if (k == "text" && v.is_string()) t.text = std::string(v.get_string());
    else if (k == "fail" && v.is_string()) t.fail = std::string(v.get_string());
    else if (k == "sleepMs" && v.is_int64()) t.sleep_ms = static_cast<int>(v.get_int64());
    else if (k == "promptTokens" && v.is_int64()) t.prompt_tokens = v.get_int64();
    else if (k == "completionTokens" && v.is_int64()) t.completion_tokens = v.get_int64();
    else {
      *error = "test kind: bad member " + std::string(k);
      return std::nullopt;
    }
  }
  return t;
}

inline std::unique_ptr<completion_provider> make_test(const test_options& o, std::string*) {
  return std::make_unique<test_source>(o);
}

// builtin kinds + "test" (remote-like) + "test-local".
inline const source_registry& test_kinds() {
  static const source_registry r = [] {
    source_registry k = builtin_kinds();
    k.add_kind<test_options>("test", parse_test, make_test);
    source_kind local;
    local.local = true;
    local.parse = [](const boost::json::object& o, const std::string&, std::string* e) -> std::optional<std::any> {
      auto v = parse_test(o, e);
      if (!v) return std::nullopt;
      return std::any(*v);
    };
    local.make = [](const std::any& a, const make_context&, std::string* e) {
      return make_test(std::any_cast<const test_options&>(a), e);
    };
    k.add("test-local", std::move(local));
    return k;
  }();
  return r;
}

}  // namespace qf::server::routing::testing

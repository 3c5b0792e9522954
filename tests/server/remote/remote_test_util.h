// Shared by the remote source's tests: requests, sources made from JSON, and
// a log capture that lets tests check what the source logged.
#pragma once

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <boost/json.hpp>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>

#include "server/completion/api/source_failure.h"
#include "server/remote/remote_source.h"

namespace qf::remote::testing {

using namespace std::chrono_literals;

inline server::completion_request make_request(std::string text, int64_t line, int64_t col,
                                               std::chrono::milliseconds budget, bool explicit_trigger = false,
                                               std::string uri = "file:///work/app/main.py") {
  server::completion_request r;
  r.uri = std::move(uri);
  r.version = 1;
  r.language_id = "python";
  r.text = std::move(text);
  r.cursor = {line, col};
  r.explicit_trigger = explicit_trigger;
  r.inline_request = true;
  r.received = server::clock::now();
  r.deadline = r.received + budget;
  return r;
}

inline std::unique_ptr<remote_source> make_source(const std::string& json_text) {
  std::string err;
  auto o = parse_remote_source(boost::json::parse(json_text).as_object(), &err);
  EXPECT_TRUE(o) << err;
  if (!o) return nullptr;
  auto p = make_remote_source(*o, &err);
  EXPECT_TRUE(p) << err;
  return std::unique_ptr<remote_source>(static_cast<remote_source*>(p.release()));
}

// The failure complete() threw ("" kind when it answered).
struct outcome {
  server::completion_result result;
  std::string kind;
  std::string message;
};
inline outcome run(remote_source& s, const server::completion_request& req, const cancel_token& cancel = {}) {
  outcome o;
  try {
    o.result = s.complete(req, cancel);
  } catch (const server::source_failure& f) {
    o.kind = server::failure_kind_name(f.kind());
    o.message = f.what();
  }
  return o;
}

// Everything logged through spdlog's default logger while it lives.
class log_capture {
 public:
  log_capture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(out_)) {
    logger_ = spdlog::default_logger();
    level_ = logger_->level();
    logger_->sinks().push_back(sink_);
    logger_->set_level(spdlog::level::trace);
  }
  ~log_capture() {
    auto& s = logger_->sinks();
    s.erase(std::remove(s.begin(), s.end(), sink_), s.end());
    logger_->set_level(level_);
  }
  std::string text() {
    logger_->flush();
    return out_.str();
  }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> logger_;
  spdlog::level::level_enum level_;
};

// A JSON string literal for nginx's configuration ("..." with \" and \\ escaped).
inline std::string nginx_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace qf::remote::testing

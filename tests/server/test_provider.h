// A test double of completion_provider for tests and the test-only server.
// It is never linked into the shipped binary.
//
// * A document whose text contains "BLOCK" makes complete() wait until its
//   cancel token is set (polling it, as a real engine does between layers),
//   so tests can hold a request queued or running for as long as they need.
//   "STUBBORN" ignores the token until the test releases it, which shows that
//   cancelled requests are answered while the worker is still busy.
// * "FAILING" makes complete() throw source_failure, as a remote source that
//   is down does.
// * Otherwise it returns one deterministic candidate: the identifier before
//   the cursor plus "_done", replacing that identifier (so range conversion
//   back to the client's encoding is visible).
// * Every call is announced through `notify` (the test server forwards it as
//   window/logMessage), which lets transcripts wait for "running" without
//   sleeping.
#pragma once

#include <atomic>
#include <cctype>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "text/lines.h"
#include "server/completion/api/completion_provider.h"
#include "server/completion/api/source_failure.h"

namespace qf::server::testing {

// Set by the test server's "test/release" notification: lets a STUBBORN job end.
inline std::atomic<bool> release_stubborn{false};

class test_provider final : public completion_provider {
 public:
  explicit test_provider(std::function<void(const std::string&)> notify) : notify_(std::move(notify)) {}

  completion_result complete(const completion_request& req, const cancel_token& cancel) override {
    say("running " + req.uri + " v" + std::to_string(req.version) + " " + std::to_string(req.cursor.line) + ":" +
        std::to_string(req.cursor.byte_col) + (req.explicit_trigger ? " explicit" : " automatic") +
        " context=" + std::to_string(req.context_docs.size()));
    completion_result out;
    const std::string_view text = req.text;
    if (text.find("STUBBORN") != std::string::npos) {
      // Ignores cancellation until released: the server must still answer
      // the cancelled request at once, from the dispatcher.
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!release_stubborn.load() && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      say(std::string("stubborn job released, cancelled=") + (cancel.is_cancelled() ? "yes" : "no"));
      return out;
    }
    if (text.find("FAILING") != std::string::npos)
      throw source_failure(failure_kind::unavailable, "test source is down");
    if (text.find("BLOCK") != std::string::npos) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!cancel.is_cancelled() && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return out;
    }
    // Find the cursor's byte offset and the identifier before it.
    const std::size_t line_start = text::line_start_offset(text, req.cursor.line);
    const std::size_t cursor = line_start + static_cast<std::size_t>(req.cursor.byte_col);
    std::size_t begin = cursor;
    while (begin > line_start && (std::isalnum(static_cast<unsigned char>(text[begin - 1])) || text[begin - 1] == '_'))
      --begin;
    completion_candidate c;
    c.insert_text = std::string(text.substr(begin, cursor - begin)) + "_done";
    c.replace_begin = text_pos{req.cursor.line, static_cast<int64_t>(begin - line_start)};
    c.replace_end = req.cursor;
    out.items.push_back(c);
    out.metrics.ttft_ms = 1;
    out.metrics.total_ms = 2;
    out.metrics.cache_hit = true;
    return out;
  }

  // One "prefix" part: the text before the cursor. In a "STUBBORN" document
  // it waits until the test releases it (explain() sees no cancel token), so
  // tests can cancel an explanation while it runs.
  std::optional<prompt_explanation> explain(const completion_request& req) override {
    say("explaining " + req.uri + " " + std::to_string(req.cursor.line) + ":" + std::to_string(req.cursor.byte_col));
    const std::string_view text = req.text;
    if (text.find("STUBBORN") != std::string::npos) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!release_stubborn.load() && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      say("stubborn explanation released");
    }
    const std::size_t cursor = text::line_start_offset(text, req.cursor.line) + static_cast<std::size_t>(req.cursor.byte_col);
    prompt_explanation e;
    e.format = "test";
    e.text = std::string(text.substr(0, cursor));
    e.tokens = static_cast<int64_t>(e.text.size());
    e.parts.push_back(prompt_part{"prefix", req.uri, e.text, e.tokens});
    return e;
  }

  // Next edits: "_next" appended to the cursor's line and "# end" put at the
  // start of the last non-empty line (when it is another line). A "BLOCK"
  // document waits for cancellation, as complete() does.
  next_edit_result next_edit(const next_edit_request& req, const cancel_token& cancel) override {
    say("next edit " + req.uri + " v" + std::to_string(req.version) + " " + std::to_string(req.cursor.line) + ":" +
        std::to_string(req.cursor.byte_col));
    next_edit_result out;
    out.format = "test";
    const std::string_view text = req.text;
    if (text.find("BLOCK") != std::string::npos) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!cancel.is_cancelled() && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return out;
    }
    const std::vector<std::string_view> lines = text::split_lines(text);
    const int64_t row = std::min<int64_t>(req.cursor.line, static_cast<int64_t>(lines.size()) - 1);
    const int64_t end_col = static_cast<int64_t>(text::strip_line_break(lines[row]).size());
    out.edits.push_back(next_edit_edit{{row, end_col}, {row, end_col}, "_next", true});
    int64_t last = static_cast<int64_t>(lines.size()) - 1;
    while (last > 0 && text::strip_line_break(lines[last]).empty()) --last;
    if (last != row) out.edits.push_back(next_edit_edit{{last, 0}, {last, 0}, "# end", false});
    return out;
  }

  bool background_step(const cancel_token& cancel) override {
    ++background_steps_;
    return false;
  }
  void document_closed(const std::string& uri) override { say("closed " + uri); }
  void configure(const completion::completion_settings& s) override {
    say("configured maxTokens=" + std::to_string(s.max_tokens_auto) + " maxTokensExplicit=" +
        std::to_string(s.max_tokens_explicit) + " cacheSlots=" + std::to_string(s.cache_slots));
  }
  std::string describe() const override { return "test double"; }

  std::atomic<int> background_steps_{0};

 private:
  void say(const std::string& what) {
    if (notify_) notify_("test-provider: " + what);
  }
  std::function<void(const std::string&)> notify_;
};

}  // namespace qf::server::testing

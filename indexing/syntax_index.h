// One incrementally updated syntax tree per open document, kept by a
// background thread so that no reply ever waits for a parse.
//
// The caller (the server, after the document store applied an event) reports
// opened / changed / closed with the store's snapshots; these only queue the
// event and return. The thread applies queued edits to each document's tree
// (ts_tree_edit with exact byte offsets and points, see syntax_edit.h),
// reparses once per batch, and publishes an immutable syntax_tree. Readers
// call latest(), which takes a mutex for a pointer copy and never waits for
// parsing: the tree it returns may be a few keystrokes old, and says which
// document version it belongs to.
//
// Documents without a grammar (syntax_language.h) are ignored: no tree, as
// before. A first parse that runs past its budget gives up on that document
// (no tree, logged) until it is reopened or shrinks below half the size at
// which it gave up, so a 10 MB single-line file costs one bounded attempt and
// then nothing per keystroke. An incremental reparse past the budget keeps
// the last published tree and is retried at the next edit; three in a row
// give up the same way.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "indexing/document.h"
#include "indexing/syntax_edit.h"

namespace qf::index {

class syntax_tree;

struct syntax_index_options {
  std::chrono::milliseconds parse_budget{1000};  // per parse
  std::size_t max_bytes = std::size_t(64) << 20;  // larger documents are not parsed
};

enum class syntax_state {
  none,      // not open, or no grammar for its language
  pending,   // queued or being parsed
  parsed,    // latest() holds the tree of the newest text
  gave_up,   // too large or too slow; no tree
};
const char* syntax_state_name(syntax_state s);

class syntax_index {
 public:
  using snapshot = std::shared_ptr<const document>;

  explicit syntax_index(syntax_index_options opts = {});
  ~syntax_index();
  syntax_index(const syntax_index&) = delete;
  syntax_index& operator=(const syntax_index&) = delete;

  // Events, in the order the store applied them; cheap, never parse.
  void opened(snapshot doc);
  // `before` and `after` are the store's snapshots around one didChange batch.
  void changed(snapshot before, snapshot after, const std::vector<text_change>& changes, text::position_encoding enc);
  void closed(const std::string& uri);

  // The newest published tree of `uri` (null when there is none). Never waits.
  std::shared_ptr<const syntax_tree> latest(const std::string& uri) const;
  syntax_state state(const std::string& uri) const;
  // Blocks until every event queued so far has been parsed (tests, benchmarks).
  void wait_idle();
  // True when this build parses anything at all.
  static bool available();

 private:
  struct event {
    enum kind_t { open, change, close } kind;
    std::string uri;
    std::uint64_t generation = 0;  // which open of `uri` it belongs to
    std::uint64_t seq = 0;         // its number among that open's events
    snapshot before;  // change
    snapshot after;   // open, change
    std::optional<change_hint> hint;
    text::position_encoding enc = text::position_encoding::utf16;
  };
  struct doc_state;

  void push(event e);  // with pub_mu_ held
  void run();
  void apply(const event& e);
  void parse_pending();
  void publish(const std::string& uri, const doc_state& d, std::shared_ptr<const syntax_tree> tree, syntax_state st);

  syntax_index_options opts_;
  std::mutex mu_;  // queue_, stop_, busy_, thread_
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<event> queue_;
  bool stop_ = false;
  bool busy_ = false;
  std::thread thread_;
  std::atomic<bool> cancel_{false};

  // The caller's view: documents with a grammar, and what was published for
  // them. Lock order: pub_mu_ before mu_.
  mutable std::mutex pub_mu_;
  struct published {
    std::uint64_t generation = 0;
    std::uint64_t queued_seq = 0;     // last event queued
    std::uint64_t published_seq = 0;  // last event included in `tree` / `state`
    std::shared_ptr<const syntax_tree> tree;
    syntax_state state = syntax_state::pending;
  };
  std::unordered_map<std::string, published> published_;
  std::uint64_t generations_ = 0;

  // Owned by the thread.
  std::unordered_map<std::string, std::unique_ptr<doc_state>> docs_;
};

}  // namespace qf::index

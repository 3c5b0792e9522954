// In-flight reuse: a generation the user is typing along with keeps running.
//
// While a completion decodes, it publishes the text produced so far in a
// generation_progress shared with the scheduler. When an edit inserts, at
// the request's cursor and on its line, characters that are a prefix of that
// text (the user types what the model is predicting), the running generation
// is still right: the scheduler answers the stale request at once (-32801, as
// for any edit) but keeps its work going, detached from it. When that work
// ends, its suggestion is remembered by type-through (type_through.h) for the
// text it was made for, and the next request, queued behind it, is answered
// from it (the typed characters dropped) without decoding again. An edit or a
// request the generation does not continue cancels it as before.
//
// continues_generation() is the one test both the edit and the request go
// through; it reads only text, so it is safe on any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace qf::server::completion {

class generation_progress {
 public:
  // Decoder thread: the text produced so far (stop rules applied).
  void publish(std::string_view text);
  // Any thread.
  std::string text() const;
  // Set by the scheduler when the work outlives its request; the pipeline
  // marks what it remembers from such work (stats: "kept" answers).
  void mark_detached() { detached_.store(true, std::memory_order_relaxed); }
  bool detached() const { return detached_.load(std::memory_order_relaxed); }

 private:
  mutable std::mutex mu_;
  std::string text_;
  std::atomic<bool> detached_{false};
};

// How many bytes were typed when `now` reads `before` with a non-empty prefix
// of `produced` inserted at byte offset `cursor`, on the cursor's line (no
// line break typed); nullopt otherwise.
std::optional<std::size_t> continues_generation(std::string_view before, std::size_t cursor,
                                                std::string_view produced, std::string_view now);

}  // namespace qf::server::completion

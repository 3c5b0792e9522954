// Recently edited and viewed chunks of documents: a small ring of text
// snippets around the places the user was, for the prompt's context block.
//
// The server calls touch() where the user is: the line of an edit (didChange),
// the cursor of a completion request, the start of an opened document. A
// touch takes the chunk of about `chunk_lines` lines centred on that line. A
// chunk whose lines mostly (`similarity`, the share of lines the two have in
// common) repeat a chunk already held replaces it, so the ring holds distinct
// places; otherwise it is added as the newest and the oldest goes once there
// are more than `max_chunks`. Touching inside a held chunk of the same
// document that still reads the same only refreshes its recency.
//
// Thread-safe: touched on the dispatcher thread, read on the completion worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace qf::index {

struct text_chunk {
  std::string uri;
  std::uint32_t first_line = 0;  // 0-based
  std::string text;              // whole lines with their line breaks
  std::uint64_t seq = 0;         // recency: larger is newer
};

struct recent_chunks_limits {
  std::size_t max_chunks = 16;
  std::size_t chunk_lines = 64;
  double similarity = 0.5;       // at or above: the same place
  std::size_t max_line_bytes = 512;  // longer lines are cut
};

// The share of lines two texts have in common (line multiset intersection
// over the larger line count; blank lines ignored), 0..1.
double line_similarity(std::string_view a, std::string_view b);

class recent_chunks {
 public:
  explicit recent_chunks(recent_chunks_limits limits = {});
  void touch(std::string_view uri, std::string_view text, std::int64_t line);
  void forget(std::string_view uri);
  // Newest first.
  std::vector<text_chunk> recent(std::size_t max = SIZE_MAX) const;
  std::size_t size() const;

 private:
  recent_chunks_limits limits_;
  mutable std::mutex mu_;
  std::vector<text_chunk> chunks_;  // oldest first
  std::uint64_t seq_ = 0;
};

}  // namespace qf::index

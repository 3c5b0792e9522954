// From a fill-in-the-middle request of the HTTP endpoint to the completion
// request the LSP path builds, and from its result back to an answer.
//
// The document is prefix + middle + suffix with the cursor after the middle;
// the input_extra chunks are its context documents (and nothing else: the
// endpoint's other buffers belong to other clients and are never context).
// The request is an automatic one (sent per keystroke: greedy, one
// candidate, the automatic post-processing rules) whose n_predict sets the
// token limit (up to completion.maxTokensExplicit), with the deadline its
// t_max_prompt_ms + t_max_predict_ms give, else the server's --deadline-ms.
//
// Buffers: llama.vim sends id_slot 0 from every editor, so the slot says
// nothing about who is typing. A request goes to the buffer (a KV cache
// key, completion_request::buffer_key) of the same API key whose last text
// its own continues: the two differ by one stretch of at most max_edit_bytes
// (the keystrokes typed while the previous request ran, a short line) at
// most max_edit_bytes from the cursor, found as the longest common prefix and suffix;
// of several, the one with the smallest edit. Otherwise it gets a fresh buffer,
// the least recently used one when all `capacity` are taken. A client typing
// on thus keeps reusing its own cache, as an editor's document does, while
// two clients in one file at different places (same beginning, different
// lines typed) keep theirs apart.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/completion/api/completion_provider.h"
#include "server/http/fim_api.h"

namespace qf::http {

class buffer_pool {
 public:
  explicit buffer_pool(std::size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  static constexpr std::size_t max_edit_bytes = 64;
  // The buffer key for the document `text` (the cursor at byte `cursor`) of
  // clients with `scope`.
  std::string choose(const std::string& scope, std::string_view text, std::size_t cursor);
  std::size_t size() const { return bufs_.size(); }
  std::size_t capacity() const { return capacity_; }

 private:
  struct buffer {
    std::string scope, key, text;
    std::uint64_t used = 0;
  };
  std::size_t capacity_;
  std::uint64_t tick_ = 0, made_ = 0;
  std::vector<buffer> bufs_;
};

// The completion request for `q` on buffer `key`; `deadline_ms` when the
// request gives no time limits.
server::completion_request make_completion_request(const fim_request& q, const std::string& key,
                                                   server::clock::time_point received, int deadline_ms);

// The best candidate as text inserted at the cursor, with the metrics.
fim_answer make_answer(const fim_request& q, const server::completion_request& req,
                       const server::completion_result& r, const std::string& model);

}  // namespace qf::http

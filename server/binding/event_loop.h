// The dispatcher thread's event loop: a Boost.Asio io_context behind a small
// interface, so that only event_loop.cpp compiles Asio. Every LSP message is
// handled, and every reply is produced, by functions posted here.
//
// Input from the client enters through post_input(), which bounds what is
// waiting: when the messages posted but not yet handled reach
// input_limits::max_messages, or adding one would pass max_bytes, the posting
// thread (the stdin reader) blocks until the loop has handled enough of them.
// The rest of the input then waits in the pipe, and a client that keeps
// writing is held up by its own full pipe: memory stays bounded however fast
// a client writes. Nothing is dropped or reordered -- every message,
// `$/cancelRequest` and `exit` included, is handled in arrival order once the
// loop reaches it, and the loop never waits for the reader, so this cannot
// deadlock. A message is admitted whenever nothing is waiting, however large
// (the transport's own size cap bounds one message). stop() releases a
// blocked poster. post() (internal events: worker results, progress) is not
// bounded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace qf::server {

struct input_limits {
  std::size_t max_messages = 256;          // messages waiting to be handled
  std::size_t max_bytes = std::size_t(32) << 20;  // their bodies together (32 MiB)
};

struct input_queue_stats {
  std::size_t waiting = 0, waiting_bytes = 0;  // now
  std::size_t peak = 0, peak_bytes = 0;        // most at any time
  std::uint64_t admitted = 0;                  // messages posted so far
  std::uint64_t blocked = 0;                   // times the poster had to wait
};

class event_loop {
 public:
  explicit event_loop(input_limits limits = {});
  ~event_loop();
  // Thread-safe; runs `fn` on the loop thread. Dropped after stop().
  void post(std::function<void()> fn);
  // Thread-safe; posts one input message of `bytes`, first waiting while the
  // input queue is full (see above). False once the loop was stopped (then
  // `fn` is dropped).
  bool post_input(std::function<void()> fn, std::size_t bytes);
  input_queue_stats input_stats() const;
  // Runs handlers until stop(); call from the loop thread.
  void run();
  void stop();
  // Runs ready handlers without blocking (tests).
  std::size_t poll();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace qf::server

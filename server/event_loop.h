// The dispatcher thread's event loop: a Boost.Asio io_context behind a small
// interface, so that only event_loop.cpp compiles Asio. Every LSP message is
// handled, and every reply is produced, by functions posted here.
#pragma once

#include <functional>
#include <memory>

namespace qf::server {

class event_loop {
 public:
  event_loop();
  ~event_loop();
  // Thread-safe; runs `fn` on the loop thread. Dropped after stop().
  void post(std::function<void()> fn);
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

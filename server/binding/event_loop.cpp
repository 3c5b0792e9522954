// Boost.Asio io_context wrapper with a bounded input queue (see event_loop.h).
#include "server/binding/event_loop.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

namespace qf::server {

struct event_loop::impl {
  explicit impl(input_limits l) : limits(l) {
    limits.max_messages = std::max<std::size_t>(limits.max_messages, 1);
  }
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{io.get_executor()};

  input_limits limits;
  mutable std::mutex mu;
  std::condition_variable room;  // signalled when an input was handled or the loop stopped
  bool stopped = false;
  input_queue_stats stats;

  bool fits(std::size_t bytes) const {
    return stats.waiting == 0 ||
           (stats.waiting < limits.max_messages && stats.waiting_bytes + bytes <= limits.max_bytes);
  }
  void handled(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu);
      --stats.waiting;
      stats.waiting_bytes -= bytes;
    }
    room.notify_all();
  }
};

event_loop::event_loop(input_limits limits) : impl_(std::make_unique<impl>(limits)) {}
event_loop::~event_loop() = default;

void event_loop::post(std::function<void()> fn) { boost::asio::post(impl_->io, std::move(fn)); }

bool event_loop::post_input(std::function<void()> fn, std::size_t bytes) {
  impl& m = *impl_;
  {
    std::unique_lock<std::mutex> lock(m.mu);
    if (!m.stopped && !m.fits(bytes)) {
      ++m.stats.blocked;
      m.room.wait(lock, [&] { return m.stopped || m.fits(bytes); });
    }
    if (m.stopped) return false;
    ++m.stats.waiting;
    m.stats.waiting_bytes += bytes;
    ++m.stats.admitted;
    m.stats.peak = std::max(m.stats.peak, m.stats.waiting);
    m.stats.peak_bytes = std::max(m.stats.peak_bytes, m.stats.waiting_bytes);
  }
  boost::asio::post(m.io, [&m, fn = std::move(fn), bytes] {
    // Counted as handled even when fn throws.
    struct done_guard {
      impl& m;
      std::size_t bytes;
      ~done_guard() { m.handled(bytes); }
    } guard{m, bytes};
    fn();
  });
  return true;
}

input_queue_stats event_loop::input_stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->stats;
}

void event_loop::run() { impl_->io.run(); }

void event_loop::stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopped = true;
  }
  impl_->room.notify_all();
  impl_->guard.reset();
  impl_->io.stop();
}

std::size_t event_loop::poll() {
  std::size_t n = impl_->io.poll();
  impl_->io.restart();
  return n;
}

}  // namespace qf::server

// Boost.Asio io_context wrapper (see event_loop.h).
#include "server/event_loop.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

namespace qf::server {

struct event_loop::impl {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{io.get_executor()};
};

event_loop::event_loop() : impl_(std::make_unique<impl>()) {}
event_loop::~event_loop() = default;

void event_loop::post(std::function<void()> fn) { boost::asio::post(impl_->io, std::move(fn)); }

void event_loop::run() { impl_->io.run(); }

void event_loop::stop() {
  impl_->guard.reset();
  impl_->io.stop();
}

std::size_t event_loop::poll() {
  std::size_t n = impl_->io.poll();
  impl_->io.restart();
  return n;
}

}  // namespace qf::server

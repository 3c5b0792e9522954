// Host name resolution that a request can walk away from.
//
// Design: getaddrinfo() cannot be cancelled, and Asio's async_resolve runs it
// on a thread that the io_context waits for (cancel() only takes effect once
// getaddrinfo returns, and destroying the context joins that thread), so a
// resolver that does not answer would hold a request past its deadline and
// past a cancellation. Here each lookup runs getaddrinfo (Asio's synchronous
// resolve) on a detached thread of its own; the requester waits on its own
// io_context for the answer, which is posted to it, and abandon() hands it
// operation_aborted at once instead: the thread finishes alone later and its
// answer is dropped. Requests for the same host and port while a lookup is
// still running join it rather than starting another thread, so a stalled
// resolver costs one thread per name, not one per request; and at most
// max_running_lookups names are looked up at once (a request past that is
// refused at once, which only happens when the resolver is stalled for many
// names). IP literals need no lookup: the caller resolves them itself.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace qf::net {

using lookup_results = boost::asio::ip::tcp::resolver::results_type;
using lookup_handler = std::function<void(const boost::system::error_code&, lookup_results)>;

constexpr std::size_t max_running_lookups = 16;

// One requester's wait for a lookup.
class pending_lookup {
 public:
  virtual ~pending_lookup() = default;
  // Stops waiting: unless the answer was already handed over, the handler is
  // posted now with operation_aborted. Safe to call more than once.
  virtual void abandon() = 0;
};

// Starts (or joins) the lookup of host:port; `done` is posted to `io` exactly
// once, with the answer or (after abandon()) operation_aborted. The caller
// keeps `io` alive until `done` ran. nullptr with *refused set when no lookup
// could be started (too many stalled ones, or no thread).
std::shared_ptr<pending_lookup> start_lookup(boost::asio::io_context& io, const std::string& host,
                                             const std::string& port, lookup_handler done, std::string* refused);

// Lookups whose getaddrinfo has not returned yet (abandoned ones included).
std::size_t running_lookups();

}  // namespace qf::net

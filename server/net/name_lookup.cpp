// Lookups on detached threads that requesters can walk away from (see name_lookup.h).
#include "server/net/name_lookup.h"

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace qf::net {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

struct lookup;

// One requester: where and what to post, once.
struct waiter final : pending_lookup, std::enable_shared_from_this<waiter> {
  asio::io_context* io = nullptr;
  lookup_handler done;
  std::shared_ptr<lookup> of;
  bool delivered = false;  // under the registry's mutex

  void abandon() override;
};

// One getaddrinfo on one thread, and who waits for it.
struct lookup {
  std::string key;
  std::vector<std::shared_ptr<waiter>> waiters;
};

struct registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<lookup>> running;
};

// Never destroyed: a detached thread may still use it while the process exits.
registry& the_registry() {
  static registry* r = new registry;
  return *r;
}

// Hands the answer to one waiter (the registry's mutex held).
void deliver(waiter& w, const boost::system::error_code& ec, const lookup_results& results) {
  w.delivered = true;
  asio::post(*w.io, [done = std::move(w.done), ec, results]() { done(ec, results); });
  w.io = nullptr;
  w.of.reset();
}

void waiter::abandon() {
  registry& reg = the_registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  if (delivered) return;
  if (of) {
    auto& ws = of->waiters;
    for (auto it = ws.begin(); it != ws.end(); ++it)
      if (it->get() == this) {
        ws.erase(it);
        break;
      }
  }
  deliver(*this, asio::error::operation_aborted, {});
}

void run_lookup(std::shared_ptr<lookup> lk, std::string host, std::string port) {
  boost::system::error_code ec;
  lookup_results results;
  {
    asio::io_context ctx;
    tcp::resolver r(ctx);
    results = r.resolve(host, port, ec);  // getaddrinfo on this thread
  }
  registry& reg = the_registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  auto it = reg.running.find(lk->key);
  if (it != reg.running.end() && it->second == lk) reg.running.erase(it);
  for (auto& w : lk->waiters) deliver(*w, ec, results);
  lk->waiters.clear();
}

}  // namespace

std::shared_ptr<pending_lookup> start_lookup(asio::io_context& io, const std::string& host, const std::string& port,
                                             lookup_handler done, std::string* refused) {
  registry& reg = the_registry();
  auto w = std::make_shared<waiter>();
  w->io = &io;
  w->done = std::move(done);
  std::lock_guard<std::mutex> lock(reg.mu);
  const std::string key = host + '\0' + port;
  if (auto it = reg.running.find(key); it != reg.running.end()) {
    w->of = it->second;
    it->second->waiters.push_back(w);
    return w;
  }
  if (reg.running.size() >= max_running_lookups) {
    if (refused)
      *refused = std::to_string(reg.running.size()) +
                 " host name lookups are still waiting for the system's resolver (is the DNS server answering?)";
    return nullptr;
  }
  auto lk = std::make_shared<lookup>();
  lk->key = key;
  lk->waiters.push_back(w);
  w->of = lk;
  try {
    std::thread(run_lookup, lk, host, port).detach();
  } catch (const std::system_error& e) {
    if (refused) *refused = std::string("cannot start a thread to look up the host name: ") + e.what();
    lk->waiters.clear();  // no cycle left behind: nothing will deliver to it
    w->of.reset();
    return nullptr;
  }
  reg.running.emplace(key, std::move(lk));
  return w;
}

std::size_t running_lookups() {
  registry& reg = the_registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  return reg.running.size();
}

}  // namespace qf::net

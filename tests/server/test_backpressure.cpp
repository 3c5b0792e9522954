// Backpressure between the stdin reader and the event loop: the input queue
// never holds more than its bounds while a producer floods it, every message
// is handled once and in order, a stop releases a blocked producer, and a
// whole server flooded with notifications by a client still answers, cancels
// and exits.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "lsp/transport.h"
#include "server/binding/event_loop.h"
#include "server/binding/lsp_server.h"
#include "server/binding/stdio_server.h"
#include "tests/server/test_provider.h"

using namespace qf::server;
using namespace std::chrono_literals;
namespace json = boost::json;

TEST(input_queue, a_flood_stays_within_the_bounds_and_keeps_its_order) {
  input_limits lim;
  lim.max_messages = 8;
  lim.max_bytes = 4096;
  event_loop loop(lim);
  constexpr int n = 3000;
  std::vector<int> seen;
  std::size_t worst = 0, worst_bytes = 0;
  std::thread producer([&] {
    for (int i = 0; i < n; ++i) {
      const std::size_t bytes = 100 + static_cast<std::size_t>(i % 7) * 100;  // 100..700
      ASSERT_TRUE(loop.post_input(
          [&, i] {
            const input_queue_stats st = loop.input_stats();
            worst = std::max(worst, st.waiting);
            worst_bytes = std::max(worst_bytes, st.waiting_bytes);
            seen.push_back(i);
            if (i % 50 == 0) std::this_thread::sleep_for(1ms);  // a slow consumer now and then
            if (i == n - 1) loop.stop();
          },
          bytes));
    }
  });
  loop.run();
  producer.join();
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(seen[static_cast<std::size_t>(i)], i);
  const input_queue_stats st = loop.input_stats();
  EXPECT_LE(st.peak, lim.max_messages);
  EXPECT_LE(st.peak_bytes, lim.max_bytes);
  EXPECT_LE(worst, lim.max_messages);
  EXPECT_LE(worst_bytes, lim.max_bytes);
  EXPECT_GT(st.blocked, 0u);  // the producer really was held back
  EXPECT_EQ(st.admitted, static_cast<std::uint64_t>(n));
}

TEST(input_queue, a_message_larger_than_the_byte_bound_passes_alone) {
  input_limits lim;
  lim.max_messages = 4;
  lim.max_bytes = 100;
  event_loop loop(lim);
  int ran = 0;
  ASSERT_TRUE(loop.post_input([&] { ++ran; }, 1000));  // nothing waiting: admitted
  std::atomic<bool> second_posted{false};
  std::thread t([&] {
    loop.post_input([&] { ++ran; }, 10);  // waits until the big one is handled
    second_posted = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(second_posted.load());
  while (!second_posted.load()) loop.poll();
  t.join();
  loop.poll();
  EXPECT_EQ(ran, 2);
}

TEST(input_queue, stop_releases_a_blocked_producer) {
  input_limits lim;
  lim.max_messages = 1;
  event_loop loop(lim);
  ASSERT_TRUE(loop.post_input([] {}, 1));
  std::atomic<int> result{-1};
  std::thread t([&] { result = loop.post_input([] {}, 1) ? 1 : 0; });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(result.load(), -1);  // blocked: the loop has not run
  loop.stop();
  t.join();
  EXPECT_EQ(result.load(), 0);
  EXPECT_FALSE(loop.post_input([] {}, 1));
}

namespace {

std::string frame(const json::value& v) { return qf::lsp::frame_message(json::serialize(v)); }

void write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

}  // namespace

TEST(stdio_backpressure, flooded_server_handles_everything_in_order_then_cancels_answers_and_exits) {
  int to_server[2], from_server[2];
  ASSERT_EQ(::pipe2(to_server, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(from_server, O_CLOEXEC), 0);

  stdio_options so;
  so.in_fd = to_server[0];
  so.out_fd = from_server[1];
  so.input.max_messages = 16;
  so.input.max_bytes = 32 * 1024;
  so.core.cli_model_path = "test-double";
  so.core.background = false;
  so.core.factory = [](const provider_options&, std::string*) {
    return std::make_unique<qf::server::testing::test_provider>([](const std::string&) {});
  };
  input_queue_stats stats;
  so.input_stats = &stats;

  constexpr int n_flood = 2000;
  std::vector<int> order;  // seq of each test/slow, as handled
  int exit_code = -1;
  std::thread server([&] {
    exit_code = run_stdio_server(std::move(so), [&](lsp_server& s) {
      s.add_notification("test/slow", [&](const json::value& p) {
        order.push_back(static_cast<int>(p.at("seq").as_int64()));
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      });
    });
    ::close(from_server[1]);
  });

  // The client: writes everything without waiting (its writes block when the pipe is full).
  std::thread client([&] {
    write_all(to_server[1], frame({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
                                   {"params", {{"processId", nullptr}, {"capabilities", json::object{}}}}}));
    write_all(to_server[1], frame({{"jsonrpc", "2.0"}, {"method", "initialized"}, {"params", json::object{}}}));
    write_all(to_server[1],
              frame({{"jsonrpc", "2.0"},
                     {"method", "textDocument/didOpen"},
                     {"params", {{"textDocument", {{"uri", "file:///a.c"}, {"languageId", "c"}, {"version", 1},
                                                   {"text", "BLOCK"}}}}}}));
    // A completion that blocks in the worker until cancelled.
    write_all(to_server[1], frame({{"jsonrpc", "2.0"}, {"id", 10}, {"method", "textDocument/completion"},
                                   {"params", {{"textDocument", {{"uri", "file:///a.c"}}},
                                               {"position", {{"line", 0}, {"character", 5}}}}}}));
    const std::string pad(1000, 'p');
    for (int i = 0; i < n_flood; ++i)
      write_all(to_server[1],
                frame({{"jsonrpc", "2.0"}, {"method", "test/slow"}, {"params", {{"seq", i}, {"pad", pad}}}}));
    write_all(to_server[1], frame({{"jsonrpc", "2.0"}, {"method", "$/cancelRequest"}, {"params", {{"id", 10}}}}));
    write_all(to_server[1], frame({{"jsonrpc", "2.0"}, {"id", 20}, {"method", "quickfill/status"}}));
    write_all(to_server[1], frame({{"jsonrpc", "2.0"}, {"id", 21}, {"method", "shutdown"}}));
    write_all(to_server[1], frame({{"jsonrpc", "2.0"}, {"method", "exit"}}));
  });

  std::map<int64_t, json::value> replies;
  std::vector<int64_t> reply_order;
  {
    qf::lsp::fd_reader out(from_server[0]);
    for (;;) {
      qf::lsp::read_result r = out.read_message();
      if (r.what != qf::lsp::read_result::kind::message) break;
      json::value v = json::parse(r.body);
      if (const json::value* id = v.as_object().if_contains("id"); id && id->is_int64() &&
                                                                 !v.as_object().contains("method")) {
        reply_order.push_back(id->as_int64());
        replies[id->as_int64()] = v;
      }
    }
  }
  client.join();
  server.join();
  ::close(to_server[0]);
  ::close(to_server[1]);
  ::close(from_server[0]);

  EXPECT_EQ(exit_code, 0);
  ASSERT_EQ(order.size(), static_cast<std::size_t>(n_flood));
  for (int i = 0; i < n_flood; ++i) ASSERT_EQ(order[static_cast<std::size_t>(i)], i);
  // The cancel came through behind the flood, and after it the status and shutdown answers.
  ASSERT_TRUE(replies.count(10));
  EXPECT_EQ(replies[10].at("error").at("code").as_int64(), -32800);
  ASSERT_TRUE(replies.count(20));
  EXPECT_TRUE(replies[20].as_object().contains("result"));
  ASSERT_TRUE(replies.count(21));
  EXPECT_TRUE(replies[21].at("result").is_null());
  EXPECT_EQ(reply_order, (std::vector<int64_t>{1, 10, 20, 21}));
  // Memory: never more than the bounds waiting, and the reader was held back.
  EXPECT_LE(stats.peak, 16u);
  EXPECT_LE(stats.peak_bytes, 32u * 1024u);
  EXPECT_GT(stats.blocked, 0u);
  EXPECT_GE(stats.admitted, static_cast<std::uint64_t>(n_flood + 7));
}

// Fuzz target: JSON-RPC classification and the LSP server's dispatch
// (lsp/jsonrpc, server/lsp_server), in process.
//
// The input is a session: frame bodies separated by the byte 0x1E (ASCII
// record separator, never valid inside JSON). Each input gets a fresh
// lsp_server whose completion provider is a small deterministic one defined
// here (it answers a candidate that replaces the word before the cursor, so
// positions are converted back to the client's encoding). After every message
// the worker is waited for and the event loop drained, so a session replays
// the same way each time. Oracles: classify() gives a consistent answer;
// every message the server sends is strict UTF-8 and a JSON-RPC 2.0 object;
// nothing else is checked about the answers (the server's tests do that).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "text/lines.h"
#include "lsp/jsonrpc.h"
#include "server/binding/event_loop.h"
#include "server/binding/lsp_server.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

namespace json = boost::json;
using qf::server::completion_candidate;
using qf::server::completion_request;
using qf::server::completion_result;
using qf::server::text_pos;

class fuzz_provider final : public qf::server::completion_provider {
 public:
  completion_result complete(const completion_request& req, const qf::cancel_token&) override {
    // The cursor line, found on the text with the one line-break definition
    // (text/lines.h), not through the server's line tables.
    const std::string_view text = req.text.view();
    std::size_t start = 0;
    for (std::int64_t l = 0; l < req.cursor.line; ++l) {
      const qf::text::line_break br = qf::text::find_line_break(text, start);
      if (br.len == 0) return {};
      start = br.pos + br.len;
    }
    const std::size_t cursor = start + static_cast<std::size_t>(req.cursor.byte_col);
    if (cursor > text.size()) return {};
    std::size_t begin = cursor;
    while (begin > start && static_cast<unsigned char>(text[begin - 1]) >= 0x80) --begin;
    completion_result out;
    completion_candidate c;
    c.insert_text = std::string(text.substr(begin, cursor - begin)) + "_x\xC3\xA9";
    c.replace_begin = text_pos{req.cursor.line, static_cast<std::int64_t>(begin - start)};
    c.replace_end = req.cursor;
    c.label = c.insert_text;
    c.filter_text = c.insert_text;
    out.items.push_back(std::move(c));
    return out;
  }
  std::string describe() const override { return "fuzz provider"; }
};

void check_outgoing(const std::string& body) {
  QF_FUZZ_CHECK(qf::fuzz::valid_utf8(body), body);
  boost::system::error_code ec;
  const json::value v = json::parse(body, ec);
  QF_FUZZ_CHECK(!ec, body);
  QF_FUZZ_CHECK(v.is_object(), body);
  const json::value* version = v.as_object().if_contains("jsonrpc");
  QF_FUZZ_CHECK(version && version->is_string() && version->as_string() == "2.0", body);
}

void check_classification(std::string_view body) {
  const qf::lsp::incoming m = qf::lsp::classify(body);
  using kind = qf::lsp::incoming::kind;
  switch (m.what) {
    case kind::request:
      QF_FUZZ_CHECK(m.id.is_string() || m.id.is_int64() || m.id.is_uint64(), body);
      break;
    case kind::notification:
      QF_FUZZ_CHECK(m.id.is_null(), body);
      break;
    case kind::response:
      break;
    case kind::invalid:
      QF_FUZZ_CHECK(!m.invalid_reason.empty(), body);
      break;
  }
  // The error response for an invalid message must itself be sendable.
  if (m.what == kind::invalid) check_outgoing(json::serialize(qf::lsp::make_error_response(m.id, m.invalid_code, m.invalid_reason)));
}

void wait_idle(qf::server::lsp_server& server, qf::server::event_loop& loop) {
  auto& worker = server.core().worker();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < give_up) {
    loop.poll();
    if (worker.queued() == 0 && !worker.busy()) {
      // What the worker posted before going idle is in the loop now.
      while (loop.poll() > 0) {
      }
      if (worker.queued() == 0 && !worker.busy()) return;
    }
    std::this_thread::yield();
  }
  qf::fuzz::fail("the worker never went idle");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  qf::server::event_loop loop;
  auto out = std::make_shared<qf::lsp::outbox>([](const std::string& body) { check_outgoing(body); });
  qf::server::core_options opts;
  opts.cli_model_path = "fuzz-provider";  // any path: the factory below ignores it
  opts.n_threads = 1;
  opts.background = false;
  opts.factory = [](const qf::server::provider_options&, std::string*) { return std::make_unique<fuzz_provider>(); };
  opts.workspace.cache_dir = "";  // a rootUri in an input must not write into the user's cache
  {
    qf::server::lsp_server server(std::move(opts), out, loop);
    server.set_exit_handler([](int) {});
    std::size_t start = 0;
    while (start <= input.size()) {
      std::size_t end = input.find('\x1e', start);
      if (end == std::string_view::npos) end = input.size();
      const std::string_view body = input.substr(start, end - start);
      check_classification(body);
      server.handle_message(body);
      wait_idle(server, loop);
      start = end + 1;
    }
    server.handle_end_of_input();
    wait_idle(server, loop);
    server.core().stop();
    while (loop.poll() > 0) {
    }
  }
  return 0;
}

// quickfill_test_server: the real LSP server (qf_lsp_binding) with the test-double
// provider injected instead of the model-backed one, so transcripts can hold
// requests queued or running. Test-only; never installed or shipped.
#include <csignal>
#include <cstdio>
#include <span>
#include <thread>

#include "server/core/server_args.h"
#include "server/core/logging.h"
#include "server/binding/lsp_server.h"
#include "server/binding/stdio_server.h"
#include "tests/server/test_provider.h"

namespace {
std::atomic<bool> hold_loads{false};
}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  qf::server::server_args opts;
  std::string error;
  if (!qf::server::parse_server_args(std::span<char*>(argv + 1, argc - 1), opts, &error)) {
    std::fprintf(stderr, "quickfill_test_server: %s\n", error.c_str());
    return 2;
  }
  if (!qf::server::setup_logging(opts.log_level, opts.log_file, &error)) return 2;
  auto server_ptr = std::make_shared<std::atomic<qf::server::lsp_server*>>(nullptr);
  qf::server::stdio_options so;
  so.core.cli_model_path = opts.model_path;
  so.core.cli_device = opts.device;
  so.core.background = opts.background;
  so.core.factory = [server_ptr](const qf::server::provider_options&, std::string*) {
    // test/hold-loads keeps model loads waiting until test/release-loads.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (hold_loads.load() && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return std::make_unique<qf::server::testing::test_provider>([server_ptr](const std::string& msg) {
      if (auto* s = server_ptr->load()) s->log_to_client(qf::lsp::message_type::log, msg);
    });
  };
  so.max_message_bytes = opts.max_message_bytes;
  so.core.documents.max_documents = opts.max_open_documents;
  so.core.documents.max_total_bytes = opts.max_document_bytes;
  return qf::server::run_stdio_server(std::move(so), [server_ptr](qf::server::lsp_server& s) {
    server_ptr->store(&s);
    s.add_notification("test/release", [](const boost::json::value&) {
      qf::server::testing::release_stubborn.store(true);
    });
    s.add_notification("test/hold-loads", [](const boost::json::value&) { hold_loads.store(true); });
    s.add_notification("test/release-loads", [](const boost::json::value&) { hold_loads.store(false); });
  });
}

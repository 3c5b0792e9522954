// stdin/stdout wiring of the LSP server (see stdio_server.h).
#include "server/binding/stdio_server.h"

#include <sys/socket.h>

#include <atomic>
#include <optional>
#include <thread>

#include <spdlog/spdlog.h>

#include "server/completion/pipeline/provider_factory.h"
#include "server/binding/event_loop.h"
#include "server/binding/lsp_server.h"
#include "server/core/server_args.h"
#include "server/core/settings.h"

namespace qf::server {

stdio_options stdio_options_of(const server_args& a) {
  stdio_options so;
  so.core.cli_model_path = a.model_path;
  so.core.cli_device = a.device;
  so.core.n_threads = a.threads;
  so.core.step_graphs = step_graphs_from_environment();
  so.core.background = a.background;
  so.core.factory = make_completion_provider;
  so.core.documents.max_documents = a.max_open_documents;
  so.core.documents.max_total_bytes = a.max_document_bytes;
  so.max_message_bytes = a.max_message_bytes;
  so.core.user_config_path = a.user_config;
  return so;
}

int run_stdio_server(stdio_options opts, const std::function<void(lsp_server&)>& on_ready) {
  event_loop loop(opts.input);
  lsp::fd_writer writer(opts.out_fd, opts.write_timeout_ms);
  // The one place that writes to stdout.
  auto out = std::make_shared<lsp::outbox>([&writer, fd = opts.out_fd, ms = opts.write_timeout_ms,
                                            dropped = std::make_shared<std::atomic<bool>>(false)](
                                               const std::string& body) {
    if (writer.write_message(body)) return;
    if (!writer.timed_out()) {
      spdlog::error("cannot write to the client (stdout closed)");
    } else if (!dropped->exchange(true)) {
      spdlog::warn("the client has read nothing for {:g} s; dropping it", ms / 1000.0);
      ::shutdown(fd, SHUT_RDWR);  // the reader sees the end: the session ends
    }
  });
  std::optional<lsp::fd_reader> own_reader;
  if (!opts.reader) own_reader.emplace(opts.in_fd, opts.max_message_bytes);
  lsp::fd_reader& reader = opts.reader ? *opts.reader : *own_reader;
  int exit_code = 1;
  {
    lsp_server server(std::move(opts.core), out, loop);
    server.set_exit_handler([&](int code) {
      exit_code = code;
      loop.stop();
    });
    if (on_ready) on_ready(server);
    for (std::string& body : opts.first_messages)
      loop.post([&server, body = std::move(body)] { server.handle_message(body); });

    // Every frame goes through the bounded input queue (event_loop.h): this
    // thread waits there while the dispatcher is behind, and stops once the
    // loop has stopped.
    std::thread reader_thread([&] {
      for (;;) {
        lsp::read_result r = reader.read_message();
        switch (r.what) {
          case lsp::read_result::kind::message: {
            const std::size_t bytes = r.body.size();
            if (!loop.post_input([&server, body = std::move(r.body)] { server.handle_message(body); }, bytes))
              return;
            continue;
          }
          case lsp::read_result::kind::too_large:
          case lsp::read_result::kind::bad_header:
          case lsp::read_result::kind::bad_body:
          case lsp::read_result::kind::skipped:
            if (!loop.post_input([&server, r] { server.handle_transport_problem(r); }, r.error.size())) return;
            continue;
          case lsp::read_result::kind::eof:
          case lsp::read_result::kind::io_error:
            if (!r.error.empty()) spdlog::warn("input: {}", r.error);
            loop.post_input([&server] { server.handle_end_of_input(); }, 0);
            return;
          case lsp::read_result::kind::interrupted:
            return;
        }
      }
    });
    loop.run();
    reader.interrupt();
    reader_thread.join();
    server.core().stop();
  }
  const input_queue_stats q = loop.input_stats();
  spdlog::info("input queue: {} message(s), at most {} ({} bytes) waiting, the reader waited {} time(s)", q.admitted,
               q.peak, q.peak_bytes, q.blocked);
  if (opts.input_stats) *opts.input_stats = q;
  spdlog::info("exiting with code {}", exit_code);
  spdlog::default_logger()->flush();
  return exit_code;
}

}  // namespace qf::server

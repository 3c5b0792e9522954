// Fuzz target: Content-Length framing (lsp/transport).
//
// The input is the byte stream a client sends. The first byte picks the body
// size limit (so oversized bodies are dropped often); the rest is read with
// fd_reader until the end of input. Oracles: the reader always makes progress
// and ends with eof, every message it returns is no longer than the limit and
// as long as it declared, and re-framing the messages with frame_message()
// and reading them back gives the same messages and nothing else.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lsp/transport.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using qf::lsp::read_result;

std::vector<std::string> read_all(const std::uint8_t* data, std::size_t size, std::size_t limit,
                                  bool check_progress) {
  qf::fuzz::memory_file f(data, size);
  if (::lseek(f.fd(), 0, SEEK_SET) != 0) qf::fuzz::fail("lseek");
  qf::lsp::fd_reader reader(f.fd(), limit);
  std::vector<std::string> messages;
  // Each call consumes at least one byte or ends, so size + 2 calls suffice.
  for (std::size_t calls = 0;; ++calls) {
    if (check_progress && calls > size + 2) qf::fuzz::fail("fd_reader does not make progress");
    read_result r = reader.read_message();
    if (r.what == read_result::kind::eof) break;
    QF_FUZZ_CHECK(r.what != read_result::kind::io_error, r.error);
    QF_FUZZ_CHECK(r.what != read_result::kind::interrupted, r.error);
    if (r.what == read_result::kind::message) {
      QF_FUZZ_CHECK(r.body.size() <= limit, r.error);
      QF_FUZZ_CHECK(r.body.size() == r.declared_length, r.body);
      messages.push_back(std::move(r.body));
    } else {
      QF_FUZZ_CHECK(!r.error.empty(), "a transport problem without a description");
    }
  }
  return messages;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // Limits from 0 to 255 bytes, or the default (64 MiB) for 255.
  const std::size_t limit = data[0] == 0xFF ? qf::lsp::default_max_message_bytes : data[0];
  const std::vector<std::string> messages = read_all(data + 1, size - 1, limit, true);

  std::string reframed;
  for (const std::string& m : messages) reframed += qf::lsp::frame_message(m);
  const auto* p = reinterpret_cast<const std::uint8_t*>(reframed.data());
  const std::vector<std::string> again = read_all(p, reframed.size(), qf::lsp::default_max_message_bytes, false);
  QF_FUZZ_CHECK(again == messages, reframed);
  return 0;
}

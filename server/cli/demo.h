// The parts of `quickfill demo`, which cmd_demo.cpp puts together: the
// command line and the sample text to type (demo_args.cpp), the LSP session
// with the child server (demo_session.cpp), the typing loop (demo_typing.cpp)
// and the summary (demo_summary.cpp). Everything is printed on stdout in the
// order a user watching the demo should see it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

#include "lsp/client/lsp_client.h"

namespace qf::cli::demo {

struct options {
  std::string model;
  std::string file;
  std::string log_file;
  std::size_t chars = 300;
  int interval_ms = 150;
  bool inline_mode = false;
};

extern const char* const usage;

// Parses args (args[0] is the subcommand). Throws std::runtime_error on a bad
// command line; returns false after printing the usage for --help.
bool parse_args(std::span<char*> args, options& o);

// The file to type and how much of it: the first `chars` whole UTF-8 characters.
struct sample {
  std::string content;
  std::size_t typed_bytes = 0;
  std::size_t typed_chars = 0;
};

// Fills o.file when empty (examples/sample.py next to the binary, then in the
// source tree) and reads it. False after a message on stderr.
bool load_sample(options& o, sample& s);

std::string language_of(const std::string& path);
std::size_t utf8_len(unsigned char lead);
// `s` with \n, \t and \r escaped, cut to `max` bytes with "...".
std::string printable(std::string s, std::size_t max);

// The child server and the conversation with it.
class session {
 public:
  // Starts `<this executable> --stdio`. False after a message on stderr.
  bool start(const options& o);
  // initialize (UTF-8 or UTF-16 positions, work-done progress), then initialized.
  bool initialize();
  // Polls quickfill/status until the model has loaded or failed, then says which.
  bool wait_for_model();

  std::int64_t request(std::string_view method, boost::json::value params) {
    return client_.request(method, std::move(params));
  }
  void notify(std::string_view method, boost::json::value params) { client_.notify(method, std::move(params)); }
  // The next message of any kind (nullopt after `timeout`).
  std::optional<boost::json::value> next(std::chrono::milliseconds timeout);
  // Waits for the response to `id`, printing notifications on the way and
  // keeping other responses for take_responses().
  std::optional<boost::json::value> await(std::int64_t id, std::chrono::milliseconds timeout);
  // Prints what a notification says (showMessage, progress); ignores the rest.
  void handle_notification(const boost::json::value& m);
  std::vector<boost::json::value> take_responses() { return std::exchange(responses_, {}); }

  struct ending {
    std::optional<boost::json::value> stats;  // the quickfill/stats response
    int exit_code = -1;
    bool timed_out = false;
  };
  // Asks for the stats, shuts the server down and waits for it to exit.
  ending finish();

  bool utf16() const { return encoding_ == "utf-16"; }
  bool have_model() const { return have_model_; }

 private:
  lsp::lsp_client client_;
  std::vector<boost::json::value> responses_;
  std::string encoding_;
  bool have_model_ = false;
};

struct tallies {
  std::vector<double> latencies;  // client side, answered requests
  std::size_t answered = 0, with_items = 0, modified = 0, other_cancel = 0, errors = 0;
};

// Opens the file without the part to type, types it one character per
// keystroke (didChange + a completion request each), printing every answer,
// and waits for the last answers.
tallies type_sample(session& s, const options& o, const sample& smp);

void print_summary(const tallies& t, std::size_t keystrokes, const session::ending& e, bool have_model);

}  // namespace qf::cli::demo

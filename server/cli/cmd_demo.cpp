// `quickfill demo`: drives the real server the way an editor does. It starts
// `quickfill --stdio` as a child process (the same binary), initializes it,
// opens a sample source file with its first N characters removed, and types
// those characters back one at a time: each keystroke is a didChange plus a
// textDocument/completion, and the next keystroke cancels a request still in
// flight (the server answers it with ContentModified). It prints every answer
// with its latency and ends with a summary. When no model could be loaded it
// says so plainly and shows the empty answers the server really sends.
// The parts are declared in demo.h.
#include <cstdio>
#include <exception>

#include "server/cli/commands.h"
#include "server/cli/demo.h"

namespace qf::cli {

int cmd_demo(std::span<char*> args) {
  demo::options opt;
  try {
    if (!demo::parse_args(args, opt)) return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickfill demo: %s\n%s", e.what(), demo::usage);
    return 2;
  }
  demo::sample sample;
  if (!demo::load_sample(opt, sample)) return 2;

  demo::session session;
  if (!session.start(opt) || !session.initialize() || !session.wait_for_model()) return 1;
  const demo::tallies t = demo::type_sample(session, opt, sample);
  const demo::session::ending end = session.finish();
  demo::print_summary(t, sample.typed_chars, end, session.have_model());
  return (end.exit_code == 0 && t.errors == 0) ? 0 : 1;
}

}  // namespace qf::cli

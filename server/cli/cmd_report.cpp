// `quickfill report --from-stats FILE [--out FILE.html]`: the dashboard page
// (server/report/report_html.h) from the JSON answer of a server's
// `quickfill/stats` request ("-" reads it from stdin). The JSON may be the
// bare result or the whole JSON-RPC response (with "result"). A running
// server renders the same page itself for the `quickfill/report` request,
// which is what the editors use.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include <boost/json.hpp>

#include "server/cli/cli_args.h"
#include "server/cli/cli_model.h"
#include "server/cli/commands.h"
#include "server/report/report_html.h"

namespace qf::cli {

int cmd_report(std::span<char*> args) {
  std::string from, out = "quickfill-report.html";
  arg_parser p("quickfill report",
               "Write the dashboard (latency histograms, percentiles over time, SLO burn) as one self-contained "
               "HTML page from the JSON of a quickfill/stats request.");
  p.add_string({"--from-stats"}, &from, "FILE: the stats JSON (\"-\": stdin)");
  p.add_string({"--out", "-o"}, &out, "FILE.html to write (default quickfill-report.html; \"-\": stdout)");
  if (!p.parse(args)) return p.exit_code();
  if (from.empty()) {
    std::fprintf(stderr, "quickfill report: --from-stats FILE is required (the JSON of a quickfill/stats request)\n");
    return 2;
  }
  std::string text;
  if (from == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else if (!read_text_file("quickfill report", from, text)) {
    return 1;
  }
  boost::system::error_code ec;
  boost::json::value stats = boost::json::parse(text, ec);
  if (ec) {
    std::fprintf(stderr, "quickfill report: %s is not JSON: %s\n", from.c_str(), ec.message().c_str());
    return 1;
  }
  if (stats.is_object() && stats.as_object().contains("result")) stats = stats.as_object()["result"];
  std::string error;
  const std::string html = server::report::render_report_html(stats, &error);
  if (html.empty()) {
    std::fprintf(stderr, "quickfill report: %s is not quickfill/stats output: %s\n", from.c_str(), error.c_str());
    return 1;
  }
  if (out == "-") {
    std::fwrite(html.data(), 1, html.size(), stdout);
    return 0;
  }
  std::ofstream o(out, std::ios::binary | std::ios::trunc);
  o << html;
  o.close();
  if (!o) {
    std::fprintf(stderr, "quickfill report: cannot write %s\n", out.c_str());
    return 1;
  }
  std::fprintf(stderr, "quickfill report: wrote %s (%zu bytes)\n", out.c_str(), html.size());
  return 0;
}

}  // namespace qf::cli

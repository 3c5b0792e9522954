// The `quickfill eval --html` page: the JSON of an eval run (cli/eval_report.h:
// {benchmark, network, runs: [{label, model, settings, summaries: [...]}]})
// drawn with the dashboard's style and plots (report_html.h, svg_plot.h): a
// table of every measure per run and trigger kind, and bar charts of pass@1,
// exact match, edit similarity and the shown share side by side.
#pragma once

#include <string>

#include <boost/json/value.hpp>

namespace qf::server::report {

// The page, or "" with *error naming the first member missing or of the wrong type.
std::string render_eval_html(const boost::json::value& eval, std::string* error);

}  // namespace qf::server::report

// The dashboard page: one self-contained HTML file (inline CSS, SVG drawn
// here, no scripts, fonts or links to fetch) rendered from the JSON answer of
// `quickfill/stats`. The one renderer behind `quickfill report` and the
// `quickfill/report` request that the editors show.
//
// Sections: the SLO (budget, target, compliance and burn rate over the last
// hour and day, burn per time slot), reply-time percentiles over time, per
// source and trigger kind the histograms of time to first token, total time,
// decode speed and cache reuse with their counts, then cancellations,
// acceptance and confidence. Every figure is printed from the JSON as it is
// (no re-aggregation besides the histograms' bucket labels), and the marks
// carry their values in data-value attributes.
#pragma once

#include <string>

#include <boost/json/value.hpp>

namespace qf::server::report {

// The page, or "" with *error naming the first member of `stats` that is
// missing or of the wrong type.
std::string render_report_html(const boost::json::value& stats, std::string* error);

// A self-contained page with the dashboard's style around `body` (also the
// `quickfill eval --html` page, eval_html.h).
std::string render_page(const std::string& title, const std::string& body);

}  // namespace qf::server::report

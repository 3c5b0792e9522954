// Small SVG plots drawn as text, for the self-contained dashboard page.
//
// Two kinds: a bar chart (one bar per labelled bucket, e.g. a histogram) and
// a line chart (several named series over shared x values, e.g. percentiles
// over time). Every mark carries its number in a data-value attribute and a
// <title>, and the bar chart prints each non-zero count above its bar, so a
// reader (or a test reading the DOM) can check the plot against the data it
// came from. Sizes are fixed; the page's CSS scales them.
#pragma once

#include <string>
#include <vector>

namespace qf::server::report {

std::string escape_html(const std::string& s);
std::string format_number(double v, int decimals);

struct bar_chart {
  std::string id;       // the <svg> element's id
  std::string title;    // shown above the bars
  std::string y_label;  // e.g. "requests"
  std::vector<std::string> labels;  // one per bar (x axis)
  std::vector<double> values;
  int decimals = 0;                 // of the printed values
  double reference = -1;            // a dashed horizontal line at this value (< 0: none)
  std::string reference_label;
};
std::string render(const bar_chart& c);

struct line_series {
  std::string name;
  std::string color;
  std::vector<double> values;  // one per x
};
struct line_chart {
  std::string id;
  std::string title;
  std::string y_label;
  std::vector<std::string> x_labels;  // one per x value
  std::vector<line_series> series;
  double reference = -1;              // a dashed horizontal line (< 0: none)
  std::string reference_label;
};
std::string render(const line_chart& c);

}  // namespace qf::server::report

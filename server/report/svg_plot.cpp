// SVG bar and line charts (see svg_plot.h).
#include "server/report/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace qf::server::report {

namespace {

constexpr double width = 640, height = 260;
constexpr double left = 56, right = 16, top = 44, bottom = 40;
constexpr double plot_w = width - left - right, plot_h = height - top - bottom;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A "nice" upper bound for the y axis: 1, 2 or 5 times a power of ten.
double nice_max(double v) {
  if (v <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= v) return m * p;
  return 10 * p;
}

// Decimals a tick value needs (a quarter of 1 is 0.25).
int tick_decimals(double v) {
  if (std::fabs(std::fmod(v, 1.0)) < 1e-9) return 0;
  return std::fabs(std::fmod(v * 10, 1.0)) < 1e-9 ? 1 : 2;
}

std::string frame(const std::string& id, const std::string& title, const std::string& y_label, double y_max,
                  int y_decimals) {
  std::string s = "<svg id=\"" + escape_html(id) + "\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
                  num(width) + " " + num(height) + "\" width=\"" + num(width) + "\" height=\"" + num(height) +
                  "\" role=\"img\" aria-label=\"" + escape_html(title) + "\">";
  s += "<text class=\"plot-title\" x=\"" + num(left) + "\" y=\"20\">" + escape_html(title) + "</text>";
  s += "<text class=\"axis-label\" x=\"12\" y=\"" + num(top + plot_h / 2) + "\" transform=\"rotate(-90 12 " +
       num(top + plot_h / 2) + ")\" text-anchor=\"middle\">" + escape_html(y_label) + "</text>";
  for (int i = 0; i <= 4; ++i) {
    const double v = y_max * i / 4, y = top + plot_h - plot_h * i / 4;
    s += "<line class=\"grid\" x1=\"" + num(left) + "\" x2=\"" + num(left + plot_w) + "\" y1=\"" + num(y) +
         "\" y2=\"" + num(y) + "\"/>";
    s += "<text class=\"tick\" x=\"" + num(left - 4) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\">" +
         format_number(v, std::max(y_decimals, tick_decimals(v))) + "</text>";
  }
  return s;
}

std::string reference_line(double ref, double y_max, const std::string& label) {
  if (ref < 0) return {};
  const double y = top + plot_h - plot_h * std::min(ref, y_max) / y_max;
  return "<line class=\"reference\" data-value=\"" + format_number(ref, 4) + "\" x1=\"" + num(left) + "\" x2=\"" +
         num(left + plot_w) + "\" y1=\"" + num(y) + "\" y2=\"" + num(y) + "\"/><text class=\"reference-label\" x=\"" +
         num(left + plot_w) + "\" y=\"" + num(y - 4) + "\" text-anchor=\"end\">" + escape_html(label) + "</text>";
}

// Labels of the x axis, thinned so that they do not overlap.
std::string x_labels(const std::vector<std::string>& labels, double step, double offset) {
  std::string s;
  const std::size_t every = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(labels.size() * 48.0 / plot_w)));
  for (std::size_t i = 0; i < labels.size(); i += every)
    s += "<text class=\"x-label\" x=\"" + num(left + offset + step * static_cast<double>(i)) + "\" y=\"" +
         num(top + plot_h + 16) + "\" text-anchor=\"middle\">" + escape_html(labels[i]) + "</text>";
  return s;
}

}  // namespace

std::string escape_html(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string format_number(double v, int decimals) {
  if (!std::isfinite(v)) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string render(const bar_chart& c) {
  double vmax = c.reference;
  for (double v : c.values) vmax = std::max(vmax, v);
  const double y_max = nice_max(vmax);
  std::string s = frame(c.id, c.title, c.y_label, y_max, c.decimals);
  const double step = c.values.empty() ? plot_w : plot_w / static_cast<double>(c.values.size());
  for (std::size_t i = 0; i < c.values.size(); ++i) {
    const double v = c.values[i], h = plot_h * v / y_max;
    const double x = left + step * static_cast<double>(i) + step * 0.1, y = top + plot_h - h;
    const std::string label = i < c.labels.size() ? c.labels[i] : "";
    const std::string shown = format_number(v, c.decimals);
    s += "<rect class=\"bar\" data-label=\"" + escape_html(label) + "\" data-value=\"" + shown + "\" x=\"" + num(x) +
         "\" y=\"" + num(y) + "\" width=\"" + num(step * 0.8) + "\" height=\"" + num(h) + "\"><title>" +
         escape_html(label) + ": " + shown + "</title></rect>";
    if (v != 0)
      s += "<text class=\"bar-value\" x=\"" + num(x + step * 0.4) + "\" y=\"" + num(y - 3) +
           "\" text-anchor=\"middle\">" + shown + "</text>";
  }
  s += reference_line(c.reference, y_max, c.reference_label);
  s += x_labels(c.labels, step, step / 2);
  return s + "</svg>";
}

std::string render(const line_chart& c) {
  double vmax = c.reference;
  for (const auto& se : c.series)
    for (double v : se.values) vmax = std::max(vmax, v);
  const double y_max = nice_max(vmax);
  std::string s = frame(c.id, c.title, c.y_label, y_max, 0);
  const std::size_t n = c.x_labels.size();
  const double step = n > 1 ? plot_w / static_cast<double>(n - 1) : 0, offset = n > 1 ? 0 : plot_w / 2;
  double legend_x = left;
  for (const auto& se : c.series) {  // one row under the title
    s += "<text class=\"legend\" x=\"" + num(legend_x) + "\" y=\"36\" style=\"fill:" + escape_html(se.color) +
         "\">\xE2\x80\x94 " + escape_html(se.name) + "</text>";
    legend_x += 56;
  }
  for (const auto& se : c.series) {
    std::string points, marks;
    for (std::size_t i = 0; i < se.values.size() && i < n; ++i) {
      const double x = left + offset + step * static_cast<double>(i), y = top + plot_h - plot_h * se.values[i] / y_max;
      if (!points.empty()) points += ' ';
      points += num(x);
      points += ',';
      points += num(y);
      const std::string shown = format_number(se.values[i], 0);
      marks += "<circle class=\"point\" data-series=\"" + escape_html(se.name) + "\" data-label=\"" +
               escape_html(c.x_labels[i]) + "\" data-value=\"" + shown + "\" cx=\"" + num(x) + "\" cy=\"" + num(y) +
               "\" r=\"3\" fill=\"" + escape_html(se.color) + "\"><title>" + escape_html(se.name) + " " +
               escape_html(c.x_labels[i]) + ": " + shown + "</title></circle>";
    }
    s += "<polyline class=\"series\" data-series=\"" + escape_html(se.name) + "\" fill=\"none\" stroke=\"" +
         escape_html(se.color) + "\" stroke-width=\"2\" points=\"" + points + "\"/>" + marks;
  }
  s += reference_line(c.reference, y_max, c.reference_label);
  s += x_labels(c.x_labels, step, offset);
  return s + "</svg>";
}

}  // namespace qf::server::report

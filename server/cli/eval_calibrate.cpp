// Gate calibration (see the header).
#include "server/cli/eval_calibrate.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>

#include <boost/json.hpp>

namespace qf::cli {

gate_calibration calibrate_gate(const std::vector<eval_record>& records, double keep, int min_good) {
  gate_calibration c;
  bool any_test = false;
  for (const eval_record& r : records) any_test = any_test || r.executed;
  c.basis = any_test ? "pass@1" : "exact match";
  std::vector<double> good, bad;
  for (const eval_record& r : records) {
    if (r.explicit_trigger || !r.suggested || !r.score) continue;
    ((any_test ? r.passed : r.exact) ? good : bad).push_back(*r.score);
  }
  c.good = static_cast<int>(good.size());
  c.bad = static_cast<int>(bad.size());
  if (c.good < min_good) {
    c.why = "only " + std::to_string(c.good) + " automatic suggestion(s) were good (" + c.basis + "); at least " +
            std::to_string(min_good) + " are needed to place the gate: run more tasks (--limit) or another benchmark";
    return c;
  }
  std::sort(good.begin(), good.end());
  const size_t need = static_cast<size_t>(std::ceil(keep * static_cast<double>(good.size()) - 1e-9));
  c.threshold = std::clamp(good[good.size() - need], -100.0, 0.0);
  for (double s : good) c.good_kept += s >= c.threshold;
  for (double s : bad) c.bad_dropped += s < c.threshold;
  c.ok = true;
  return c;
}

std::string gate_file_json(const gate_calibration& c, const std::string& model_path, const std::string& benchmark,
                           int tasks) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(model_path, ec);
  char when[32] = "";
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  boost::json::object o{{"minConfidence", c.threshold},
                        {"modelBytes", ec ? 0 : static_cast<std::uint64_t>(bytes)},
                        {"measuredOn", benchmark},
                        {"tasks", tasks},
                        {"basis", c.basis},
                        {"goodSuggestions", c.good},
                        {"goodKept", c.good_kept},
                        {"otherSuggestions", c.bad},
                        {"otherDropped", c.bad_dropped},
                        {"written", when},
                        {"by", "quickfill eval --calibrate"}};
  return boost::json::serialize(o) + "\n";
}

}  // namespace qf::cli

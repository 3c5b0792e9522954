// Exact match, edit similarity, percentiles (see the header).
#include "server/cli/eval_score.h"

#include <algorithm>
#include <cmath>

#include "server/cli/eval_oracle.h"

namespace qf::cli {
namespace {

std::string normalised(std::string_view s) {
  std::string o = rstrip_lines(std::string(s));
  while (!o.empty() && (o.back() == '\n' || o.back() == '\r')) o.pop_back();
  return o;
}

}  // namespace

bool exact_match(std::string_view got, std::string_view truth) { return normalised(got) == normalised(truth); }

double edit_similarity(std::string_view got, std::string_view truth) {
  return byte_similarity(normalised(got), normalised(truth));
}

double byte_similarity(std::string_view a, std::string_view b) {
  if (a.empty() && b.empty()) return 1.0;
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return 1.0 - static_cast<double>(row[b.size()]) / static_cast<double>(std::max(a.size(), b.size()));
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank > 0 ? rank - 1 : 0)];
}

}  // namespace qf::cli

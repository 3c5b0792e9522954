// `quickfill eval --calibrate`: the confidence gate of automatic triggers
// for one model, from its scores on an eval run.
//
// The good suggestions are the automatic triggers' non-empty suggestions
// that pass their test (tasks with a test) or match the truth exactly
// (repository points). The threshold is the highest score that keeps at
// least `keep` (0.9) of them: with the good scores sorted ascending,
// s[n - ceil(keep * n)]. The file next to the model (completion/gate_file.h)
// records it with what it was measured on, and what it does to the
// suggestions that are not good.
#pragma once

#include <string>
#include <vector>

#include "server/cli/eval_runner.h"

namespace qf::cli {

struct gate_calibration {
  bool ok = false;
  std::string why;          // when not ok: too few good suggestions
  std::string basis;        // "pass@1" or "exact match"
  double threshold = -100;
  int good = 0, good_kept = 0;
  int bad = 0, bad_dropped = 0;  // suggestions that are not good, and those the threshold drops
};

gate_calibration calibrate_gate(const std::vector<eval_record>& records, double keep = 0.9, int min_good = 5);

// The gate file's JSON: minConfidence, modelBytes and how it was measured.
std::string gate_file_json(const gate_calibration& c, const std::string& model_path, const std::string& benchmark,
                           int tasks);

}  // namespace qf::cli

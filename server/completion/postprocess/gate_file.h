// The confidence gate per model: which threshold applies to a request and
// where it came from.
//
// `quickfill eval --calibrate` measures, for one model, the threshold that
// keeps at least 90 % of the suggestions that pass their tests (or match the
// truth) and writes it next to the model as `<model>.gate.json` (a private
// file: indexing/private_file.h). The provider factory reads it when it loads
// the model; a file written for another file of that name (its recorded size
// differs) is not used. The gate of automatic triggers is then, in order: the
// `completion.minConfidence` setting when the user set it, the calibrated
// value, the built-in default. Explicit invocations keep their setting (off
// by default). explain() reports the choice ("setting", "calibrated PATH",
// "default").
#pragma once

#include <optional>
#include <string>

#include "server/completion/api/settings.h"

namespace qf::server::completion {

struct calibrated_gate {
  double threshold = 0;  // minimum mean token log-probability shown
  std::string path;      // the file it was read from
};

struct gate_choice {
  double threshold = -100;
  std::string origin;  // "setting", "calibrated PATH", "default"
};

// `<model_path>.gate.json`.
std::string gate_file_path(const std::string& model_path);

// The calibrated gate of a model; nullopt when there is no file (*why empty)
// or it cannot be used (*why says why: unreadable, not ours, malformed, made
// for a model file of another size).
std::optional<calibrated_gate> read_gate_file(const std::string& model_path, std::string* why);

// Writes `json_text` (an object with "minConfidence" and "modelBytes") as the
// model's gate file; false with *error.
bool write_gate_file(const std::string& model_path, const std::string& json_text, std::string* error);

// The gate a request class gets (see above).
gate_choice resolve_gate(const completion_settings& s, bool explicit_trigger,
                         const std::optional<calibrated_gate>& calibrated);

}  // namespace qf::server::completion

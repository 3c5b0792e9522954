// Where the model comes from: --model, else the "model" setting (either may be
// the name of a pulled model, see model_store.h; the setting may not be a
// relative path: resolve_model_setting), else the
// default embedded model `quickfill-tiny-code.gguf` looked up next to the
// installed binary (<exe dir>/../share/quickfill/models/) and then in the
// source tree's models/ folder (QUICKFILL_SOURCE_DIR).
#pragma once

#include <string>
#include <vector>

namespace qf::server {

inline constexpr const char* default_model_name = "quickfill-tiny-code.gguf";

struct model_choice {
  std::string path;    // "" when nothing was found
  std::string source;  // "--model", "setting", "default"
  std::vector<std::string> searched;  // default locations tried, for messages
  std::string error;                  // why the setting's model was refused ("" when it was not)
};

std::string executable_dir();
model_choice choose_model(const std::string& cli_path, const std::string& setting_path);

}  // namespace qf::server

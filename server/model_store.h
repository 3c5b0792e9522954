// The folder of pulled models and the names in it. `quickfill model pull`
// installs NAME.gguf there; `--model NAME` and the `model` setting accept NAME
// (or NAME.gguf) for a file there. The folder is $XDG_DATA_HOME/quickfill/models,
// or ~/.local/share/quickfill/models when XDG_DATA_HOME is unset or not absolute
// (the XDG base directory rule); $QUICKFILL_MODELS_DIR overrides both.
#pragma once

#include <string>

namespace qf::server {

// The models folder ("" when neither XDG_DATA_HOME nor HOME is usable). Not created.
std::string models_dir();

// True when `name` can only be a pulled model's name, not a path: no '/', not
// empty, not "." or "..".
bool is_model_name(const std::string& name);

// The file a model argument means: the argument itself when it names an
// existing file or is not a model name, else models_dir()/NAME.gguf (or
// models_dir()/NAME when NAME already ends in .gguf) when that exists;
// otherwise the argument unchanged (its load then fails with its own name).
std::string resolve_model_argument(const std::string& arg);

}  // namespace qf::server

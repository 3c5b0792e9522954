// The folder of pulled models and the names in it. `quickfill model pull`
// installs NAME.gguf there; `--model NAME`, the `model` and
// `completion.draftModel` settings and a local source's `model` accept NAME
// (or NAME.gguf) for a file there, and a name is never looked up elsewhere. The folder is $XDG_DATA_HOME/quickfill/models,
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

// The file a model argument means. A path (it contains '/') is used as given.
// A model name is looked up ONLY in the models folder, never in the working
// directory (which, for an editor, is often an untrusted repository):
// models_dir()/NAME.gguf, or models_dir()/NAME when NAME already ends in
// .gguf, whether or not it exists (a missing one then fails to load with that
// path in the message); "" when there is no models folder.
std::string resolve_model_argument(const std::string& arg);

// A model named by a setting (`model`, `completion.draftModel`, a local
// source's `model`): a name as above, an absolute path, or a path starting
// with `~/` (the home folder). A relative path is refused ("" with *error):
// the server's working directory is the editor's, often the repository, and
// the daemon's is /.
std::string resolve_model_setting(const std::string& arg, std::string* error);

}  // namespace qf::server

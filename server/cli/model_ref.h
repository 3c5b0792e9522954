// What `quickfill model pull REF` fetches: REF is an http(s) URL, or a Hugging
// Face file `owner/repo:path/file.gguf` with an optional `@revision` (branch,
// tag or commit; default main), which becomes
// <endpoint>/owner/repo/resolve/<revision>/path/file.gguf. The endpoint is
// https://huggingface.co, or $HF_ENDPOINT (a mirror) when set. The installed
// name is the file name without `.gguf` unless the caller gives one.
#pragma once

#include <optional>
#include <string>

namespace qf::cli {

struct model_ref {
  std::string url;
  std::string name;          // the models-folder name, without .gguf
  bool hugging_face = false;  // an owner/repo:file reference
  std::string repo;           // owner/repo (hugging_face only)
};

// Parses REF; nullopt with *error set when it is neither form. `endpoint` is
// the Hugging Face base URL (no trailing slash).
std::optional<model_ref> parse_model_ref(const std::string& ref, const std::string& endpoint, std::string* error);

// https://huggingface.co, or $HF_ENDPOINT without a trailing '/'.
std::string hugging_face_endpoint();

// True when `name` is usable as a file name in the models folder.
bool valid_model_name(const std::string& name);

}  // namespace qf::cli

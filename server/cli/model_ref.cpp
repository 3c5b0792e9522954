// Parsing of `quickfill model pull` references (see model_ref.h).
#include "server/cli/model_ref.h"

#include <cctype>
#include <cstdlib>

namespace qf::cli {

namespace {

bool repo_part_ok(const std::string& s) {
  if (s.empty() || s == "." || s == "..") return false;
  for (unsigned char c : s)
    if (!std::isalnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

// Percent-encodes what is not unreserved in a path (keeps '/').
std::string encode_path(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string strip_gguf(const std::string& file) {
  std::string base = file.substr(file.rfind('/') + 1);
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".gguf") == 0) base.resize(base.size() - 5);
  return base;
}

bool fail(std::string* error, const std::string& msg) {
  if (error) *error = msg;
  return false;
}

}  // namespace

bool valid_model_name(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name[0] == '.' || name.size() > 200) return false;
  for (unsigned char c : name)
    if (c < 0x20 || c == '/' || c == 0x7f) return false;
  return true;
}

std::string hugging_face_endpoint() {
  std::string e = "https://huggingface.co";
  if (const char* env = std::getenv("HF_ENDPOINT"); env && *env) e = env;
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

std::optional<model_ref> parse_model_ref(const std::string& ref, const std::string& endpoint, std::string* error) {
  model_ref r;
  if (ref.rfind("https://", 0) == 0 || ref.rfind("http://", 0) == 0) {
    r.url = ref;
    std::string path = ref.substr(0, ref.find_first_of("?#"));
    r.name = strip_gguf(path);
    if (!valid_model_name(r.name)) {
      fail(error, "cannot take a model name from the URL '" + ref + "' (give one with --name NAME)");
      return std::nullopt;
    }
    return r;
  }
  const size_t colon = ref.find(':');
  const std::string usage = "expected an https:// URL or a Hugging Face file owner/repo:file.gguf[@revision], got '" +
                            ref + "'";
  if (colon == std::string::npos) return fail(error, usage), std::nullopt;
  const std::string repo = ref.substr(0, colon);
  std::string file = ref.substr(colon + 1);
  std::string revision = "main";
  if (size_t at = file.rfind('@'); at != std::string::npos) {
    revision = file.substr(at + 1);
    file.resize(at);
    if (revision.empty() || revision.find_first_of("/?#% ") != std::string::npos)
      return fail(error, "bad revision in '" + ref + "'"), std::nullopt;
  }
  const size_t slash = repo.find('/');
  if (slash == std::string::npos || !repo_part_ok(repo.substr(0, slash)) || !repo_part_ok(repo.substr(slash + 1)))
    return fail(error, usage), std::nullopt;
  if (file.empty() || file.front() == '/' || file.back() == '/' || file.find("..") != std::string::npos)
    return fail(error, "bad file name in '" + ref + "'"), std::nullopt;
  r.hugging_face = true;
  r.repo = repo;
  r.url = endpoint + "/" + repo + "/resolve/" + encode_path(revision) + "/" + encode_path(file);
  r.name = strip_gguf(file);
  if (!valid_model_name(r.name)) return fail(error, "bad file name in '" + ref + "'"), std::nullopt;
  return r;
}

}  // namespace qf::cli

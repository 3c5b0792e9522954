// weight_loader (see weights.h): every tensor is looked up by its llama.cpp
// name and checked for presence, dimension count, shape and type before its
// bytes (in the GGUF file's in-memory copy) go to the backend.
#include "inference/model/weights.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "inference/gguf/gguf.h"
#include "inference/model/model.h"

namespace qf::infer {

namespace {
std::string shape_str(const std::vector<int64_t>& ne) {
  std::string s = "{";
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "}";
}

const gguf::tensor_info& require(const gguf::file& f, const std::string& name) {
  const gguf::tensor_info* t = f.find_tensor(name);
  if (!t) throw model_error("missing tensor '" + name + "' in " + f.path());
  return *t;
}

void check_shape(const gguf::tensor_info& t, const std::vector<int64_t>& want) {
  std::vector<int64_t> ne = t.ne;
  while (ne.size() > want.size() && ne.back() == 1) ne.pop_back();  // trailing 1s are padding
  if (ne != want)
    throw model_error("tensor '" + t.name + "' has shape " + shape_str(t.ne) + ", expected " + shape_str(want));
}
}  // namespace

bool weight_loader::has(const std::string& name) const { return f_.find_tensor(name) != nullptr; }

void weight_loader::require_all_used(const std::string& arch) const {
  for (const auto& t : f_.tensors())
    if (!used_.count(t.name))
      throw model_error("unexpected tensor '" + t.name + "' in " + f_.path() + ": the " + arch +
                        " architecture has no such tensor (a different or modified model?)");
}

weight_ptr weight_loader::matrix(const std::string& name, int64_t rows, int64_t cols) {
  const gguf::tensor_info& t = require(f_, name);
  used_.insert(name);
  check_shape(t, {cols, rows});
  if (!be_.supports_weight_type(t.type))
    throw model_error("tensor '" + name + "' has type " + std::string(traits(t.type).name) + ", which the " +
                      be_.name() + " backend does not support");
  if (check_only_) return nullptr;
  bytes_ += t.n_bytes;
  n_params_ += t.n_elements();
  std::string type_name(traits(t.type).name);
  for (char& ch : type_name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  bytes_by_type_[type_name] += t.n_bytes;  // "Q8_0", as llama.cpp prints types
  weight_ptr w = be_.upload_weight(t.type, rows, cols, f_.tensor_data(t));
  if (w->owns_copy()) f_.release_tensor(t);  // its pages would be held twice
  return w;
}

buffer_ptr weight_loader::vector(const std::string& name, int64_t n) {
  const gguf::tensor_info& t = require(f_, name);
  used_.insert(name);
  check_shape(t, {n});
  if (t.type != ggml_type::f32 && t.type != ggml_type::f16 && t.type != ggml_type::bf16)
    throw model_error("tensor '" + name + "' has type " + std::string(traits(t.type).name) +
                      "; vectors must be F32, F16 or BF16");
  if (check_only_) return nullptr;
  std::vector<float> v(static_cast<size_t>(n));
  const uint8_t* d = f_.tensor_data(t);
  for (int64_t i = 0; i < n; ++i) {
    if (t.type == ggml_type::f32) {
      std::memcpy(&v[i], d + i * 4, 4);
    } else if (t.type == ggml_type::f16 || t.type == ggml_type::bf16) {
      uint16_t h;
      std::memcpy(&h, d + i * 2, 2);
      v[i] = t.type == ggml_type::f16 ? fp16_to_f32(h) : bf16_to_f32(h);
    } else {
      throw model_error("tensor '" + name + "' has type " + std::string(traits(t.type).name) +
                        "; vectors must be F32, F16 or BF16");
    }
  }
  bytes_ += t.n_bytes;
  n_params_ += n;
  buffer_ptr b = be_.alloc(v.size() * sizeof(float));
  be_.upload(*b, 0, v.data(), v.size() * sizeof(float));
  return b;
}

std::string weight_loader::type_summary() const {
  std::vector<std::pair<size_t, std::string>> v;
  for (const auto& [name, b] : bytes_by_type_) v.emplace_back(b, name);
  std::sort(v.rbegin(), v.rend());
  if (v.empty()) return "?";
  // A minor type under 10 % of the bytes (e.g. F32 norms) does not count as a mix.
  std::string s = v[0].second;
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i].first * 10 >= v[0].first) s += "/" + v[i].second;
  return s;
}

}  // namespace qf::infer

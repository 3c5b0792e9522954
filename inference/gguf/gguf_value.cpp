// Accessors of gguf::value and of tensor_info: conversions between the stored
// variant and the kinds callers ask for, never throwing.
#include <limits>

#include "inference/gguf/gguf.h"

namespace qf::infer::gguf {

std::optional<int64_t> value::as_int() const {
  if (const auto* u = std::get_if<uint64_t>(&v)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  return std::nullopt;
}

std::optional<double> value::as_float() const {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<bool> value::as_bool() const {
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  return std::nullopt;
}

const std::string* value::as_string() const { return std::get_if<std::string>(&v); }

const value::array_t* value::as_array() const { return std::get_if<array_t>(&v); }

int64_t tensor_info::n_elements() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;  // checked against overflow when the file was read
  return n;
}

int64_t tensor_info::n_rows() const {
  int64_t n = 1;
  for (size_t i = 1; i < ne.size(); ++i) n *= ne[i];
  return n;
}

}  // namespace qf::infer::gguf

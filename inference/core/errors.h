// The engine's error for a request it cannot serve: a model file that does
// not describe a usable model (unknown architecture, missing or misshapen
// tensor) or a device that does not exist or is unavailable. Defined here,
// below backend/ and model/, so that the backend selector and the model
// loader throw the same type (gguf::gguf_error, inference/gguf/gguf.h, is the
// separate error for a malformed file).
#pragma once

#include <stdexcept>

namespace qf::infer {

class model_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace qf::infer

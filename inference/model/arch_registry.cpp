// The architectures this engine runs, by their general.architecture name.
#include "inference/model/architecture.h"

namespace qf::infer {

namespace {
const architecture* const k_all[] = {&llama_architecture(), &qwen2_architecture(), &qwen3_architecture(),
                                     &starcoder2_architecture(), &gemma_architecture(), &granite_architecture()};
}

const architecture* find_architecture(std::string_view name) {
  for (const architecture* a : k_all)
    if (a->name() == name) return a;
  return nullptr;
}

std::string supported_architectures() {
  std::string s;
  for (const architecture* a : k_all) s += (s.empty() ? "" : ", ") + std::string(a->name());
  return s;
}

}  // namespace qf::infer

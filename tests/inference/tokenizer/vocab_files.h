// Shared helpers of the tokenizer tests: locating ../shared/data/vocab, reading the
// llama.cpp-style .inp/.out vector files, and caching loaded vocabularies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inference/tokenizer/tokenizer.h"

namespace qf::infer::test {

// Folder holding ggml-vocab-*.gguf, or nullopt when the shared data is absent.
std::optional<std::string> vocab_dir();

struct vector_case {
  std::string text;
  std::vector<int32_t> ids;
};
// Reads NAME.gguf.inp / .out: strings separated by "\n__ggml_vocab_test__\n" (the
// newline before each separator ends the line, it is not part of the string) and one
// line of ids per string. Throws std::runtime_error on unreadable or mismatched files.
std::vector<vector_case> read_vectors(const std::string& dir, const std::string& name);

// Loads (once per process) ggml-vocab-NAME.gguf; nullptr when absent.
const tokenizer* load_vocab(const std::string& name);

// A test name for vocabulary NAME (GoogleTest allows no '-'): "llama-bpe" -> "llama_bpe";
// for INSTANTIATE_TEST_SUITE_P over vocabulary names.
inline std::string vocab_test_name(std::string name) {
  for (char& ch : name)
    if (ch == '-') ch = '_';
  return name;
}

}  // namespace qf::infer::test

// tokenizer::from_gguf: collects tokenizer.ggml.* metadata into vocab_data. Integer ids
// out of the int32 range are ignored (treated as absent), arrays of the wrong element
// type are errors naming the key.
#include <climits>

#include "inference/tokenizer/tokenizer.h"

namespace qf::infer {

namespace {

int32_t id_key(const gguf::file& f, std::string_view key) {
  auto v = f.get_int(key);
  if (!v || *v < 0 || *v > INT32_MAX) return -1;
  return static_cast<int32_t>(*v);
}

}  // namespace

std::unique_ptr<tokenizer> tokenizer::from_gguf(const gguf::file& f) {
  vocab_data v;
  auto model = f.get_string("tokenizer.ggml.model");
  if (!model) throw gguf::gguf_error("tokenizer.ggml.model is missing: the file carries no tokenizer");
  v.model = *model;
  v.pre = f.get_string("tokenizer.ggml.pre").value_or("");

  auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  if (!tokens) throw gguf::gguf_error("tokenizer.ggml.tokens is missing or not an array of strings");
  v.tokens = std::move(*tokens);

  if (f.find("tokenizer.ggml.scores")) {
    auto scores = f.get_float_array("tokenizer.ggml.scores");
    if (!scores) throw gguf::gguf_error("tokenizer.ggml.scores is not an array of floats");
    v.scores = std::move(*scores);
  }
  if (f.find("tokenizer.ggml.token_type")) {
    auto types = f.get_int_array("tokenizer.ggml.token_type");
    if (!types) throw gguf::gguf_error("tokenizer.ggml.token_type is not an array of integers");
    v.types.reserve(types->size());
    for (int64_t t : *types) v.types.push_back(t >= 0 && t <= 6 ? static_cast<int32_t>(t) : 1);
  }
  if (f.find("tokenizer.ggml.merges")) {
    auto merges = f.get_string_array("tokenizer.ggml.merges");
    if (!merges) throw gguf::gguf_error("tokenizer.ggml.merges is not an array of strings");
    v.merges = std::move(*merges);
  }

  special_tokens& s = v.special;
  s.bos = id_key(f, "tokenizer.ggml.bos_token_id");
  s.eos = id_key(f, "tokenizer.ggml.eos_token_id");
  s.eot = id_key(f, "tokenizer.ggml.eot_token_id");
  s.pad = id_key(f, "tokenizer.ggml.padding_token_id");
  v.unk = id_key(f, "tokenizer.ggml.unknown_token_id");
  s.fim_pre = id_key(f, "tokenizer.ggml.fim_pre_token_id");
  s.fim_suf = id_key(f, "tokenizer.ggml.fim_suf_token_id");
  s.fim_mid = id_key(f, "tokenizer.ggml.fim_mid_token_id");
  s.fim_pad = id_key(f, "tokenizer.ggml.fim_pad_token_id");
  s.fim_rep = id_key(f, "tokenizer.ggml.fim_rep_token_id");
  s.fim_sep = id_key(f, "tokenizer.ggml.fim_sep_token_id");
  // Older key names (CodeLlama conversions).
  if (s.fim_pre < 0) s.fim_pre = id_key(f, "tokenizer.ggml.prefix_token_id");
  if (s.fim_suf < 0) s.fim_suf = id_key(f, "tokenizer.ggml.suffix_token_id");
  if (s.fim_mid < 0) s.fim_mid = id_key(f, "tokenizer.ggml.middle_token_id");

  v.add_bos = f.get_bool("tokenizer.ggml.add_bos_token");
  v.add_eos = f.get_bool("tokenizer.ggml.add_eos_token");
  v.add_space_prefix = f.get_bool("tokenizer.ggml.add_space_prefix");
  return from_vocab(std::move(v));
}

}  // namespace qf::infer

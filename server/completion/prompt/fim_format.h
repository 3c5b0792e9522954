// Fill-in-the-middle prompt formats.
//
// The special ids come from the model's GGUF metadata (through lm_specials);
// where the metadata lacks them, the token texts of the known code-model
// families (Qwen2.5-Coder and Qwen3, StarCoder2, CodeGemma, DeepSeek-Coder,
// CodeLlama: the one table of completion/api/fim_families.h) are looked up in
// the vocabulary. A model with none of them completes from the prefix only.
// `order` says whether the suffix comes before the prefix (SPM, as CodeLlama
// was also trained) or after it (PSM, the common default).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/completion/api/fim_families.h"
#include "server/completion/api/lm.h"

namespace qf::server::completion {

struct fim_format {
  std::string family;  // a fim_families() name, "gguf" (the metadata's ids alone) or "none"
  bool has_fim = false;
  fim_order order = fim_order::psm;
  int32_t pre = -1, suf = -1, mid = -1, pad = -1;
  int32_t repo = -1, file_sep = -1;  // repo-level context markers (both or neither used)
  int32_t bos = -1;                  // prepended when the tokenizer adds BOS
  std::vector<int32_t> stop_ids;     // generation ends at any of these (never printed)
  bool repo_level() const { return repo >= 0 && file_sep >= 0; }
};

// Detects the format from specials + vocabulary. `prefer_spm` selects SPM for
// a family that supports both orders.
fim_format detect_fim_format(const lm_vocab& vocab, bool prefer_spm = false);

}  // namespace qf::server::completion

// llama.cpp's token type ids as stored in tokenizer.ggml.token_type.
#pragma once

#include <cstdint>

namespace qf::infer::convert {

enum token_type : int32_t {
  tt_normal = 1,
  tt_unknown = 2,
  tt_control = 3,
  tt_user_defined = 4,
  tt_unused = 5,
  tt_byte = 6,
};

// general.file_type values (llama.cpp's llama_ftype) for the types we write.
enum file_type : uint32_t {
  ft_all_f32 = 0,
  ft_mostly_f16 = 1,
  ft_mostly_q4_0 = 2,
  ft_mostly_q8_0 = 7,
  ft_mostly_q4_k_s = 14,
  ft_mostly_q4_k_m = 15,
  ft_mostly_q6_k = 18,
  ft_mostly_bf16 = 32,
};

}  // namespace qf::infer::convert

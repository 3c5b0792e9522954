#include "inference/backend/cpu/kernels.h"
namespace qf::infer::cpu::detail {
void fill_avx512_kernels(kernel_table& t) { fill_avx512_float_kernels(t); }
}

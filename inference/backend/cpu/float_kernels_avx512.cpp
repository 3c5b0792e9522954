#include "inference/backend/cpu/kernels.h"
namespace qf::infer::cpu::detail {
void fill_avx512_float_kernels(kernel_table&) {}
}

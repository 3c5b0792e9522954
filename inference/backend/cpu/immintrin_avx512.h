// <immintrin.h> for the files compiled with AVX-512 flags. GCC 12 reports the
// self-initialized __Y of its own _mm512_undefined_* helpers, used inside
// many intrinsics, as uninitialized wherever they are inlined. The pragmas
// cover the intrinsics' header only, so the including file's code stays
// checked: include this before anything else that includes <immintrin.h>.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

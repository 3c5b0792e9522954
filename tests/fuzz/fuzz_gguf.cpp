// Fuzz target: GGUF open and model load from the same bytes
// (inference/gguf reader, inference/model loader, CPU backend).
//
// The input is a whole GGUF file, served from memory. Oracles:
// * gguf::file::open either throws gguf_error or returns a file whose every
//   tensor is as large as its type and shape say and lies inside the file,
//   and whose metadata can be read through every accessor;
// * model::load on the CPU backend either throws model_error or gguf_error,
//   or returns a model whose tokenizer and hyperparameters are usable.
//   Any other exception (bad_alloc, length_error, ...) escapes and counts as
//   a crash: a malformed file must get a clear error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "inference/core/ggml_types.h"
#include "inference/gguf/gguf.h"
#include "inference/model/model.h"
#include "inference/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

namespace gguf = qf::infer::gguf;

void touch_value(const gguf::value& v, int depth) {
  (void)v.as_int();
  (void)v.as_float();
  (void)v.as_bool();
  if (const std::string* s = v.as_string()) (void)s->size();
  if (const auto* a = v.as_array()) {
    QF_FUZZ_CHECK(depth < 64, "metadata arrays nested deeper than the reader should allow");
    for (std::size_t i = 0; i < a->size(); ++i) {
      const gguf::value item = a->at(i);
      QF_FUZZ_CHECK(item.type == a->elem_type(), "array element of another type than the array says");
      touch_value(item, depth + 1);
    }
  }
}

void check_file(const gguf::file& f, std::size_t file_size) {
  for (const auto& [key, v] : f.metadata()) {
    touch_value(v, 0);
    QF_FUZZ_CHECK(f.find(key) != nullptr, key);
    (void)f.get_string_array(key);
    (void)f.get_float_array(key);
    (void)f.get_int_array(key);
  }
  // The data section may start past the end when no tensor has bytes (vocab-only
  // files end without the padding), so only the tensors themselves are checked.
  for (const gguf::tensor_info& t : f.tensors()) {
    QF_FUZZ_CHECK(!t.ne.empty(), t.name);
    const auto row = qf::infer::row_size(t.type, t.ne[0]);
    QF_FUZZ_CHECK(row.has_value(), t.name);
    unsigned __int128 bytes = *row;
    for (std::size_t i = 1; i < t.ne.size(); ++i) {
      QF_FUZZ_CHECK(t.ne[i] >= 0, t.name);
      bytes *= static_cast<std::uint64_t>(t.ne[i]);
      QF_FUZZ_CHECK(bytes <= file_size, t.name);
    }
    QF_FUZZ_CHECK(bytes == t.n_bytes, t.name);
    const unsigned __int128 end = static_cast<unsigned __int128>(f.data_offset()) + t.offset + t.n_bytes;
    QF_FUZZ_CHECK(end <= file_size, t.name);
    QF_FUZZ_CHECK(f.find_tensor(t.name) != nullptr, t.name);
    // Reading the first and last byte must stay inside the mapping.
    if (t.n_bytes > 0) {
      const std::uint8_t* p = f.tensor_data(t);
      volatile std::uint8_t sink = p[0];
      sink = p[t.n_bytes - 1];
      (void)sink;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  qf::fuzz::memory_file mf(data, size);
  try {
    auto f = gguf::file::open(mf.path());
    check_file(*f, size);
  } catch (const gguf::gguf_error&) {
    return 0;  // a clear error: the model loader would get the same
  }
  try {
    qf::infer::model_options mo;
    mo.n_threads = 1;
    mo.device = "cpu";
    auto m = qf::infer::model::load(mf.path(), mo);
    const auto& hp = m->hp();
    QF_FUZZ_CHECK(hp.n_vocab > 0 && hp.n_embd > 0 && hp.n_layer > 0 && hp.n_head > 0, hp.arch);
    QF_FUZZ_CHECK(m->vocab().n_vocab() > 0, hp.arch);
    const auto ids = m->vocab().encode("def f(x):\n    return x", false);
    for (std::int32_t id : ids) QF_FUZZ_CHECK(id >= 0 && id < m->vocab().n_vocab(), hp.arch);
    (void)m->describe();
  } catch (const qf::infer::model_error&) {
  } catch (const gguf::gguf_error&) {
  }
  return 0;
}

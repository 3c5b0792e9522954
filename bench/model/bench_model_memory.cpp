// Memory a GGUF file costs once opened, and a model once loaded:
//   bench_model_memory FILE.gguf          heap held by the parsed metadata
//   bench_model_memory FILE.gguf --model  also: model::load on the CPU, then
//                                         one decode step (which touches every weight)
// Prints the heap growth (malloc'd bytes in use, glibc mallinfo2) and the
// process's resident memory split into anonymous (owned by the process) and
// file-backed (page cache mapped into it) parts, from /proc/self/status, plus
// the load time. Figures only; never a test.
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "inference/gguf/gguf.h"
#include "inference/model/context.h"
#include "inference/model/model.h"

using namespace qf::infer;

namespace {

size_t heap_in_use() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

// kB value of a /proc/self/status line such as "RssAnon:".
long status_kb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(std::strlen(key)));
  return -1;
}

void print_rss(const char* when) {
  std::printf("%-22s RssAnon %8.1f MiB   RssFile %8.1f MiB\n", when, status_kb("RssAnon:") / 1024.0,
              status_kb("RssFile:") / 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_model_memory FILE.gguf [--model]\n");
    return 2;
  }
  const std::string path = argv[1];
  const bool load_model = argc > 2 && std::strcmp(argv[2], "--model") == 0;
  print_rss("start");
  {
    const size_t h0 = heap_in_use();
    const auto t0 = std::chrono::steady_clock::now();
    auto f = gguf::file::open(path);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const size_t h1 = heap_in_use();
    size_t n_array_elems = 0;
    for (const auto& [k, v] : f->metadata())
      if (const auto* a = v.as_array()) n_array_elems += a->size();
    std::printf("gguf::file::open: %zu keys, %zu array elements, %zu tensors; heap +%.2f MiB; %.0f ms\n",
                f->metadata().size(), n_array_elems, f->tensors().size(), (h1 - h0) / 1048576.0, ms);
    print_rss("file open");
  }
  if (load_model) {
    model_options mo;
    mo.n_threads = 2;
    mo.device = "cpu";
    const auto t0 = std::chrono::steady_clock::now();
    auto m = model::load(path, mo);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("model::load: %s, weights %.1f MiB, %.0f ms\n", m->describe().c_str(),
                m->weight_bytes() / 1048576.0, ms);
    print_rss("model loaded");
    context ctx(*m, context_options{.n_ctx = 64});
    const int32_t tok = 0;
    ctx.eval(std::span(&tok, 1), logits_mode::last);
    print_rss("one decode step");
  }
  return 0;
}

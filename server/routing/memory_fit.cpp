// The memory check of a further local model (see memory_fit.h).
#include "server/routing/memory_fit.h"

#include <dlfcn.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "text/lines.h"
#include "inference/gguf/gguf.h"

namespace qf::server::routing {

model_footprint kv_footprint(std::uint64_t weights_bytes, std::int64_t layers, std::int64_t kv_heads,
                             std::int64_t head_dim, std::int64_t train_context,
                             const completion::completion_settings& cache) {
  model_footprint f;
  f.weights_bytes = weights_bytes;
  f.kv_bytes_per_token = 2ull * 2ull * static_cast<std::uint64_t>(std::max<std::int64_t>(0, layers)) *
                         static_cast<std::uint64_t>(std::max<std::int64_t>(0, kv_heads)) *
                         static_cast<std::uint64_t>(std::max<std::int64_t>(0, head_dim));
  std::int64_t ctx = cache.context_tokens;
  if (train_context > 0) ctx = std::min(ctx, train_context);
  const std::uint64_t slots_tokens = static_cast<std::uint64_t>(std::max(1, cache.cache_slots)) *
                                     static_cast<std::uint64_t>(std::max<std::int64_t>(1, ctx));
  const std::uint64_t budget = static_cast<std::uint64_t>(std::max(1, cache.cache_mib)) << 20;
  const std::uint64_t budget_tokens = f.kv_bytes_per_token ? budget / f.kv_bytes_per_token : slots_tokens;
  f.kv_tokens = std::min(slots_tokens, budget_tokens);
  f.kv_bytes = f.kv_tokens * f.kv_bytes_per_token;
  return f;
}

std::optional<model_footprint> estimate_footprint(const std::string& path,
                                                  const completion::completion_settings& cache, std::string* error) {
  try {
    std::error_code ec;
    const std::uint64_t size = std::filesystem::file_size(path, ec);
    if (ec) {
      if (error) *error = "cannot read " + path + ": " + ec.message();
      return std::nullopt;
    }
    auto f = infer::gguf::file::open(path, infer::gguf::data_storage::mapped);
    const std::string arch = f->get_string("general.architecture").value_or("llama");
    const std::string a = arch + ".";
    const std::int64_t layers = f->get_int(a + "block_count").value_or(0);
    const std::int64_t heads = f->get_int(a + "attention.head_count").value_or(1);
    const std::int64_t kv_heads = f->get_int(a + "attention.head_count_kv").value_or(heads);
    const std::int64_t embd = f->get_int(a + "embedding_length").value_or(0);
    const std::int64_t head_dim = f->get_int(a + "attention.key_length").value_or(heads > 0 ? embd / heads : 0);
    const std::int64_t train_ctx = f->get_int(a + "context_length").value_or(0);
    return kv_footprint(size, layers, kv_heads, head_dim, train_ctx, cache);
  } catch (const std::exception& e) {
    if (error) *error = "cannot read " + path + ": " + e.what();
    return std::nullopt;
  }
}

std::optional<std::uint64_t> parse_mem_available(std::string_view text) {
  for (std::string_view line : text::split_lines(text)) {
    line = text::strip_line_break(line);
    constexpr std::string_view key = "MemAvailable:";
    if (line.substr(0, key.size()) != key) continue;
    line.remove_prefix(key.size());
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    std::uint64_t kib = 0;
    auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), kib);
    if (ec != std::errc() || p == line.data()) return std::nullopt;
    return kib * 1024;  // the kernel writes kB (KiB)
  }
  return std::nullopt;
}

std::optional<std::uint64_t> mem_available(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_mem_available(ss.str());
}

std::optional<std::uint64_t> gpu_free_memory() {
  // NVML ships with the driver; dlopen keeps the binary free of it.
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return std::nullopt;
  struct nvml_memory {
    unsigned long long total, free, used;
  };
  using init_fn = int (*)();
  using handle_fn = int (*)(unsigned, void**);
  using mem_fn = int (*)(void*, nvml_memory*);
  auto init = reinterpret_cast<init_fn>(dlsym(lib, "nvmlInit_v2"));
  auto handle = reinterpret_cast<handle_fn>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  auto mem = reinterpret_cast<mem_fn>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
  auto shutdown = reinterpret_cast<init_fn>(dlsym(lib, "nvmlShutdown"));
  std::optional<std::uint64_t> out;
  if (init && handle && mem && init() == 0) {
    void* dev = nullptr;
    nvml_memory m{};
    if (handle(0, &dev) == 0 && mem(dev, &m) == 0) out = m.free;
    if (shutdown) shutdown();
  }
  dlclose(lib);
  return out;
}

std::string mib_text(std::uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

fit_verdict check_fit(const std::string& name, const model_footprint& f, std::optional<std::uint64_t> host,
                      std::optional<std::uint64_t> gpu, bool on_gpu, std::uint64_t reserve) {
  fit_verdict v;
  const std::uint64_t need = f.total() + reserve;
  const std::string what = mib_text(f.weights_bytes) + " of weights + " + mib_text(f.kv_bytes) + " of KV cache (" +
                           std::to_string(f.kv_tokens) + " tokens x " + std::to_string(f.kv_bytes_per_token) +
                           " bytes) + " + mib_text(reserve) + " reserve";
  if (host && need > *host) {
    v.fits = false;
    v.message = "source \"" + name + "\" was not loaded: it needs " + what + " = " + mib_text(need) +
                ", but only " + mib_text(*host) + " of memory is available (MemAvailable)";
    return v;
  }
  if (on_gpu && gpu && need > *gpu) {
    v.fits = false;
    v.message = "source \"" + name + "\" was not loaded: it needs " + what + " = " + mib_text(need) +
                " on the GPU, but only " + mib_text(*gpu) + " is free";
    return v;
  }
  v.message = "source \"" + name + "\" fits: " + what + " = " + mib_text(need) + " <= " +
              (host ? mib_text(*host) + " available" : std::string("unknown host memory")) +
              (on_gpu ? (gpu ? ", " + mib_text(*gpu) + " free on the GPU" : std::string(", GPU memory unknown")) : "");
  return v;
}

}  // namespace qf::server::routing

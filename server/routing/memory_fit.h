// Whether a further local model fits in memory (docs/routing.md, "Memory").
//
// A model's footprint is its GGUF file (the weights, read or mapped whole)
// plus its KV caches: bytes per token = 2 (K and V) x layers x KV heads x
// head size x 2 (F16), times the tokens the cache may hold -- the smaller of
// completion.cacheMiB and cacheSlots x contextTokens (contextTokens capped by
// the model's training context). It fits when footprint + reserve <=
// MemAvailable (/proc/meminfo); on CUDA the same sum must also fit the GPU's
// free memory (NVML, loaded at run time; unknown when it cannot be loaded).
// The first local model is never checked: loading it is today's behaviour.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/completion/api/settings.h"

namespace qf::server::routing {

struct model_footprint {
  std::uint64_t weights_bytes = 0;
  std::uint64_t kv_bytes_per_token = 0;
  std::uint64_t kv_tokens = 0;
  std::uint64_t kv_bytes = 0;
  std::uint64_t total() const { return weights_bytes + kv_bytes; }
};

// From the GGUF header and the cache settings; nullopt with *error when the
// file cannot be read.
std::optional<model_footprint> estimate_footprint(const std::string& gguf_path,
                                                  const completion::completion_settings& cache, std::string* error);

// The KV part alone, from the model's shape (unit-testable without a file).
model_footprint kv_footprint(std::uint64_t weights_bytes, std::int64_t layers, std::int64_t kv_heads,
                             std::int64_t head_dim, std::int64_t train_context,
                             const completion::completion_settings& cache);

// MemAvailable of a /proc/meminfo text, in bytes; nullopt when absent.
std::optional<std::uint64_t> parse_mem_available(std::string_view meminfo);
std::optional<std::uint64_t> mem_available(const std::string& path = "/proc/meminfo");
// Free memory of GPU 0 via NVML; nullopt when NVML or a GPU is not there.
std::optional<std::uint64_t> gpu_free_memory();

struct fit_verdict {
  bool fits = true;
  std::string message;  // why not (for the user), or what was checked
};

// host/gpu: what is available (nullopt: unknown, not checked); on_gpu: the
// model would run on CUDA.
fit_verdict check_fit(const std::string& name, const model_footprint& f, std::optional<std::uint64_t> host,
                      std::optional<std::uint64_t> gpu, bool on_gpu, std::uint64_t reserve);

std::string mib_text(std::uint64_t bytes);  // "123.4 MiB"

}  // namespace qf::server::routing

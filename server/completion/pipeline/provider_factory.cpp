// Creates the completion pipeline on top of the engine: loads the model,
// makes the pipeline on it, reports progress, and turns every failure into a
// message (never throws).
#include "server/completion/pipeline/provider_factory.h"

#include <spdlog/spdlog.h>

#include <cstddef>
#include <filesystem>
#include <new>

#include "inference/gguf/gguf.h"
#include "server/completion/decode/engine_backend.h"
#include "server/completion/pipeline/pipeline.h"

namespace qf::server {

namespace {

// GGUF general.name and the file name, which pick the next-edit format.
std::string model_name(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  try {
    auto f = infer::gguf::file::open(path, infer::gguf::data_storage::mapped);
    if (auto n = f->get_string("general.name")) name = *n + " (" + name + ")";
  } catch (const std::exception&) {
    // The engine has loaded this file; a second read failing leaves the file name.
  }
  return name;
}

}  // namespace

namespace {

std::nullptr_t fail(const std::string& msg, std::string* error) {
  if (error) *error = msg;
  spdlog::error("{}", msg);
  return nullptr;
}

void progress(const provider_options& opts, int pct, const std::string& msg) {
  if (opts.on_progress) opts.on_progress(pct, msg);
}

}  // namespace

std::unique_ptr<completion::lm_backend> load_model_backend(const provider_options& opts, std::string* error) {
  if (opts.model_path.empty()) return fail("no model configured (set quickfill.model to a GGUF file)", error);
  try {
    progress(opts, 0, "loading " + opts.model_path);
    std::string err;
    completion::device_check_policy checks;
    checks.notice = opts.on_notice;
    std::unique_ptr<completion::lm_backend> backend =
        completion::load_engine_backend(opts.model_path, opts.engine, &err, checks);
    if (!backend) return fail(err, error);
    return backend;
  } catch (const std::bad_alloc&) {
    return fail("out of memory while loading " + opts.model_path, error);
  } catch (const std::exception& e) {
    return fail("cannot start completion with " + opts.model_path + ": " + e.what(), error);
  }
}

std::unique_ptr<completion_provider> make_pipeline_provider(std::unique_ptr<completion::lm_backend> backend,
                                                            const provider_options& opts, std::string* error) {
  if (!backend) return fail("cannot start completion with " + opts.model_path + ": no engine", error);
  try {
    progress(opts, 80, "preparing caches");
    auto p = std::make_unique<completion::pipeline>(std::move(backend), opts.completion);
    p->set_model_name(model_name(opts.model_path));
    std::string gate_why;
    p->set_calibrated_gate(completion::read_gate_file(opts.model_path, &gate_why));
    if (!gate_why.empty()) spdlog::warn("completion: calibrated gate not used: {}", gate_why);
    p->set_draft_loader([engine = opts.engine, resolve = opts.resolve_model, load = opts.load_draft](
                            const std::string& arg, std::string* err) -> std::unique_ptr<completion::lm_backend> {
      const std::string path = resolve ? resolve(arg) : arg;
      if (path.empty() || path[0] != '/') {
        *err = "'" + arg + "' is neither a model in the models folder nor an absolute path";
        return nullptr;
      }
      return load ? load(path, err) : completion::load_engine_backend(path, engine, err);
    });
    if (!opts.completion.draft_model.empty()) {
      progress(opts, 90, "loading the draft model " + opts.completion.draft_model);
      p->load_draft_model(nullptr);  // a draft model that cannot draft is logged; prompt lookup stays
    }
    progress(opts, 100, "ready: " + p->describe());
    return p;
  } catch (const std::bad_alloc&) {
    return fail("out of memory while preparing the completion caches for " + opts.model_path, error);
  } catch (const std::exception& e) {
    return fail("cannot start completion with " + opts.model_path + ": " + e.what(), error);
  }
}

std::unique_ptr<completion_provider> make_completion_provider(const provider_options& opts, std::string* error) {
  std::unique_ptr<completion::lm_backend> backend = load_model_backend(opts, error);
  if (!backend) return nullptr;
  return make_pipeline_provider(std::move(backend), opts, error);
}

}  // namespace qf::server

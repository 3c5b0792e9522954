// model::load (see model.h): read the GGUF into memory, pick the architecture,
// read and bound the hyperparameters, pick the backend, load weights and
// tokenizer.
#include "inference/model/model.h"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "inference/backend/backend_select.h"
#include "inference/gguf/gguf.h"
#include "inference/model/architecture.h"
#include "inference/model/weights.h"
#include "inference/tokenizer/tokenizer.h"

namespace qf::infer {

model::model() = default;
model::~model() = default;

std::unique_ptr<model> model::load(const std::string& path, const model_options& opts) {
  bool on_device = false;
  try {
    return load_with(path, [&] {
      std::string note;
      std::unique_ptr<backend> be = select_backend(opts.device, opts.n_threads, &note);
      if (!note.empty()) spdlog::info("{}", note);
      on_device = be->name() != "cpu";
      return be;
    });
  } catch (const model_error&) {
    throw;  // the file or the request is wrong: another backend would not help
  } catch (const gguf::gguf_error&) {
    throw;
  } catch (const std::exception& e) {
    // The device failed while taking the weights (out of device memory, a
    // driver error): with "auto", the CPU serves instead.
    if (!on_device || opts.device != "auto") throw;
    spdlog::warn("loading {} on the GPU failed ({}); using the CPU", path, e.what());
    model_options cpu = opts;
    cpu.device = "cpu";
    return load(path, cpu);
  }
}

std::unique_ptr<model> model::load(const std::string& path, std::unique_ptr<backend> be) {
  if (!be) throw model_error(path + ": no backend given");
  return load_with(path, [&] { return std::move(be); });
}

// The backend is made only once the file, its architecture and its
// hyperparameters are known good (starting a device is the slow part).
template <class MakeBackend>
std::unique_ptr<model> model::load_with(const std::string& path, MakeBackend make_backend) {
  std::unique_ptr<model> m(new model());
  m->file_ = gguf::file::open(path);
  const gguf::file& f = *m->file_;

  const auto arch_name = f.get_string("general.architecture");
  if (!arch_name) throw model_error(path + ": missing 'general.architecture' (supported: " + supported_architectures() + ")");
  m->arch_ = find_architecture(*arch_name);
  if (!m->arch_)
    throw model_error(path + ": unsupported architecture '" + *arch_name + "' (supported: " + supported_architectures() + ")");

  m->hp_.arch = *arch_name;
  m->arch_->read_hparams(f, m->hp_);

  m->backend_ = make_backend();

  m->weights_ = std::make_unique<model_weights>();
  weight_loader ld(*m->file_, *m->backend_);
  m->arch_->load(f, ld, m->hp_, *m->weights_);
  m->weight_bytes_ = ld.bytes();
  m->n_params_ = ld.n_params();
  m->type_name_ = ld.type_summary();

  m->vocab_ = tokenizer::from_gguf(f);
  if (m->vocab_->n_vocab() > m->hp_.n_vocab)
    throw model_error(path + ": tokenizer has " + std::to_string(m->vocab_->n_vocab()) +
                      " tokens but token_embd only " + std::to_string(m->hp_.n_vocab) + " rows");
  // A device backend holds its own copy of the weights: the host copy goes.
  if (!m->backend_->caps().host_memory) m->file_->release_tensor_data();
  return m;
}

std::string model::describe() const {
  char size[32];
  const double p = static_cast<double>(n_params_);
  if (p >= 1e9)
    std::snprintf(size, sizeof size, "%.1fB", p / 1e9);
  else if (p >= 1e6)
    std::snprintf(size, sizeof size, "%.0fM", p / 1e6);
  else
    std::snprintf(size, sizeof size, "%.0fK", p / 1e3);
  return hp_.arch + " " + size + " " + type_name_ + " on " + backend_->describe();
}

}  // namespace qf::infer

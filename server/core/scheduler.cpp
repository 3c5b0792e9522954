// The inference worker and its queue (see scheduler.h for the policy).
#include "server/core/scheduler.h"

#include <spdlog/spdlog.h>

#include "server/core/stats.h"

namespace qf::server {

scheduler::scheduler(stats_collector* stats, bool background) : stats_(stats), background_(background) {}

scheduler::~scheduler() { stop(); }

void scheduler::start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (worker_.joinable() || stopping_) return;
  worker_ = std::thread([this] { worker_main(); });
}

void scheduler::stop() {
  cancel_all(cancel_reason::shutdown);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    preempt_background_locked();
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  provider_.reset();
}

void scheduler::preempt_background_locked() {
  if (background_source_) background_source_->cancel(cancel_reason::preempted);
}

std::function<void(cancel_reason)> scheduler::cancel_locked(entry& e, cancel_reason why) {
  if (e.cancelled) return {};
  e.cancelled = true;
  e.source.cancel(why);
  e.cancel_time = clock::now();
  if (e.detached) return {};  // its request was answered when it was detached
  return std::move(e.j.on_cancel);
}

std::function<void(cancel_reason)> scheduler::detach_locked(entry& e) {
  e.detached = true;
  ++detached_;
  if (stats_) stats_->record_kept();
  e.j.progress->mark_detached();
  return std::move(e.j.on_cancel);
}

bool scheduler::continues_running_locked(std::string_view text, std::size_t cursor) const {
  if (!running_ || running_->cancelled || !running_->j.progress) return false;
  const std::optional<std::size_t> typed =
      completion::continues_generation(running_->j.text, running_->j.cursor, running_->j.progress->text(), text);
  return typed && (cursor == std::string_view::npos || cursor == running_->j.cursor + *typed);
}

void scheduler::submit(job j) {
  std::vector<std::pair<std::function<void(cancel_reason)>, cancel_reason>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      if (j.on_cancel) callbacks.emplace_back(std::move(j.on_cancel), cancel_reason::shutdown);
    } else {
      if (!j.group.empty()) {
        for (auto it = queue_.begin(); it != queue_.end();) {
          auto* e = std::get_if<std::shared_ptr<entry>>(&*it);
          if (e && (*e)->j.group == j.group) {
            if (auto cb = cancel_locked(**e, cancel_reason::preempted)) callbacks.emplace_back(std::move(cb), cancel_reason::preempted);
            it = queue_.erase(it);
          } else {
            ++it;
          }
        }
        // A detached job the new request continues stays: the new one is
        // answered from its suggestion once it ends.
        if (running_ && running_->j.group == j.group &&
            !(running_->detached && continues_running_locked(j.text, j.cursor)))
          if (auto cb = cancel_locked(*running_, cancel_reason::preempted))
            callbacks.emplace_back(std::move(cb), cancel_reason::preempted);
      }
      auto e = std::make_shared<entry>();
      e->j = std::move(j);
      queue_.emplace_back(std::move(e));
      preempt_background_locked();
    }
  }
  cv_.notify_all();
  for (auto& [cb, why] : callbacks)
    if (cb) cb(why);
}

void scheduler::post_task(task t) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    queue_.emplace_back(std::move(t));
    preempt_background_locked();
  }
  cv_.notify_all();
}

bool scheduler::cancel(const std::string& key, cancel_reason why) {
  std::function<void(cancel_reason)> cb;
  bool found = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      auto* e = std::get_if<std::shared_ptr<entry>>(&*it);
      if (e && (*e)->j.key == key) {
        cb = cancel_locked(**e, why);
        queue_.erase(it);
        found = true;
        break;
      }
    }
    if (!found && running_ && running_->j.key == key && !running_->cancelled && !running_->detached) {
      // The client gave up on the request; work that has produced text may
      // still serve the typing that made it give up (an edit decides).
      const bool keep = why == cancel_reason::cancelled && running_->j.progress &&
                        !running_->j.progress->text().empty();
      cb = keep ? detach_locked(*running_) : cancel_locked(*running_, why);
      found = true;
    }
  }
  if (cb) cb(why);
  return found;
}

std::size_t scheduler::cancel_queued_locked(const std::string* uri, cancel_reason why,
                                            std::vector<std::function<void(cancel_reason)>>& out) {
  std::size_t n = 0;
  for (auto it = queue_.begin(); it != queue_.end();) {
    auto* e = std::get_if<std::shared_ptr<entry>>(&*it);
    if (e && (!uri || (*e)->j.uri == *uri)) {
      out.push_back(cancel_locked(**e, why));
      it = queue_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

std::size_t scheduler::cancel_document(const std::string& uri, cancel_reason why) {
  std::vector<std::function<void(cancel_reason)>> callbacks;
  std::size_t n = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    n = cancel_queued_locked(&uri, why, callbacks);
    if (running_ && running_->j.uri == uri && !running_->cancelled) {
      callbacks.push_back(cancel_locked(*running_, why));
      ++n;
    }
  }
  for (auto& cb : callbacks)
    if (cb) cb(why);
  return n;
}

std::size_t scheduler::document_edited(const std::string& uri, std::string_view text) {
  constexpr cancel_reason why = cancel_reason::content_modified;
  std::vector<std::function<void(cancel_reason)>> callbacks;
  std::size_t n = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    n = cancel_queued_locked(&uri, why, callbacks);
    if (running_ && running_->j.uri == uri && !running_->cancelled) {
      if (!continues_running_locked(text, std::string_view::npos)) {
        callbacks.push_back(cancel_locked(*running_, why));
        ++n;
      } else if (!running_->detached) {
        callbacks.push_back(detach_locked(*running_));
      }
    }
  }
  for (auto& cb : callbacks)
    if (cb) cb(why);
  return n;
}

std::size_t scheduler::cancel_all(cancel_reason why) {
  std::vector<std::function<void(cancel_reason)>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancel_queued_locked(nullptr, why, callbacks);
    if (running_ && !running_->cancelled) callbacks.push_back(cancel_locked(*running_, why));
    preempt_background_locked();
  }
  for (auto& cb : callbacks)
    if (cb) cb(why);
  return callbacks.size();
}

std::size_t scheduler::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

bool scheduler::busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_ != nullptr || task_running_;
}

std::uint64_t scheduler::detached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return detached_;
}

std::uint64_t scheduler::background_steps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return background_steps_;
}

void scheduler::worker_main() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] {
      return stopping_ || !queue_.empty() || (background_ && provider_ && !background_done_);
    });
    if (stopping_) break;
    if (!queue_.empty()) {
      item next = std::move(queue_.front());
      queue_.pop_front();
      if (auto* ep = std::get_if<std::shared_ptr<entry>>(&next)) {
        std::shared_ptr<entry> e = *ep;
        e->running = true;
        running_ = e;
        cancel_token token = e->source.token();
        lock.unlock();
        if (!token.is_cancelled() && e->j.run) {
          try {
            e->j.run(provider_.get(), token);
          } catch (const std::exception& ex) {
            spdlog::error("completion job {} failed: {}", e->j.key, ex.what());
          }
        }
        lock.lock();
        running_.reset();
        if (e->cancelled && stats_) {
          double ms = std::chrono::duration<double, std::milli>(clock::now() - e->cancel_time).count();
          stats_->record_cancel_to_free(e->source.reason(), ms);
        }
      } else {
        task t = std::move(std::get<task>(next));
        task_running_ = true;
        lock.unlock();
        try {
          t(provider_);
        } catch (const std::exception& ex) {
          spdlog::error("worker task failed: {}", ex.what());
        }
        lock.lock();
        task_running_ = false;
      }
      background_done_ = false;
      continue;
    }
    // Idle with a provider: one background step, preemptible.
    background_source_.emplace();
    cancel_token token = background_source_->token();
    ++background_steps_;
    lock.unlock();
    bool more = false;
    try {
      more = provider_->background_step(token);
    } catch (const std::exception& ex) {
      spdlog::error("background step failed: {}", ex.what());
    }
    lock.lock();
    background_source_.reset();
    if (!more) background_done_ = true;
  }
  lock.unlock();
  provider_.reset();  // the model is freed on the thread that owns it
}

}  // namespace qf::server

// The remote completion source (see remote_source.h): one streamed request
// per attempt, retries and failover around it.
#include "server/remote/remote_source.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "server/completion/postprocess/cleanup.h"
#include "server/completion/postprocess/stop_rules.h"
#include "server/completion/postprocess/trigger.h"
#include "server/completion/api/source_failure.h"
#include "server/net/http_client.h"
#include "server/net/url.h"
#include "server/remote/api_key.h"
#include "server/remote/remote_api.h"
#include "server/remote/remote_prompt.h"
#include "server/remote/sse_parser.h"

namespace qf::remote {

namespace cmp = server::completion;
using server::clock;
using server::failure_kind;
using server::source_failure;

namespace {

constexpr std::size_t max_error_body = 4096;
// A streamed answer larger than this is cut with a protocol failure: even
// 4096 tokens of events stay far below it.
constexpr std::uint64_t max_answer_bytes = 8u << 20;

// Prompt tokens when the server does not report them: about 3 bytes a token,
// on the high side for code, since a quota should not undercount.
std::int64_t estimate_prompt_tokens(std::size_t prompt_bytes) {
  return static_cast<std::int64_t>((prompt_bytes + 2) / 3);
}

double ms_between(clock::time_point a, clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

bool retryable_status(int s) { return s == 429 || s == 500 || s == 502 || s == 503 || s == 504; }

// Receives one streamed answer: status, then SSE events into the stop checker.
class stream_sink final : public net::body_sink {
 public:
  stream_sink(remote_protocol p, cmp::stop_checker& stops) : protocol_(p), stops_(stops) {}

  void on_sending(const std::string&, std::size_t) override { sent = true; }

  bool on_response(const net::response& head) override {
    status = head.status;
    if (const std::string* ct = net::find_header(head.headers, "Content-Type")) content_type = *ct;
    return true;
  }

  bool on_data(std::span<const char> bytes) override {
    if (status != 200) {
      error_body.append(bytes.data(), std::min(bytes.size(), max_error_body - error_body.size()));
      return error_body.size() < max_error_body;
    }
    data_arrived = true;
    try {
      events_.clear();
      sse_.feed({bytes.data(), bytes.size()}, events_);
      for (const sse_event& e : events_) {
        const stream_piece piece = parse_event(protocol_, e);
        if (piece.prompt_tokens) prompt_tokens = piece.prompt_tokens;
        if (piece.completion_tokens) completion_tokens = piece.completion_tokens;
        if (!piece.text.empty()) {
          if (pieces++ == 0) first_text = clock::now();
          if (stops_.push(piece.text)) {
            done = true;  // a stop rule ended the completion: close the stream
            return false;
          }
        }
        if (piece.done) {
          done = true;
          return false;
        }
      }
    } catch (const sse_error& e) {
      failure.emplace(failure_kind::protocol, e.what());
      return false;
    } catch (const source_failure& f) {
      failure.emplace(f);
      return false;
    }
    return true;
  }

  // The body ended normally (no exception): a stream cut inside an event is malformed.
  void finish() {
    if (status != 200 || done || failure) return;
    try {
      sse_.finish();
    } catch (const sse_error& e) {
      failure.emplace(failure_kind::protocol, e.what());
    }
  }

  bool sent = false;  // the request went out (the server may have received it)
  int status = 0;
  std::optional<std::int64_t> prompt_tokens, completion_tokens;  // as the server reported them
  std::string content_type;
  std::string error_body;
  bool data_arrived = false;  // any body byte of a 200 answer
  bool done = false;
  int pieces = 0;
  clock::time_point first_text{};
  std::optional<source_failure> failure;

 private:
  remote_protocol protocol_;
  cmp::stop_checker& stops_;
  sse_parser sse_;
  std::vector<sse_event> events_;
};

enum class verdict { answered, cancelled, failed };

struct attempt_result {
  verdict v = verdict::failed;
  failure_kind kind = failure_kind::unavailable;
  std::string message;
  bool retryable = false;  // nothing arrived and the failure is transient
  bool deadline_hit = false;
  std::string text;
  int pieces = 0;
  clock::time_point first_text{};
  server::token_usage spent;  // what this attempt cost, when the server may have taken the request
};

// Sleeps up to `d`, in short steps, unless the request is cancelled or its deadline comes first.
bool backoff_sleep(std::chrono::milliseconds d, const cancel_token& cancel, clock::time_point deadline) {
  const auto until = clock::now() + d;
  if (until >= deadline) return false;
  while (clock::now() < until) {
    if (cancel.is_cancelled()) return false;
    std::this_thread::sleep_for(std::min<clock::duration>(std::chrono::milliseconds(2), until - clock::now()));
  }
  return true;
}

}  // namespace

remote_source::remote_source(remote_options o, std::string api_key)
    : o_(std::move(o)), key_(std::move(api_key)), ring_(o_.endpoints) {
  circuit_breaker::options b;
  b.failure_threshold = o_.breaker_failures;
  b.cool_down = o_.breaker_cool_down;
  breakers_.assign(o_.endpoints.size(), circuit_breaker(b));
}

std::unique_ptr<server::completion_provider> make_remote_source(const remote_options& o, std::string* error) {
  const std::string who = o.name.empty() ? "remote source: " : "remote source '" + o.name + "': ";
  if (o.endpoints.empty()) {
    if (error) *error = who + "no endpoints";
    return nullptr;
  }
  std::string why;
  std::optional<std::string> key = load_api_key(o.key, &why);
  if (!key) {
    if (error) *error = who + why;
    return nullptr;
  }
  if (!key->empty()) {
    // The key goes only over https, or to this machine.
    for (std::size_t i = 0; i < o.endpoints.size(); ++i) {
      std::optional<net::url> u = net::parse_url(o.endpoints[i]);
      if (u && !u->tls() && !net::is_loopback_host(u->host)) {
        if (error)
          *error = who + "refusing to send the API key over plain http to " + u->authority() + " (endpoints[" +
                   std::to_string(i) + "]): use https, or an endpoint on this machine (localhost, 127.0.0.1, ::1)";
        return nullptr;
      }
    }
  }
  if (!o.ca_file.empty()) {
    std::ifstream in(o.ca_file);
    if (!in) {
      if (error) *error = who + "cannot read the CA file " + o.ca_file + " (caFile)";
      return nullptr;
    }
  }
  return std::make_unique<remote_source>(o, std::move(*key));
}

std::string remote_source::describe() const {
  std::string d = std::string("remote ") + protocol_name(o_.protocol);
  if (!o_.name.empty()) d += " '" + o_.name + "'";
  if (!o_.model.empty()) d += " model " + o_.model;
  d += ", " + std::to_string(o_.endpoints.size()) + " endpoint(s): " + o_.endpoints.front();
  if (o_.endpoints.size() > 1) d += ", ...";
  return d;
}

circuit_breaker::state remote_source::endpoint_state(std::size_t i) const {
  return breakers_.at(i).current(clock::now());
}

server::source_health remote_source::health() const {
  server::source_health h;
  const auto now = clock::now();
  std::size_t open = 0, failing = 0;
  for (const auto& b : breakers_) {
    if (b.current(now) == circuit_breaker::state::open) ++open;
    if (b.consecutive_failures() > 0) ++failing;
  }
  const std::size_t n = breakers_.size();
  if (open == n) {
    h.state = "circuit_open";
    h.detail = "every endpoint is resting after failures";
  } else if (failing == n) {
    h.state = "down";
    h.detail = "no endpoint answered the last request";
  } else if (failing > 0) {
    h.state = "degraded";
    h.detail = std::to_string(failing) + " of " + std::to_string(n) + " endpoint(s) failing";
  } else {
    h.detail = std::to_string(n) + " endpoint(s)";
  }
  if (failing > 0 && !last_failure_.empty()) h.detail += "; last failure: " + last_failure_;
  return h;
}

server::completion_result remote_source::complete(const server::completion_request& req, const cancel_token& cancel) {
  const auto t0 = clock::now();
  server::completion_result res;
  res.metrics.queue_ms = req.received == clock::time_point{} ? 0 : ms_between(req.received, t0);
  const clock::time_point deadline = req.deadline == clock::time_point{} ? clock::time_point::max() : req.deadline;

  const cmp::cursor_context cx = cmp::make_cursor_context(req.text, req.cursor.line, req.cursor.byte_col);
  const cmp::trigger_decision dec = cmp::decide_trigger(cx, req.explicit_trigger, settings_);
  if (dec.skip) return res;

  const prompt_parts parts = build_prompt(req, o_);
  const int slot = o_.slots > 0 ? static_cast<int>(ring_hash(req.uri) % static_cast<std::uint64_t>(o_.slots)) : -1;
  // The source's maxTokens, else the limit the local pipeline would use.
  int limit = req.explicit_trigger ? settings_.max_tokens_explicit : settings_.max_tokens_auto;
  if (req.max_tokens > 0) limit = std::min(req.max_tokens, settings_.max_tokens_explicit);  // HTTP n_predict
  const api_request call = make_api_request(o_, parts, slot, limit);
  const std::int64_t prompt_estimate = estimate_prompt_tokens(call.prompt_bytes);
  server::token_usage spent;  // all attempts together
  auto with_spent = [&](server::completion_result& out) -> server::completion_result& {
    out.metrics.tokens_evaluated = spent.prompt_tokens;
    out.metrics.tokens_generated = spent.completion_tokens;
    return out;
  };

  net::request_options ro;
  ro.method = "POST";
  ro.body = call.body;
  ro.headers = {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}};
  if (!key_.empty()) ro.headers.push_back({"Authorization", "Bearer " + key_});
  ro.read_timeout = o_.read_timeout;
  ro.ca_file = o_.ca_file;
  ro.max_redirects = 3;
  ro.max_body = max_answer_bytes;
  ro.poll_interval = std::chrono::milliseconds(5);
  ro.should_cancel = [&] { return cancel.is_cancelled() || clock::now() >= deadline; };

  auto exchange = [&](std::size_t e, cmp::stop_checker& stops, stream_sink& sink) {
    attempt_result r;
    const auto left = deadline - clock::now();
    ro.connect_timeout = std::min<std::chrono::milliseconds>(
        o_.connect_timeout, std::chrono::duration_cast<std::chrono::milliseconds>(left) + std::chrono::milliseconds(1));
    const std::string url = o_.endpoints[e] + call.path;
    ++attempts_;
    try {
      net::fetch(url, ro, sink);
      sink.finish();
    } catch (const net::http_error& err) {
      if (err.kind() == net::error_kind::aborted && (sink.done || sink.failure || sink.status != 200)) {
        // stopped on purpose: the answer is complete, malformed, or an error body
      } else if (err.kind() == net::error_kind::cancelled) {
        if (cancel.reason() != cancel_reason::none && cancel.reason() != cancel_reason::deadline) {
          r.v = verdict::cancelled;
          return r;
        }
        r.deadline_hit = true;
      } else if (err.kind() == net::error_kind::too_large || err.kind() == net::error_kind::insecure ||
                 err.kind() == net::error_kind::redirect_refused) {
        // The answer or the endpoint's redirect breaks a rule: neither retried nor a transport failure.
        r.kind = err.kind() == net::error_kind::too_large ? failure_kind::protocol : failure_kind::unavailable;
        r.message = err.what();
        return r;
      } else {
        const bool before_data = sink.status == 0;
        r.kind = err.kind() == net::error_kind::timeout ? failure_kind::timeout : failure_kind::unavailable;
        r.retryable = before_data && (err.kind() == net::error_kind::connect || err.kind() == net::error_kind::interrupted ||
                                      err.kind() == net::error_kind::timeout);
        r.message = err.what();
        if (!before_data) r.message += " (after the answer began)";
        return r;
      }
    }
    if (sink.failure) {
      r.kind = sink.failure->kind();
      r.message = std::string(sink.failure->what()) + " (from " + url + ")";
      return r;
    }
    if (r.deadline_hit && (sink.status == 0 || (sink.status == 200 && sink.pieces == 0))) {
      r.kind = failure_kind::timeout;
      r.message = "no answer from " + o_.endpoints[e] + " by the deadline";
      return r;
    }
    if (sink.status != 200) {
      std::string why = error_body_message(sink.error_body);
      r.message = url + " answered HTTP " + std::to_string(sink.status) + (why.empty() ? "" : ": " + why);
      if (sink.status == 401 || sink.status == 403) r.message += " (check the API key)";
      if (retryable_status(sink.status)) {
        r.kind = failure_kind::unavailable;
        r.retryable = true;
      } else {
        r.kind = sink.status >= 400 && sink.status < 500 ? failure_kind::refused : failure_kind::protocol;
      }
      return r;
    }
    r.v = verdict::answered;
    r.text = stops.final_text(r.deadline_hit);
    r.pieces = sink.pieces;
    r.first_text = sink.first_text;
    return r;
  };
  // One attempt, and what it cost: nothing until the request went out,
  // nothing when the server refused it with an error status; else the prompt
  // (as reported, or estimated from what was sent) and what came back.
  auto run_once = [&](std::size_t e) {
    cmp::stop_checker stops(cx, dec, settings_.stop_rules);
    stream_sink sink(o_.protocol, stops);
    attempt_result r = exchange(e, stops, sink);
    if (sink.sent && (sink.status == 0 || sink.status == 200)) {
      r.spent.prompt_tokens = sink.prompt_tokens.value_or(prompt_estimate);
      r.spent.completion_tokens = sink.completion_tokens.value_or(sink.pieces);
    }
    return r;
  };

  const auto order = ring_.order(req.uri);
  std::optional<attempt_result> last;
  std::size_t skipped = 0;
  for (std::size_t e : order) {
    if (cancel.is_cancelled() && cancel.reason() != cancel_reason::deadline) return with_spent(res);
    if (clock::now() >= deadline) break;
    circuit_breaker& br = breakers_[e];
    if (!br.allow(clock::now())) {
      ++skipped;
      continue;
    }
    attempt_result r;
    std::chrono::milliseconds wait = o_.retry_backoff;
    for (int a = 0;; ++a) {
      r = run_once(e);
      spent.prompt_tokens += r.spent.prompt_tokens;
      spent.completion_tokens += r.spent.completion_tokens;
      if (r.v != verdict::failed || !r.retryable || a >= o_.retries) break;
      spdlog::debug("remote: {} (attempt {} of {}), retrying in {} ms", scrub(r.message, key_), a + 1,
                    o_.retries + 1, wait.count());
      if (!backoff_sleep(wait, cancel, deadline)) break;
      wait *= 2;
    }
    if (r.v == verdict::cancelled) {
      br.record_abandoned();
      return with_spent(res);
    }
    if (r.v == verdict::answered) {
      br.record_success();
      const auto t1 = clock::now();
      res.metrics.total_ms = ms_between(t0, t1);
      with_spent(res);
      if (r.pieces > 0) {
        res.metrics.ttft_ms = ms_between(t0, r.first_text);
        if (r.pieces > 1) res.metrics.tpot_ms = ms_between(r.first_text, t1) / (r.pieces - 1);
      }
      res.metrics.candidates = 1;
      res.incomplete = r.deadline_hit;
      const std::string text = cmp::finalize(r.text, cx, dec, settings_.stop_rules);
      if (!text.empty()) res.items.push_back(cmp::make_candidate(text, cx));
      return res;
    }
    r.message = scrub(r.message, key_);
    if (r.kind == failure_kind::refused) {
      br.record_abandoned();
      last_failure_ = r.message;
      throw source_failure(r.kind, r.message, spent);
    }
    br.record_failure(clock::now());
    spdlog::warn("remote: {} ({}); endpoint breaker {}", r.message, server::failure_kind_name(r.kind),
                 breaker_state_name(br.current(clock::now())));
    last_failure_ = r.message;
    last = std::move(r);
  }
  const std::string who = o_.name.empty() ? "remote source" : "remote source '" + o_.name + "'";
  if (last) throw source_failure(last->kind, who + ": " + last->message, spent);
  if (skipped == order.size())
    throw source_failure(failure_kind::circuit_open,
                         who + ": every endpoint's circuit breaker is open after recent failures", spent);
  throw source_failure(failure_kind::timeout, who + ": the deadline passed before a request could be sent", spent);
}

}  // namespace qf::remote

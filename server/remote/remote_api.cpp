// Request bodies and stream events of the two protocols (see remote_api.h).
#include "server/remote/remote_api.h"

#include <boost/json.hpp>
#include <algorithm>
#include <cstdint>

#include "server/completion/api/source_failure.h"

namespace qf::remote {

namespace json = boost::json;
using server::failure_kind;
using server::source_failure;

namespace {

std::string fill_template(const std::string& t, const std::string& prefix, const std::string& suffix) {
  std::string out;
  for (std::size_t i = 0; i < t.size();) {
    if (t.compare(i, 8, "{prefix}") == 0) {
      out += prefix;
      i += 8;
    } else if (t.compare(i, 8, "{suffix}") == 0) {
      out += suffix;
      i += 8;
    } else {
      out += t[i++];
    }
  }
  return out;
}

json::array stop_array(const remote_options& o) {
  json::array a;
  for (const auto& s : o.stop) a.emplace_back(s);
  return a;
}

std::string cut(std::string s, std::size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80) --n;
  return s.substr(0, n) + "...";
}

[[noreturn]] void bad_event(const std::string& why) { throw source_failure(failure_kind::protocol, why); }

// A non-negative integer member, when there is one.
std::optional<int64_t> count_of(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  if (!v) return std::nullopt;
  if (v->is_int64() && v->get_int64() >= 0) return v->get_int64();
  if (v->is_uint64()) return static_cast<int64_t>(std::min<std::uint64_t>(v->get_uint64(), INT64_MAX));
  return std::nullopt;
}

// The error object of an error event or body, as one line.
std::string error_text(const json::value& err) {
  if (err.is_string()) return cut(std::string(err.as_string()), 200);
  if (err.is_object()) {
    if (const auto* m = err.as_object().if_contains("message"); m && m->is_string())
      return cut(std::string(m->as_string()), 200);
  }
  return cut(json::serialize(err), 200);
}

}  // namespace

api_request make_api_request(const remote_options& o, const prompt_parts& p, int slot, int max_tokens) {
  const int limit = o.max_tokens > 0 ? o.max_tokens : max_tokens;
  json::object b;
  api_request r;
  if (o.protocol == remote_protocol::openai) {
    r.path = "/v1/completions";
    if (!o.model.empty()) b["model"] = o.model;
    if (o.fim_template.empty()) {
      b["prompt"] = p.prefix;
      b["suffix"] = p.suffix;
      r.prompt_bytes = p.prefix.size() + p.suffix.size();
    } else {
      std::string prompt = fill_template(o.fim_template, p.prefix, p.suffix);
      r.prompt_bytes = prompt.size();
      b["prompt"] = std::move(prompt);
    }
    b["max_tokens"] = limit;
  } else {
    r.path = "/infill";
    b["input_prefix"] = p.prefix;
    b["input_suffix"] = p.suffix;
    json::array extra;
    r.prompt_bytes = p.prefix.size() + p.suffix.size();
    for (const auto& c : p.extra) {
      extra.push_back(json::object{{"filename", c.filename}, {"text", c.text}});
      r.prompt_bytes += c.filename.size() + c.text.size();
    }
    b["input_extra"] = std::move(extra);
    b["n_predict"] = limit;
    b["cache_prompt"] = true;
    if (slot >= 0) b["id_slot"] = slot;
  }
  b["temperature"] = o.temperature;
  if (!o.stop.empty()) b["stop"] = stop_array(o);
  b["stream"] = true;
  if (o.protocol == remote_protocol::openai && o.stream_usage)
    b["stream_options"] = json::object{{"include_usage", true}};
  r.body = json::serialize(b);
  return r;
}

stream_piece parse_event(remote_protocol protocol, const sse_event& e) {
  stream_piece out;
  if (e.type == "error") bad_event("the server sent an error event: " + cut(e.data, 200));
  if (protocol == remote_protocol::openai && e.data == "[DONE]") {
    out.done = true;
    return out;
  }
  boost::system::error_code ec;
  json::value v = json::parse(e.data, ec);
  if (ec || !v.is_object()) bad_event("an event's data is not a JSON object: '" + cut(e.data, 80) + "'");
  const json::object& o = v.as_object();
  if (const auto* err = o.if_contains("error"))
    throw source_failure(failure_kind::unavailable, "the server failed while answering: " + error_text(*err));
  if (protocol == remote_protocol::openai) {
    if (const auto* usage = o.if_contains("usage"); usage && usage->is_object()) {
      out.prompt_tokens = count_of(usage->as_object(), "prompt_tokens");
      out.completion_tokens = count_of(usage->as_object(), "completion_tokens");
    }
    const auto* choices = o.if_contains("choices");
    if (!choices || !choices->is_array()) bad_event("an event has no \"choices\" array");
    if (choices->as_array().empty()) return out;  // e.g. a usage-only event
    const json::value& c = choices->as_array().front();
    if (!c.is_object()) bad_event("an event's choice is not an object");
    const auto* text = c.as_object().if_contains("text");
    if (text && !text->is_string() && !text->is_null()) bad_event("an event's \"text\" is not a string");
    if (text && text->is_string()) out.text = std::string(text->as_string());
    if (const auto* fr = c.as_object().if_contains("finish_reason"); fr && fr->is_string())
      out.finish_reason = std::string(fr->as_string());
    return out;
  }
  const auto* content = o.if_contains("content");
  if (!content || !content->is_string()) bad_event("an event has no \"content\" string");
  out.text = std::string(content->as_string());
  if (const auto* stop = o.if_contains("stop"); stop && stop->is_bool()) out.done = stop->as_bool();
  out.prompt_tokens = count_of(o, "tokens_evaluated");
  out.completion_tokens = count_of(o, "tokens_predicted");
  if (const auto* st = o.if_contains("stop_type"); st && st->is_string()) out.finish_reason = std::string(st->as_string());
  return out;
}

std::string error_body_message(std::string_view body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) return {};
  const auto* err = v.as_object().if_contains("error");
  if (!err) return {};
  return error_text(*err);
}

}  // namespace qf::remote

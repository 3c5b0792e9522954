// `quickfill demo`: the typing loop. Each keystroke is a didChange (one
// character inserted at the cursor) and a completion request; answers are
// printed as they arrive until the next keystroke is due (see demo.h).
#include <cstdio>
#include <filesystem>
#include <map>

#include <boost/json.hpp>

#include "server/cli/demo.h"

namespace qf::cli::demo {

namespace json = boost::json;
namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

json::object position(std::uint32_t line, std::uint32_t col) {
  return json::object{{"line", line}, {"character", col}};
}

class typist {
 public:
  typist(session& s, const options& o, std::string uri) : s_(s), o_(o), uri_(std::move(uri)) {}

  void open(const std::string& text, const std::string& language_id) {
    s_.notify("textDocument/didOpen",
              json::object{{"textDocument", json::object{{"uri", uri_},
                                                         {"languageId", language_id},
                                                         {"version", version_},
                                                         {"text", text}}}});
  }

  // Types one character `ch` (k-th keystroke) and lets answers arrive until
  // the next keystroke is due.
  void keystroke(const std::string& ch, std::size_t k) {
    ++version_;
    const json::object range{{"start", position(line_, col_)}, {"end", position(line_, col_)}};
    s_.notify("textDocument/didChange",
              json::object{{"textDocument", json::object{{"uri", uri_}, {"version", version_}}},
                           {"contentChanges", json::array{json::object{{"range", range}, {"text", ch}}}}});
    if (ch == "\n") {
      ++line_;
      col_ = 0;
      line_text_.clear();
    } else {
      const std::size_t n = utf8_len(static_cast<unsigned char>(ch[0]));
      col_ += s_.utf16() ? (n == 4 ? 2 : 1) : static_cast<std::uint32_t>(n);
      line_text_ += ch;
    }
    json::object params{{"textDocument", json::object{{"uri", uri_}}}, {"position", position(line_, col_)}};
    if (o_.inline_mode)
      params["context"] = json::object{{"triggerKind", 2}};
    else
      params["context"] = json::object{{"triggerKind", 2}, {"triggerCharacter", ch}};
    const auto sent = steady::now();
    const std::int64_t id =
        s_.request(o_.inline_mode ? "textDocument/inlineCompletion" : "textDocument/completion", std::move(params));
    pending_[id] = pending_req{sent, k, line_text_};
    const auto due = steady::now() + milliseconds(o_.interval_ms);
    while (steady::now() < due) {
      auto m = s_.next(std::chrono::duration_cast<milliseconds>(due - steady::now()) + milliseconds(1));
      if (!m) break;
      handle(*m);
    }
  }

  // The last request gets its full budget.
  void drain() {
    const auto drain_until = steady::now() + std::chrono::seconds(30);
    while (!pending_.empty() && steady::now() < drain_until) {
      auto m = s_.next(milliseconds(200));
      if (!m) continue;
      handle(*m);
    }
    for (const auto& r : s_.take_responses()) handle_response(r);
  }

  const tallies& counts() const { return t_; }

 private:
  struct pending_req {
    steady::time_point sent;
    std::size_t keystroke;
    std::string line_prefix;
  };

  void handle(const json::value& m) {
    if (m.as_object().contains("method")) s_.handle_notification(m);
    else handle_response(m);
  }

  void handle_response(const json::value& m) {
    const json::object& o = m.as_object();
    if (!o.at("id").is_int64()) return;
    auto it = pending_.find(o.at("id").as_int64());
    if (it == pending_.end()) return;
    const double ms = std::chrono::duration<double, std::milli>(steady::now() - it->second.sent).count();
    if (const json::value* err = o.if_contains("error")) {
      const auto code = err->at("code").as_int64();
      if (code == -32801) ++t_.modified;
      else if (code == -32800) ++t_.other_cancel;
      else {
        ++t_.errors;
        std::printf("[%3zu] error %lld: %s\n", it->second.keystroke, static_cast<long long>(code),
                    json::value_to<std::string>(err->at("message")).c_str());
      }
    } else {
      ++t_.answered;
      t_.latencies.push_back(ms);
      std::printf("[%3zu] %8.1f ms  %-34s %s\n", it->second.keystroke, ms,
                  std::string(1, '"').append(printable(it->second.line_prefix, 30)).append("|\"").c_str(),
                  shown(o.at("result")).c_str());
    }
    pending_.erase(it);
  }

  // The first item of an answer, as the demo shows it.
  std::string shown(const json::value& result) {
    const json::array& items = result.at("items").as_array();
    if (items.empty()) return "(no items)";
    ++t_.with_items;
    const json::value& first = items[0];
    const json::value& text = o_.inline_mode ? first.at("insertText") : first.at("textEdit").at("newText");
    std::string out = "-> \"" + printable(json::value_to<std::string>(text), 60) + "\"";
    if (items.size() > 1) out += " (+" + std::to_string(items.size() - 1) + " more)";
    return out;
  }

  session& s_;
  const options& o_;
  const std::string uri_;
  int version_ = 1;
  std::uint32_t line_ = 0, col_ = 0;  // UTF-8 bytes (or UTF-16 units when the server insisted)
  std::string line_text_;
  std::map<std::int64_t, pending_req> pending_;
  tallies t_;
};

}  // namespace

tallies type_sample(session& s, const options& o, const sample& smp) {
  const std::string uri = "file://" + fs::absolute(o.file).lexically_normal().string();
  typist t(s, o, uri);
  // Open the file without the part we are about to type.
  t.open(smp.content.substr(smp.typed_bytes), language_of(o.file));
  std::printf("typing %zu characters of %s, one every %d ms, with a %s request per keystroke\n\n", smp.typed_chars,
              o.file.c_str(), o.interval_ms,
              o.inline_mode ? "textDocument/inlineCompletion" : "textDocument/completion");
  const std::string typed = smp.content.substr(0, smp.typed_bytes);
  for (std::size_t i = 0, k = 0; i < typed.size(); ++k) {
    const std::size_t n = utf8_len(static_cast<unsigned char>(typed[i]));
    t.keystroke(typed.substr(i, n), k);
    i += n;
  }
  t.drain();
  return t.counts();
}

}  // namespace qf::cli::demo

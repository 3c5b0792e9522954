// An immutable text shared by reference.
//
// The document store keeps each version of a document as an immutable
// snapshot; a completion request, the other documents it uses as context and
// the pipeline's per-document state all hold the snapshot's text through a
// shared_text instead of copying it. A shared_text made from a plain string
// owns a copy of it (tests, texts the pipeline synthesizes).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "indexing/document.h"

namespace qf::index {

class shared_text {
 public:
  shared_text() = default;
  // Shares the text of a document snapshot (no copy).
  shared_text(std::shared_ptr<const document> doc)  // NOLINT: implicit by design
      : owner_(doc), view_(doc ? std::string_view(doc->text) : std::string_view()) {}
  // Owns `text`.
  shared_text(std::string text)  // NOLINT
      : owner_(std::make_shared<const std::string>(std::move(text))),
        view_(*static_cast<const std::string*>(owner_.get())) {}
  shared_text(const char* text) : shared_text(std::string(text)) {}  // NOLINT
  explicit shared_text(std::string_view text) : shared_text(std::string(text)) {}

  std::string_view view() const { return view_; }
  operator std::string_view() const { return view_; }  // NOLINT
  std::size_t size() const { return view_.size(); }
  bool empty() const { return view_.empty(); }
  // The same stored text (not just equal content).
  bool shares(const shared_text& o) const { return view_.data() == o.view_.data() && view_.size() == o.view_.size(); }

 private:
  std::shared_ptr<const void> owner_;
  std::string_view view_;
};

}  // namespace qf::index

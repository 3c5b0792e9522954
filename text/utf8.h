// UTF-8: validity, repair, decoding and truncation at character boundaries.
// The one UTF-8 definition of quickfill (documents, the protocol, the
// tokenizers and model output all use it).
//
// Everything quickfill writes to the client is JSON, and JSON text must be
// valid UTF-8, so text that enters from outside (model output, file paths,
// GGUF metadata, raw protocol bytes) is checked here and repaired where it
// enters, and strings are only ever shortened at character boundaries.
// Validity is strict (RFC 3629): no overlong forms, no surrogates (U+D800..
// U+DFFF), nothing above U+10FFFF. Repair replaces each byte that does not
// start a valid sequence with U+FFFD, and decoding reads such a byte as one
// U+FFFD (the same rule, so decoding a repaired string and decoding the raw
// one give the same code points).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace qf::text {

inline constexpr std::string_view replacement_character = "\xEF\xBF\xBD";  // U+FFFD as UTF-8
inline constexpr std::uint32_t replacement_code_point = 0xFFFD;

// Length of the valid UTF-8 sequence starting at s[i], 0 when none starts there.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

bool is_valid_utf8(std::string_view s);
// Offset of the first byte that does not start a valid sequence (s.size() when valid).
std::size_t first_invalid_utf8(std::string_view s);

// `s` with every invalid byte replaced by U+FFFD (unchanged when valid).
std::string repair_utf8(std::string_view s);
// Repairs in place; true when something was replaced.
bool repair_utf8_in_place(std::string& s);

// The largest offset <= n (clamped to s.size()) that is not inside a
// multi-byte character.
std::size_t utf8_floor(std::string_view s, std::size_t n);

// The longest prefix of `s` of at most `max_bytes` bytes that ends on a
// character boundary.
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes);

// `s` shortened to at most `max_bytes` bytes (marker included), cut at a
// character boundary and ended with `marker` when it was cut.
std::string utf8_shorten(std::string_view s, std::size_t max_bytes, std::string_view marker = "...");

// Decodes the character at s[pos] and advances pos past it; a byte that does
// not start a valid sequence (utf8_sequence_length() == 0) is U+FFFD and
// advances pos by one. pos must be < s.size().
std::uint32_t decode_utf8(std::string_view s, std::size_t& pos);

// Appends the UTF-8 encoding of code point cp (cp <= U+10FFFF; no check).
void append_utf8(std::string& out, std::uint32_t cp);

// `s` without a trailing sequence that is the valid start of a character but
// cut off (what a byte-level tokenizer leaves when generation stops mid-character).
// A streaming decoder holds these bytes back until the character completes.
std::string_view without_partial_tail(std::string_view s);

}  // namespace qf::text

// text.h — text from outside (links, pastes, flags, files) is bytes until checked: UTF-8 validity
// (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF) and a printable, bounded quote of
// any text for issue messages, so that a message can always be written as JSON.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace meshfit {

// Whether `text` is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

// `text` in double quotes for a message: printable ASCII and valid UTF-8 kept, quotes, backslashes,
// control and invalid bytes written as \", \\, \xNN; cut after `max_bytes` input bytes with "...".
// The result is always valid UTF-8.
std::string quote_text(std::string_view text, size_t max_bytes = 64);

// `text` with ASCII letters lower-cased (other bytes kept): for matching names and keywords that
// files spell in any case ("AdamW", "RMSNorm", a preset named "Llama-3").
std::string ascii_lower(std::string_view text);

}  // namespace meshfit

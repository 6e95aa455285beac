// Text from a user's file or command line quoted in an error message. printable(): a control byte
// (a NUL, which would end the message where it is printed as a C string, a tab, an escape that
// would drive the terminal) and any byte above 0x7e (binary data, which no case or matrix file
// holds) is written as \xNN, and a long word is cut after kPrintableBytes bytes with its length,
// so that a 1 MB token makes a one-line message. printable_message(): the last guard where a
// message is printed, for the words nobody quoted: control bytes other than '\n' escaped, the
// rest (UTF-8 in a path) kept.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tcemu {

inline constexpr std::size_t kPrintableBytes = 100;

namespace detail {

inline void append_escaped(std::string& out, unsigned char byte) {
  constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 0xf];
}

}  // namespace detail

inline std::string printable(std::string_view text) {
  const std::size_t shown = text.size() > kPrintableBytes ? kPrintableBytes : text.size();
  std::string out;
  out.reserve(shown + 32);
  for (const char ch : text.substr(0, shown)) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte < 0x20 || byte > 0x7e) {
      detail::append_escaped(out, byte);
    } else {
      out += ch;
    }
  }
  if (shown < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

inline std::string printable_message(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (const char ch : message) {
    const auto byte = static_cast<unsigned char>(ch);
    if ((byte < 0x20 && ch != '\n') || byte == 0x7f) {
      detail::append_escaped(out, byte);
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace tcemu

// Text from a user's file quoted in an error message: a control byte (a NUL, which would end the
// message where it is printed as a C string, a tab, an escape) is written as \xNN, so that the
// whole of the text shows.
#pragma once

#include <string>
#include <string_view>

namespace tcemu {

inline std::string printable(std::string_view text) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace tcemu

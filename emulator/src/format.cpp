#include <tcemu/emulator/format.hpp>

namespace tcemu {

std::optional<FloatFormat> format_by_name(std::string_view name) {
  for (const FloatFormat& f :
       {formats::fp32, formats::fp16, formats::bf16, formats::tf32, formats::e4m3, formats::e5m2}) {
    if (f.name == name) return f;
  }
  return std::nullopt;
}

}  // namespace tcemu

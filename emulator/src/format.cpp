#include <tcemu/emulator/format.hpp>

namespace tcemu {

std::optional<FloatFormat> format_by_name(std::string_view name) {
  for (const FloatFormat& f :
       {formats::fp32, formats::fp16, formats::bf16, formats::tf32, formats::e4m3, formats::e5m2,
        formats::e3m2, formats::e2m3, formats::e2m1, formats::ue8m0, formats::ue4m3}) {
    if (f.name == name) return f;
  }
  return std::nullopt;
}

}  // namespace tcemu

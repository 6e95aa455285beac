#include <stdexcept>
#include <string>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/markidis/presets.hpp>

namespace tcemu::markidis {
namespace {

constexpr Rounding rn = Rounding::nearest_even;
constexpr Rounding rz = Rounding::toward_zero;

// Ootomo and Yokota's two-accumulator structure: hi*hi taken out after every instruction, the
// corrections hi*lo and lo*hi inside the Tensor Core, lo*lo dropped.
Scheme corrected(std::string name, const FloatFormat& format, int lo_scale) {
  return {std::move(name),
          format,
          {{rn, 0}, {rn, lo_scale}},
          {{{{0, 0}}, 1}, {{{0, 1}, {1, 0}}, 0}},
          std::nullopt};
}

// bf16 parts b0, b1, b2 and the products with i + j <= max_order, smallest weight first (the
// order Henry, Tang and Heinecke sum in), ties with the larger A part first.
Scheme bf16_parts(std::string name, int max_order) {
  Scheme s{std::move(name), formats::bf16, {{rn, 0}, {rn, 0}, {rn, 0}}, {{{}, 0}}, std::nullopt};
  for (int order = 4; order >= 0; --order) {
    for (int i = 2; i >= 0; --i) {
      const int j = order - i;
      if (j >= 0 && j <= 2 && order <= max_order) s.groups[0].products.push_back({i, j});
    }
  }
  return s;
}

}  // namespace

std::vector<std::string_view> scheme_names() {
  return {"markidis", "markidis4", "halfhalf", "halfhalf-scaled",
          "tf32tf32", "3xtf32",    "bf16x3",   "bf16x9"};
}

Scheme scheme_by_name(std::string_view name) {
  if (name == "markidis" || name == "markidis4") {
    Scheme s{std::string(name),
             formats::fp16,
             {{rn, 0}, {rn, 0}},
             {{{{0, 0}, {0, 1}, {1, 0}}, 0}},
             std::nullopt};
    if (name == "markidis4") s.groups[0].products.push_back({1, 1});
    return s;
  }
  if (name == "halfhalf") return corrected("halfhalf", formats::fp16, 11);
  if (name == "halfhalf-scaled") {
    Scheme s = corrected("halfhalf-scaled", formats::fp16, 11);
    s.scale_to_exponent = 14;
    return s;
  }
  if (name == "tf32tf32") return corrected("tf32tf32", formats::tf32, 0);
  if (name == "3xtf32") {
    return {
        "3xtf32", formats::tf32, {{rz, 0}, {rn, 0}}, {{{{1, 0}, {0, 1}, {0, 0}}, 0}}, std::nullopt};
  }
  if (name == "bf16x3") return bf16_parts("bf16x3", 1);
  if (name == "bf16x9") return bf16_parts("bf16x9", 4);
  std::string known;
  for (std::string_view n : scheme_names()) known += (known.empty() ? "" : ", ") + std::string(n);
  throw std::invalid_argument("unknown scheme '" + std::string(name) + "' (known: " + known + ")");
}

Datapath scheme_datapath(const Scheme& scheme, std::string_view arch,
                         std::string_view instruction) {
  return preset(arch, scheme.part_format, formats::fp32, instruction);
}

}  // namespace tcemu::markidis

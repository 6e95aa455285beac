#include <tcemu/emulator/pair_fma_emulation.hpp>

#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/rounded_arithmetic.hpp>

namespace tcemu {
namespace {

// fp16 bits widened to fp32 exactly (HADD2.F32 -RZ, x).
float widen(std::uint32_t fp16_bits) {
  return std::bit_cast<float>(
      convert(formats::fp16, formats::fp32, fp16_bits & 0xFFFFu, Rounding::nearest_even));
}

}  // namespace

bool is_sm90_m8n8k4_fp16(std::string_view arch, std::string_view instruction,
                         const FloatFormat& input, const FloatFormat& accumulator) {
  return arch == "sm90" && instruction == "mma.sync.m8n8k4" && input == formats::fp16 &&
         accumulator == formats::fp16;
}

std::uint32_t sm90_m8n8k4_fp16_element(std::span<const std::uint32_t> a,
                                       std::span<const std::uint32_t> b, std::uint32_t c) {
  if (a.size() != b.size() || a.size() % 4 != 0) {
    throw std::invalid_argument("mma.sync.m8n8k4 emulation: K = " + std::to_string(a.size()) +
                                " for a, " + std::to_string(b.size()) +
                                " for b; both must be the same multiple of 4");
  }
  std::uint32_t d = c & 0xFFFFu;
  for (std::size_t k = 0; k < a.size(); k += 4) {
    // fp16 x fp16 has at most 22 significant bits and an exponent within fp32's normal range:
    // mul_rn is exact, so each FFMA rounds the exact sum of its pair once.
    const float p01 = fma_rn(widen(a[k + 1]), widen(b[k + 1]), mul_rn(widen(a[k]), widen(b[k])));
    const float p23 =
        fma_rn(widen(a[k + 3]), widen(b[k + 3]), mul_rn(widen(a[k + 2]), widen(b[k + 2])));
    const float sum = add_rn(add_rn(widen(d), p01), p23);
    // convert() gives fp16's canonical NaN 0x7FFF for any NaN, as F2FP does.
    d = convert(formats::fp32, formats::fp16, std::bit_cast<std::uint32_t>(sum),
                Rounding::nearest_even);
  }
  return d;
}

}  // namespace tcemu

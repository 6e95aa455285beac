// How much of an fp32 value two fp16 parts keep (Ootomo and Yokota 2022, section 3).
//
//   markidis_split [--samples N] [--seed S] [--out DIR]        (kUsage)
//
// Writes DIR/markidis-split-bits.csv: for each split variant the mean number of fraction bits of
// x that hi + lo 2^-s reproduces (analytic where a closed form is derived below, and Monte Carlo),
// with the histogram of lost bits; and DIR/markidis-split-underflow.csv: against the exponent of
// x, the probability that the low part is subnormal in fp16 (gradual underflow: bits may be lost)
// or zero while the residual is not (complete underflow), the probability that hi overflows fp16,
// and the mean kept bits of the values that do not overflow, with and without the 2^11 scaling of
// the residual.
//
// Kept bits of one x with exponent E (ulp u = 2^(E-23)): err = |x - (hi + lo 2^-s)| in units of
// u (an integer here); kept = 23 when err = 0, else max(0, 23 - (floor(log2 err) + 1)), so one
// wrong last bit costs one bit and a value lost entirely keeps 0. Every value is computed exactly:
// the parts come from split_fp32_element and the error is an integer multiple of u computed in
// binary64 without rounding (all terms are multiples of 2^-149 within 2^26 u of x).
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/backend/fp32_split_elements.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/output_file.hpp>

namespace {

using tcemu::Rounding;
namespace formats = tcemu::formats;

struct Variant {
  const char* name;
  Rounding hi_rounding;
  int lo_scale;
  bool zero_last_bit;  // the input's last fraction bit is cleared before the split
  double analytic;     // mean kept bits at exponent 0 (NaN: no closed form given)
};

double fp16_value(std::uint32_t bits) {
  return std::bit_cast<float>(
      tcemu::convert(formats::fp16, formats::fp32, bits, Rounding::nearest_even));
}

struct Outcome {
  int kept;
  bool lo_subnormal;  // lo != 0 and |lo| < 2^-14
  bool lo_flushed;    // lo == 0 although the residual is not 0
  bool hi_overflow;   // x beyond fp16 (the split cannot represent it; kept is not measured)
};

// Splits x (after clearing its last bit when asked) and measures the kept bits against x itself.
Outcome measure(std::uint32_t x, const Variant& v) {
  const std::uint32_t input = v.zero_last_bit ? (x & ~1u) : x;
  const tcemu::SplitElement hi = tcemu::split_fp32_element(input, formats::fp16, v.hi_rounding, 0);
  const tcemu::SplitElement lo =
      tcemu::split_fp32_element(hi.residual, formats::fp16, Rounding::nearest_even, v.lo_scale);
  const double value = std::bit_cast<float>(x);
  const double approx = fp16_value(hi.part) + std::ldexp(fp16_value(lo.part), -v.lo_scale);
  const int exponent = static_cast<int>((x >> 23) & 0xFF) - 127;
  const double err = std::abs(value - approx) / std::ldexp(1.0, exponent - 23);
  const int lost = err == 0.0 ? 0 : static_cast<int>(std::floor(std::log2(err))) + 1;
  if (hi.overflow) return {0, false, false, true};
  const std::uint32_t lo_magnitude = lo.part & 0x7FFFu;
  return {std::max(0, 23 - lost), lo_magnitude != 0 && lo_magnitude < 0x0400u,
          lo_magnitude == 0 && (hi.residual & 0x7FFFFFFFu) != 0, false};
}

std::uint32_t random_fp32(std::mt19937_64& rng, int exponent) {
  const auto fraction = static_cast<std::uint32_t>(rng() & 0x7FFFFFu);
  const auto sign = static_cast<std::uint32_t>(rng() & 1u) << 31;
  return sign | (static_cast<std::uint32_t>(exponent + 127) << 23) | fraction;
}

constexpr const char* kUsage = R"(usage: markidis_split [--samples N] [--seed S] [--out DIR]

How much of an fp32 value two fp16 parts keep (Ootomo and Yokota 2022, section 3). Writes
DIR/markidis-split-bits.csv (for each split variant the mean fraction bits of x that
hi + lo 2^-s reproduces, analytic and Monte Carlo, and the histogram of lost bits) and
DIR/markidis-split-underflow.csv (against the exponent of x: the probabilities that the low
part underflows and that hi overflows, and the mean kept bits, with and without the 2^11 scaling
of the residual). experiments/markidis/plot_split.py draws the figures.

Options:
  --samples N            Monte Carlo samples per variant (default 1000000; a tenth of them per
                         exponent for the underflow table)
  --seed S               random seed (default 1)
  --out DIR              the folder written, created if missing (default .)
)";

int run(const tcemu::session::Arguments& args) {
  if (!args.positional().empty()) {
    throw tcemu::session::UsageError("unexpected word '" + args.positional()[0] + "'");
  }
  const long samples = static_cast<long>(args.integer_or("samples", 1000000, 1, 1'000'000'000'000));
  const auto seed = static_cast<unsigned long>(
      args.integer_or("seed", 1, 0, std::numeric_limits<long long>::max()));
  const std::string out = args.value_or("out", ".");
  std::filesystem::create_directories(out);

  // Analytic means at exponent 0 (no underflow), the 13 low bits L of x uniform:
  //  RN hi: r = L u or (L - 2^13) u, |r| <= 2^12 u. lo (11 bits, RN) is exact unless
  //    |r| in [2^11, 2^12) u (probability 1/2) with an odd last bit (1/2): one bit lost with
  //    probability 1/4: 23 - 1/4 = 22.75 (Ootomo and Yokota).
  //  RZ hi: r = L u in [0, 2^13) u. L in [2^12, 2^13) (1/2): two bits dropped by lo's RN, lost
  //    0, 1, 2 (tie, to even... an error of 2u), 1 for the dropped pairs 00, 01, 10, 11: mean 1;
  //    L in [2^11, 2^12) (1/4): one bit dropped, mean 1/2. 23 - (1/2 + 1/8) = 22.375.
  //  Last bit cleared, RN hi: the split of x' is exact (r even, so a 12-bit r keeps its zero last
  //    bit), and x' differs from x in the last bit with probability 1/2: 22.5.
  const Variant variants[] = {
      {"halfhalf (RN hi, RN lo x2^11)", Rounding::nearest_even, 11, false, 22.75},
      {"markidis (RN hi, RN lo)", Rounding::nearest_even, 0, false, 22.75},
      {"RZ hi, RN lo x2^11", Rounding::toward_zero, 11, false, 22.375},
      {"last input bit cleared, halfhalf split", Rounding::nearest_even, 11, true, 22.5},
  };

  std::mt19937_64 rng(seed);
  const std::string bits_path = out + "/markidis-split-bits.csv";
  tcemu::session::OutputFile bits_csv(bits_path);
  bits_csv.print(
      "variant,analytic_kept_bits,montecarlo_kept_bits,samples,p_lost0,p_lost1,"
      "p_lost2,p_lost3plus\n");
  for (const Variant& v : variants) {
    std::vector<double> lost(4, 0.0);  // counts, exact in binary64
    double kept_sum = 0.0;
    for (long s = 0; s < samples; ++s) {
      const Outcome o = measure(random_fp32(rng, 0), v);
      kept_sum += o.kept;
      ++lost[std::min(23 - o.kept, 3)];
    }
    const double n = static_cast<double>(samples);
    bits_csv.print("\"%s\",%.4f,%.5f,%ld,%.5f,%.5f,%.5f,%.5f\n", v.name, v.analytic, kept_sum / n,
                   samples, lost[0] / n, lost[1] / n, lost[2] / n, lost[3] / n);
    std::printf("%-42s analytic %.4f  Monte Carlo %.5f\n", v.name, v.analytic, kept_sum / n);
  }
  bits_csv.close();

  const std::string underflow_path = out + "/markidis-split-underflow.csv";
  tcemu::session::OutputFile under_csv(underflow_path);
  under_csv.print("exponent,lo_scale,p_lo_subnormal,p_lo_flushed,p_hi_overflow,mean_kept_bits\n");
  const long per_exponent = std::max(1L, samples / 10);
  for (int exponent = -40; exponent <= 15; ++exponent) {
    for (int scale : {0, 11}) {
      const Variant v{"", Rounding::nearest_even, scale, false, NAN};
      double subnormal = 0, flushed = 0, overflow = 0, kept = 0;  // counts
      for (long s = 0; s < per_exponent; ++s) {
        const Outcome o = measure(random_fp32(rng, exponent), v);
        subnormal += o.lo_subnormal;
        flushed += o.lo_flushed;
        overflow += o.hi_overflow;
        kept += o.kept;
      }
      const double n = static_cast<double>(per_exponent);
      const double measured = n - overflow;
      under_csv.print("%d,%d,%.5f,%.5f,%.5f,%.4f\n", exponent, scale, subnormal / n, flushed / n,
                      overflow / n, measured > 0 ? kept / measured : NAN);
    }
  }
  under_csv.close();
  std::printf("wrote %s and %s\n", bits_path.c_str(), underflow_path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tcemu::session::run_program({"markidis_split", kUsage, {"samples", "seed", "out"}, {}},
                                     argc, argv, run);
}

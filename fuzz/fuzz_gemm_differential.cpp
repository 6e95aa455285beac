// libFuzzer target: the emulated GEMM (tcemu/emulator/gemm.hpp, whose vectorised fast path runs
// for finite A and B) against mma_element (tcemu/emulator/mma.hpp), element by element.
//
// The input builds a datapath, every field drawn over what validate() accepts (a datapath
// validate() refuses is skipped), and small A (m x k), B (k x n) and C (m x n). The GEMM runs with
// C as the initial accumulator on one thread; each d_ij must have the bits of
// mma_element(datapath, row i of A, column j of B, c_ij) (for k = 0 both give c_ij). A difference
// aborts with the datapath and the element.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

namespace {

using tcemu::FloatFormat;

constexpr FloatFormat kInputs[] = {tcemu::formats::fp16, tcemu::formats::bf16,
                                   tcemu::formats::tf32, tcemu::formats::e4m3,
                                   tcemu::formats::e5m2, tcemu::formats::fp32};

FloatFormat input_format(FuzzedDataProvider& in) {
  const auto pick = in.ConsumeIntegralInRange<std::size_t>(0, std::size(kInputs));
  if (pick < std::size(kInputs)) return kInputs[pick];
  // Any format validate() accepts: at most fp32's exponent and fraction, in a 32-bit container.
  FloatFormat f{"custom", 0, 0, 0, tcemu::SpecialEncoding::ieee};
  f.exponent_bits = in.ConsumeIntegralInRange(1, 8);
  f.fraction_bits = in.ConsumeIntegralInRange(0, 23);
  f.padding_bits = in.ConsumeIntegralInRange(0, 32 - f.storage_bits());
  f.special = in.ConsumeBool() ? tcemu::SpecialEncoding::ieee : tcemu::SpecialEncoding::fn_e4m3;
  return f;
}

tcemu::Datapath datapath(FuzzedDataProvider& in) {
  tcemu::Datapath dp{};
  dp.input = input_format(in);
  dp.accumulator = in.ConsumeBool() ? tcemu::formats::fp32 : tcemu::formats::fp16;
  dp.block_terms = in.ConsumeBool() ? in.ConsumeIntegralInRange(1, 8)
                                    : in.ConsumeIntegralInRange(1, tcemu::kMaxBlockTerms);
  dp.instruction_k = dp.block_terms * in.ConsumeIntegralInRange(1, 1024 / dp.block_terms);
  std::vector<int> divisors;
  for (int d = 1; d <= dp.block_terms; ++d) {
    if (dp.block_terms % d == 0) divisors.push_back(d);
  }
  dp.k_group = divisors[in.ConsumeIntegralInRange<std::size_t>(0, divisors.size() - 1)];
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0:
      dp.alignment_fraction_bits = std::nullopt;
      break;
    case 1:
      dp.alignment_fraction_bits = in.ConsumeIntegralInRange(0, 400);
      break;
    default:  // where the fast path runs (sum of the grid bits at most 52)
      dp.alignment_fraction_bits = in.ConsumeIntegralInRange(0, 45);
  }
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0:
      dp.alignment_floor = tcemu::kNoAlignmentFloor;
      break;
    case 1:
      dp.alignment_floor = in.ConsumeIntegralInRange(-1'000'000, 1'000'000);
      break;
    default:
      dp.alignment_floor = in.ConsumeIntegralInRange(-300, 300);
  }
  dp.block_rounding =
      in.ConsumeBool() ? tcemu::Rounding::toward_zero : tcemu::Rounding::nearest_even;
  dp.block_result_precision = in.ConsumeIntegralInRange(1, dp.accumulator.fraction_bits + 1);
  dp.c_entry = in.ConsumeBool() ? tcemu::AccumulatorEntry::aligned_in_first_block
                                : tcemu::AccumulatorEntry::added_after_blocks;
  constexpr tcemu::Overflow kOverflows[] = {tcemu::Overflow::ieee, tcemu::Overflow::infinity,
                                            tcemu::Overflow::saturate};
  dp.overflow = kOverflows[in.ConsumeIntegralInRange(0, 2)];
  dp.zero_sign = in.ConsumeBool() ? tcemu::ZeroSign::ieee : tcemu::ZeroSign::positive;
  // A NaN of the accumulator: sign, all-ones exponent, nonzero fraction (or any bits, which
  // validate() mostly refuses).
  const int fraction = dp.accumulator.fraction_bits;
  const int width = dp.accumulator.storage_bits();
  const std::uint32_t payload = in.ConsumeIntegral<std::uint32_t>();
  dp.nan_bits =
      in.ConsumeIntegralInRange(0, 7) == 0
          ? payload
          : (payload & (std::uint32_t{1} << (width - 1))) |
                (((std::uint32_t{1} << dp.accumulator.exponent_bits) - 1) << fraction) |
                std::max<std::uint32_t>(1, payload & ((std::uint32_t{1} << fraction) - 1));
  return dp;
}

// A container bit pattern of `f`; with `finite`, an all-ones exponent is cleared to a finite one.
std::uint32_t element(FuzzedDataProvider& in, const FloatFormat& f, bool finite) {
  const int bits = f.container_bits();
  std::uint32_t v = in.ConsumeIntegral<std::uint32_t>();
  if (bits < 32) v &= (std::uint32_t{1} << bits) - 1;
  if (finite) {
    const std::uint32_t exponent = ((std::uint32_t{1} << f.exponent_bits) - 1)
                                   << (f.fraction_bits + f.padding_bits);
    if ((v & exponent) == exponent) v &= ~(std::uint32_t{1} << (bits - 2));
  }
  return v;
}

// Stores `bits` in a container of the matrix's element size.
void put(std::vector<unsigned char>& store, const FloatFormat& f, std::size_t index,
         std::uint32_t bits) {
  tcemu::MatrixView view{{store.data(), f, 1, static_cast<std::int64_t>(index + 1),
                          static_cast<std::int64_t>(index + 1), tcemu::Layout::row_major}};
  view.set(0, static_cast<std::int64_t>(index), bits);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const tcemu::Datapath dp = datapath(in);
  try {
    tcemu::validate(dp);
  } catch (const std::invalid_argument&) {
    return 0;  // not a datapath the emulator evaluates
  }
  const auto m = in.ConsumeIntegralInRange<std::int64_t>(1, 4);
  const auto n = in.ConsumeIntegralInRange<std::int64_t>(1, 4);
  const auto k = in.ConsumeIntegralInRange<std::int64_t>(0, 48);
  const bool finite = in.ConsumeIntegralInRange(0, 7) != 0;  // mostly the fast path's inputs
  const std::size_t in_bytes = tcemu::container_bytes(dp.input);
  const std::size_t acc_bytes = tcemu::container_bytes(dp.accumulator);
  std::vector<std::uint32_t> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)),
      c(static_cast<std::size_t>(m * n));
  std::vector<unsigned char> a_store(a.size() * in_bytes + 1), b_store(b.size() * in_bytes + 1),
      c_store(c.size() * acc_bytes), d_store(c.size() * acc_bytes);
  for (std::size_t i = 0; i < a.size(); ++i)
    put(a_store, dp.input, i, a[i] = element(in, dp.input, finite));
  for (std::size_t i = 0; i < b.size(); ++i)
    put(b_store, dp.input, i, b[i] = element(in, dp.input, finite));
  for (std::size_t i = 0; i < c.size(); ++i) {
    put(c_store, dp.accumulator, i, c[i] = element(in, dp.accumulator, false));
  }
  const tcemu::ConstMatrixView av{
      a_store.data(), dp.input, m, k, std::max<std::int64_t>(1, k), tcemu::Layout::row_major};
  const tcemu::ConstMatrixView bv{b_store.data(), dp.input, k, n, n, tcemu::Layout::row_major};
  const tcemu::ConstMatrixView cv{c_store.data(),          dp.accumulator, m, n, n,
                                  tcemu::Layout::row_major};
  const tcemu::MatrixView dv{{d_store.data(), dp.accumulator, m, n, n, tcemu::Layout::row_major}};
  tcemu::GemmOptions options;
  options.beta = 1.0f;
  options.c_input = tcemu::CInput::initial_accumulator;
  options.threads = 1;
  tcemu::emulated_gemm(dp, options, av, bv, cv, dv);
  std::vector<std::uint32_t> row(static_cast<std::size_t>(k)), col(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t p = 0; p < k; ++p) {
        row[p] = a[i * k + p];
        col[p] = b[p * n + j];
      }
      const std::uint32_t want = tcemu::mma_element(dp, row, col, c[i * n + j]);
      const std::uint32_t got = dv.get(i, j);
      if (got != want) {
        std::fprintf(stderr,
                     "emulated_gemm and mma_element differ at (%lld, %lld) of %lld x %lld, k %lld: "
                     "gemm %08x, mma_element %08x\ndatapath: %s\ninput %s (e%d f%d pad %d %s)\n"
                     "nan_bits %08x\nc %08x\na:",
                     static_cast<long long>(i), static_cast<long long>(j),
                     static_cast<long long>(m), static_cast<long long>(n),
                     static_cast<long long>(k), got, want, tcemu::describe(dp).c_str(),
                     std::string(dp.input.name).c_str(), dp.input.exponent_bits,
                     dp.input.fraction_bits, dp.input.padding_bits,
                     dp.input.special == tcemu::SpecialEncoding::ieee ? "ieee" : "fn", dp.nan_bits,
                     c[i * n + j]);
        for (const std::uint32_t x : row) std::fprintf(stderr, " %x", x);
        std::fprintf(stderr, "\nb:");
        for (const std::uint32_t x : col) std::fprintf(stderr, " %x", x);
        std::fprintf(stderr, "\n");
        std::abort();
      }
    }
  }
  return 0;
}

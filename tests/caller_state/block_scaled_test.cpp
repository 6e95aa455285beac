// The block-scaled entry points of the emulator in every caller state: mma_element with scales,
// and emulated_gemm with BlockScales through each of its CPU paths (scaled_gemms.hpp: the binary64
// fast path, the group path, the element-wise evaluation the binary64 path falls back to for an Inf
// operand or a NaN scale, gemm_fast_path.hpp), with C through the epilogue, as the initial
// accumulator, and with take-out.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "caller_state.hpp"
#include "scaled_gemms.hpp"

namespace tcemu {
namespace {

TEST(CallerState, BlockScaledGemmAndMmaOnEveryCpuPath) {
  const std::vector<test::ScaledGemm> gemms = test::scaled_gemms();
  test::expect_same_in_every_caller_state([&] {
    std::vector<std::uint32_t> out;
    for (const test::ScaledGemm& g : gemms) {
      for (const GemmOptions& options : test::scaled_gemm_options(g.dp)) g.run(options, out);
      g.run_elements(out);
    }
    return test::words(out);
  });
}

}  // namespace
}  // namespace tcemu

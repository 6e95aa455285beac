// Each step family writes the NaN that tcemu/backend/nan.hpp names for it, whatever the payload
// and sign of the NaN operands (every input NaN here has a payload and the sign bit set, so a
// step that passed an operand's NaN through would fail).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/backend/nan.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/host/host_backends.hpp>

namespace tcemu {
namespace {

constexpr std::uint64_t kPayloadNan64 = 0xFFF4000000000123ull;  // signalling, negative
constexpr std::uint32_t kPayloadNan32 = 0xFFA01234u;            // signalling, negative
constexpr std::uint16_t kPayloadNan16 = 0xFD23u;                // fp16, negative, payload

// A buffer holding `values`, and views of it.
template <class T>
struct Stored {
  Stored(Backend& backend, const std::vector<T>& values)
      : buffer(backend.allocate(values.size() * sizeof(T))) {
    backend.copy_in(values.data(), buffer, values.size() * sizeof(T));
  }
  RealMatrix real(std::int64_t rows, std::int64_t cols) const {
    return {&buffer,          0, sizeof(T) == 8 ? Real::fp64 : Real::fp32, rows, cols, cols,
            Layout::row_major};
  }
  BufferMatrix bits(FloatFormat format, std::int64_t rows, std::int64_t cols) const {
    return {&buffer, 0, format, rows, cols, cols, Layout::row_major};
  }
  Buffer buffer;
};

template <class T>
std::vector<T> read(const Backend& backend, const Stored<T>& s, std::size_t count) {
  std::vector<T> out(count);
  backend.copy_out(s.buffer, out.data(), count * sizeof(T));
  return out;
}

TEST(StepNans, TheFamiliesWriteTheNansNanHppNames) {
  // The decision nan.hpp documents: the GPU's fp32 NaN for the fp32 split steps, the C++ quiet NaN
  // for the binary64/binary32 results of the Ozaki and inner-product steps.
  EXPECT_EQ(step_nan::fp32_split, 0x7FFFFFFFu);
  EXPECT_EQ(step_nan::ozaki_fp64,
            std::bit_cast<std::uint64_t>(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_EQ(step_nan::ozaki_fp32,
            std::bit_cast<std::uint32_t>(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_EQ(step_nan::inner_product_fp64, step_nan::ozaki_fp64);
  EXPECT_EQ(step_nan::inner_product_fp32, step_nan::ozaki_fp32);
}

TEST(StepNans, TensorCoreStepsWriteTheDatapathsNan) {
  auto backend = host::make_emulator_backend(1);
  const Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  // A = (NaN, 1), B = (1, 1)^T: D = NaN.
  Stored<std::uint16_t> a(*backend, {kPayloadNan16, 0x3C00}), b(*backend, {0x3C00, 0x3C00});
  Stored<std::uint32_t> d(*backend, {0});
  backend->mma_gemm(dp, {}, a.bits(formats::fp16, 1, 2), b.bits(formats::fp16, 2, 1), std::nullopt,
                    d.bits(formats::fp32, 1, 1));
  EXPECT_EQ(read(*backend, d, 1)[0], dp.nan_bits);
  EXPECT_EQ(dp.nan_bits, kGpuFp32Nan);
}

TEST(StepNans, Fp32SplitStepsWriteTheGpuNan) {
  auto backend = host::make_emulator_backend(1);
  const float inf = std::numeric_limits<float>::infinity();
  // combine_fp32: Inf + (-Inf), and a NaN operand.
  Stored<float> x(*backend, {inf, std::bit_cast<float>(kPayloadNan32)}), y(*backend, {-inf, 1.0f});
  Stored<float> d(*backend, {0, 0});
  backend->combine_fp32(x.bits(formats::fp32, 1, 2), y.bits(formats::fp32, 1, 2), std::nullopt,
                        d.bits(formats::fp32, 1, 2), {});
  for (float v : read(*backend, d, 2))
    EXPECT_EQ(std::bit_cast<std::uint32_t>(v), step_nan::fp32_split);
  // propagate_nonfinite_fp32: a NaN factor.
  Stored<float> a(*backend, {std::bit_cast<float>(kPayloadNan32), 1.0f}), b(*backend, {1.0f, 2.0f});
  Stored<float> p(*backend, {5.0f});
  backend->propagate_nonfinite_fp32(a.bits(formats::fp32, 1, 2), b.bits(formats::fp32, 2, 1),
                                    p.bits(formats::fp32, 1, 1));
  EXPECT_EQ(std::bit_cast<std::uint32_t>(read(*backend, p, 1)[0]), step_nan::fp32_split);
}

TEST(StepNans, OzakiStepsWriteTheQuietNanOfTheirResultType) {
  auto backend = host::make_emulator_backend(1);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::bit_cast<double>(kPayloadNan64);
  Stored<std::int32_t> zeros(*backend, {0, 0});
  const ExponentVector one_zero{&zeros.buffer, 0, 1};
  const OuterExponents unscaled{one_zero, one_zero};
  // exact_sum of +Inf and -Inf.
  Stored<double> stack(*backend, {inf, -inf}), sum(*backend, {0});
  backend->exact_sum({stack.real(1, 1), 2, sizeof(double)}, unscaled, sum.real(1, 1));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(read(*backend, sum, 1)[0]), step_nan::ozaki_fp64);
  // The epilogue of a NaN value into fp64 and into fp32.
  Stored<double> v(*backend, {nan}), out64(*backend, {0});
  Stored<float> out32(*backend, {0});
  backend->epilogue(v.real(1, 1), std::nullopt, 1.0, 0.0, std::nullopt, std::nullopt, std::nullopt,
                    out64.real(1, 1));
  backend->epilogue(v.real(1, 1), std::nullopt, 1.0, 0.0, std::nullopt, std::nullopt, std::nullopt,
                    out32.real(1, 1));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(read(*backend, out64, 1)[0]), step_nan::ozaki_fp64);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(read(*backend, out32, 1)[0]), step_nan::ozaki_fp32);
}

TEST(StepNans, InnerProductStepWritesTheQuietNanOfItsType) {
  auto backend = host::make_emulator_backend(1);
  for (InnerProduct method : {InnerProduct::exact, InnerProduct::dot2}) {
    Stored<double> a(*backend, {std::bit_cast<double>(kPayloadNan64), 1.0}), b(*backend, {1, 1});
    Stored<double> c(*backend, {0});
    backend->inner_products(method, a.real(1, 2), b.real(2, 1), 1.0, 0.0, c.real(1, 1));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(read(*backend, c, 1)[0]), step_nan::inner_product_fp64);
    Stored<float> a32(*backend, {std::bit_cast<float>(kPayloadNan32), 1.0f}), b32(*backend, {1, 1});
    Stored<float> c32(*backend, {0});
    backend->inner_products(method, a32.real(1, 2), b32.real(2, 1), 1.0, 0.0, c32.real(1, 1));
    EXPECT_EQ(std::bit_cast<std::uint32_t>(read(*backend, c32, 1)[0]),
              step_nan::inner_product_fp32);
  }
}

}  // namespace
}  // namespace tcemu

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu {
namespace {

TEST(EmulatorBackend, CopiesRoundTripAndRefuseToOverrun) {
  auto backend = host::make_emulator_backend();
  Buffer buffer = backend->allocate(64);
  std::vector<unsigned char> in(64), out(64);
  for (int i = 0; i < 64; ++i) in[i] = static_cast<unsigned char>(i * 7);
  backend->copy_in(in.data(), buffer, 64);
  backend->copy_out(buffer, out.data(), 64);
  EXPECT_EQ(in, out);
  EXPECT_THROW(backend->copy_in(in.data(), buffer, 8, 60), std::out_of_range);
  EXPECT_THROW(backend->copy_out(buffer, out.data(), 65), std::out_of_range);
  auto other = host::make_emulator_backend();
  EXPECT_THROW(other->copy_in(in.data(), buffer, 8), std::invalid_argument);
}

TEST(EmulatorBackend, GemmAndConvertOnBackendBuffersMatchTheHostFunctions) {
  auto backend = host::make_emulator_backend();
  const Datapath dp = preset("sm80", formats::fp16, formats::fp32);
  const std::int64_t m = 7, n = 9, k = 40;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<std::uint32_t> a32(m * k), b32(k * n);
  for (auto& x : a32) x = std::bit_cast<std::uint32_t>(uniform(rng));
  for (auto& x : b32) x = std::bit_cast<std::uint32_t>(uniform(rng));

  Buffer a32_buf = backend->allocate(a32.size() * 4), b32_buf = backend->allocate(b32.size() * 4);
  Buffer a16_buf = backend->allocate(a32.size() * 2), b16_buf = backend->allocate(b32.size() * 2);
  Buffer d_buf = backend->allocate(static_cast<std::size_t>(m * n) * 4);
  backend->copy_in(a32.data(), a32_buf, a32.size() * 4);
  backend->copy_in(b32.data(), b32_buf, b32.size() * 4);
  const BufferMatrix a32_m{&a32_buf, 0, formats::fp32, m, k, k, Layout::row_major};
  const BufferMatrix b32_m{&b32_buf, 0, formats::fp32, k, n, n, Layout::row_major};
  const BufferMatrix a16_m{&a16_buf, 0, formats::fp16, m, k, k, Layout::row_major};
  const BufferMatrix b16_m{&b16_buf, 0, formats::fp16, k, n, n, Layout::row_major};
  const BufferMatrix d_m{&d_buf, 0, formats::fp32, m, n, n, Layout::row_major};
  backend->convert(a32_m, a16_m, Rounding::nearest_even);
  backend->convert(b32_m, b16_m, Rounding::toward_zero);
  backend->mma_gemm(dp, {}, a16_m, b16_m, std::nullopt, d_m);

  std::vector<std::uint16_t> a16(a32.size()), b16(b32.size());
  for (std::size_t i = 0; i < a32.size(); ++i) {
    a16[i] = static_cast<std::uint16_t>(
        convert(formats::fp32, formats::fp16, a32[i], Rounding::nearest_even));
  }
  for (std::size_t i = 0; i < b32.size(); ++i) {
    b16[i] = static_cast<std::uint16_t>(
        convert(formats::fp32, formats::fp16, b32[i], Rounding::toward_zero));
  }
  std::vector<std::uint32_t> expected(m * n), got(m * n);
  emulated_gemm(dp, {},
                {reinterpret_cast<const unsigned char*>(a16.data()), formats::fp16, m, k, k,
                 Layout::row_major},
                {reinterpret_cast<const unsigned char*>(b16.data()), formats::fp16, k, n, n,
                 Layout::row_major},
                std::nullopt,
                {{reinterpret_cast<unsigned char*>(expected.data()), formats::fp32, m, n, n,
                  Layout::row_major}});
  backend->copy_out(d_buf, got.data(), got.size() * 4);
  EXPECT_TRUE(
      test::same_bits(expected, got, m, n,
                      {.order = test::Order::row_major,
                       .inputs =
                           [&](std::int64_t i, std::int64_t j) {
                             return "A row " + std::to_string(i) + ": " +
                                    test::hex_values(
                                        k, [&](std::int64_t p) { return a16[i * k + p]; }, 4) +
                                    "\nB column " + std::to_string(j) + ": " +
                                    test::hex_values(
                                        k, [&](std::int64_t p) { return b16[p * n + j]; }, 4);
                           },
                       .value = test::fp32_value}));
}

// A batch is that many single products; a batch that would read C, whose products differ in
// shape, or whose Ds overlap another D or an operand, is refused with the products named.
TEST(EmulatorBackend, GemmBatchIsOneGemmPerProduct) {
  auto backend = host::make_emulator_backend();
  const Datapath dp = preset("sm80", formats::fp16, formats::fp32);
  const std::int64_t m = 5, n = 6, k = 20, count = 3;
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<std::uint16_t> a(m * k * count), b(k * n * count);
  for (auto& x : a)
    x = static_cast<std::uint16_t>(convert(formats::fp32, formats::fp16,
                                           std::bit_cast<std::uint32_t>(uniform(rng)),
                                           Rounding::nearest_even));
  for (auto& x : b)
    x = static_cast<std::uint16_t>(convert(formats::fp32, formats::fp16,
                                           std::bit_cast<std::uint32_t>(uniform(rng)),
                                           Rounding::nearest_even));
  Buffer ab = backend->allocate(a.size() * 2), bb = backend->allocate(b.size() * 2);
  Buffer batched = backend->allocate(m * n * 4 * count),
         single = backend->allocate(m * n * 4 * count);
  backend->copy_in(a.data(), ab, ab.bytes());
  backend->copy_in(b.data(), bb, bb.bytes());
  std::vector<GemmProduct> batch;
  for (std::int64_t i = 0; i < count; ++i) {
    const BufferMatrix ai{
        &ab, static_cast<std::size_t>(i * m * k * 2), formats::fp16, m, k, k, Layout::row_major};
    const BufferMatrix bi{
        &bb, static_cast<std::size_t>(i * k * n * 2), formats::fp16, k, n, k, Layout::column_major};
    const auto d_at = [&](Buffer& buffer) {
      return BufferMatrix{&buffer,
                          static_cast<std::size_t>(i * m * n * 4),
                          formats::fp32,
                          m,
                          n,
                          m,
                          Layout::column_major};
    };
    batch.push_back({ai, bi, d_at(batched)});
    backend->mma_gemm(dp, {.alpha = 0.5f}, ai, bi, std::nullopt, d_at(single));
  }
  backend->mma_gemm_batch(dp, {.alpha = 0.5f}, batch);
  // The Ds one after the other, column major: m x (n count) fp32 elements.
  std::vector<std::uint32_t> got(batched.bytes() / 4), want(single.bytes() / 4);
  backend->copy_out(batched, got.data(), batched.bytes());
  backend->copy_out(single, want.data(), single.bytes());
  EXPECT_TRUE(test::same_bits(want, got, m, n * count,
                              {.inputs =
                                   [&](std::int64_t i, std::int64_t j) {
                                     return "product " + std::to_string(j / n) + ", D(" +
                                            std::to_string(i) + ", " + std::to_string(j % n) + ")";
                                   },
                               .value = test::fp32_value}));

  const auto message = [&](const GemmOptions& options, std::vector<GemmProduct> products) {
    try {
      backend->mma_gemm_batch(dp, options, products);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({.beta = 1.0f}, batch).find("a batch has no C"), std::string::npos);
  EXPECT_NE(message({.alpha = 1.0f, .beta = 1.0f, .c_input = CInput::initial_accumulator}, batch)
                .find("a batch has no C"),
            std::string::npos);
  std::vector<GemmProduct> mixed = batch;
  mixed[0].d.ld = m + 1;
  EXPECT_NE(message({}, mixed).find("product 1 differs from product 0"), std::string::npos);
  mixed = batch;
  mixed[2].d.offset_bytes -= 4;  // into product 1's D
  EXPECT_NE(message({}, mixed).find("D of product 1 overlaps D of product 2"), std::string::npos);
  mixed = batch;
  mixed[0].d = {&ab, m * k * 2, formats::fp32, m, n, m, Layout::column_major};  // on A of 1
  EXPECT_NE(message({}, mixed).find("D of product 0 overlaps A of product 1"), std::string::npos);
  mixed = batch;
  mixed[1].a.offset_bytes = ab.bytes();  // past A's buffer
  EXPECT_THROW(backend->mma_gemm_batch(dp, {}, mixed), std::out_of_range);
}

// A borrowed buffer is the caller's memory: steps read and write it in place, its end is checked
// like an allocated one's, and destroying it leaves the memory to its owner (the vectors below
// are freed by their destructors; a buffer that freed them too would free them twice).
TEST(EmulatorBackend, BorrowedBuffersWorkInPlaceAndAreNotFreed) {
  auto backend = host::make_emulator_backend();
  std::vector<std::uint32_t> source(6), destination(6, 0xFFFFFFFFu);
  for (int i = 0; i < 6; ++i)
    source[i] = std::bit_cast<std::uint32_t>(1.0f + 0.1f * static_cast<float>(i));
  {
    const Buffer in = backend->borrow(source.data(), source.size() * 4);
    const Buffer out = backend->borrow(destination.data(), destination.size() * 4);
    EXPECT_EQ(in.owner(), backend.get());
    const BufferMatrix a{&in, 0, formats::fp32, 2, 3, 3, Layout::row_major};
    const BufferMatrix b{&out, 0, formats::fp32, 2, 3, 3, Layout::row_major};
    backend->convert(a, b, Rounding::nearest_even);
    const BufferMatrix past{&out, 4, formats::fp32, 2, 3, 3, Layout::row_major};
    EXPECT_THROW(backend->convert(a, past, Rounding::nearest_even), std::out_of_range);
  }
  EXPECT_EQ(destination, source);  // written in place, through the borrowed buffer
  EXPECT_THROW(backend->borrow(nullptr, 8), std::invalid_argument);
  EXPECT_EQ(backend->borrow(nullptr, 0).bytes(), 0u);
}

TEST(EmulatorBackend, MatricesPastTheirBufferAreRefused) {
  auto backend = host::make_emulator_backend();
  Buffer small = backend->allocate(100);
  const BufferMatrix too_big{&small, 0, formats::fp32, 5, 6, 6, Layout::row_major};  // 120 bytes
  const BufferMatrix fits{&small, 0, formats::fp16, 5, 6, 6, Layout::row_major};     // 60 bytes
  try {
    backend->convert(fits, too_big, Rounding::nearest_even);
    ADD_FAILURE() << "overrun accepted";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("matrix destination (5 x 6, ld 6) ends at byte 120"),
              std::string::npos)
        << e.what();
  }
  const BufferMatrix bad_ld{&small, 0, formats::fp16, 5, 6, 4, Layout::row_major};
  EXPECT_THROW(backend->convert(fits, bad_ld, Rounding::nearest_even), std::invalid_argument);
}

}  // namespace
}  // namespace tcemu

// Bit-for-bit comparison of two matrices for GoogleTest, with a failure message that says what
// differs: how many of the rows x cols elements, then the first few (10 unless told) with their
// (row, column), the expected and the got bit patterns in hex and what they read as, and, where
// the caller describes them, the element's inputs.
//
//   EXPECT_TRUE(tcemu::test::same_bits(expected, got, m, n, {.inputs = describe}));
//
//   3 of 3500 elements (70 x 50, column major) differ:
//     (2, 7): expected 0x3ff0000000000000 (1, 0x1p+0)
//             got      0x3ff0000000000001 (1.0000000000000002, 0x1.0000000000001p+0)
//             inputs   C 0x3fe0000000000000, A row 2: 130 values, |x| in [0x1p-40, 0x1.8p+3]
//     ...
//
// Elements are unsigned integers holding bit patterns (uint8/16/32/64), signed integers, or float
// and double, which are compared by their bits (so -0 differs from +0 and equal NaNs are equal).
// Element (i, j) of an array is at j ld + i (column major, the default) or i ld + j (row major);
// ld 0 means dense. The accessor forms (same_bits_at) take functions (i, j) -> element instead,
// for views of any layout or container (a MatrixView's get(i, j), say).
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <concepts>
#include <cstdint>
#include <functional>
#include <ranges>
#include <string>
#include <type_traits>

namespace tcemu::test {

enum class Order { column_major, row_major };

struct SameBitsOptions {
  Order order = Order::column_major;  // where (i, j) lies in the arrays; also the listing order
  std::int64_t ld = 0;                // elements between columns (rows, row major); 0: dense
  std::int64_t listed = 10;           // how many differing elements the message lists
  // The element's inputs, in words (C's element, a description of row i of A and column j of B,
  // the input bits of an elementwise step, "padding"): on the message's "inputs" line. Optional.
  std::function<std::string(std::int64_t i, std::int64_t j)> inputs = {};
  // What a bit pattern reads as (a decimal, %a, a value of a format the element type does not
  // name: fp16 bits in a uint16, say). Optional: by default the element type's own reading
  // (floats: %.9g / %.17g and %a; integers: decimal).
  std::function<std::string(std::uint64_t bits)> value = {};
};

// The outcome of a comparison: the count for a report line, the assertion for EXPECT_TRUE (on
// success its message is the count: "0 of 3500 elements (70 x 50, column major) differ").
struct BitComparison {
  std::int64_t differing = 0;  // elements whose bits differ; -1: not compared (arrays too short)
  std::int64_t total = 0;      // rows x cols
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
};

template <typename T>
concept BitElement = (std::integral<T> && !std::same_as<T, bool>) || std::same_as<T, float> ||
                     std::same_as<T, double>;

namespace detail {

struct ElementPair {
  std::uint64_t expected, got;
};

// The comparison itself: at(i, j) gives both elements' bits, `digits` hex digits wide.
BitComparison compare(std::int64_t rows, std::int64_t cols, int digits,
                      const std::function<ElementPair(std::int64_t, std::int64_t)>& at,
                      const std::function<std::string(std::uint64_t)>& natural_value,
                      const SameBitsOptions& options);

// A failed comparison that never looked at an element (arrays too short, negative extents).
BitComparison refused(const std::string& why);

std::string float_value(float v);
std::string double_value(double v);
std::string signed_value(std::int64_t v);
std::string unsigned_value(std::uint64_t v);

template <BitElement T>
using Bits = std::conditional_t<
    sizeof(T) == 1, std::uint8_t,
    std::conditional_t<sizeof(T) == 2, std::uint16_t,
                       std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;

template <BitElement T>
std::uint64_t bits_of(T v) {
  return std::bit_cast<Bits<T>>(v);
}

// How a bit pattern of T reads, by default.
template <BitElement T>
std::string natural_value(std::uint64_t bits) {
  const T v = std::bit_cast<T>(static_cast<Bits<T>>(bits));
  if constexpr (std::same_as<T, float>) {
    return float_value(v);
  } else if constexpr (std::same_as<T, double>) {
    return double_value(v);
  } else if constexpr (std::is_signed_v<T>) {
    return signed_value(v);
  } else {
    return unsigned_value(v);
  }
}

}  // namespace detail

// Accessor form: expected_at(i, j) and got_at(i, j) give element (i, j), of one BitElement type.
template <typename ExpectedAt, typename GotAt>
requires BitElement<std::invoke_result_t<const ExpectedAt&, std::int64_t, std::int64_t>> &&
    std::same_as<std::invoke_result_t<const ExpectedAt&, std::int64_t, std::int64_t>,
                 std::invoke_result_t<const GotAt&, std::int64_t, std::int64_t>>
        BitComparison compare_bits_at(std::int64_t rows, std::int64_t cols,
                                      const ExpectedAt& expected_at, const GotAt& got_at,
                                      const SameBitsOptions& options = {}) {
  using T = std::invoke_result_t<const ExpectedAt&, std::int64_t, std::int64_t>;
  return detail::compare(
      rows, cols, 2 * static_cast<int>(sizeof(T)),
      [&](std::int64_t i, std::int64_t j) {
        return detail::ElementPair{detail::bits_of(expected_at(i, j)),
                                   detail::bits_of(got_at(i, j))};
      },
      detail::natural_value<T>, options);
}

// Array form: two contiguous ranges (std::vector, std::span, ...) of one BitElement type holding
// rows x cols elements laid out as options.order and options.ld say.
template <std::ranges::contiguous_range Expected, std::ranges::contiguous_range Got>
requires BitElement<std::ranges::range_value_t<Expected>> &&
    std::same_as<std::ranges::range_value_t<Expected>, std::ranges::range_value_t<Got>>
        BitComparison compare_bits(const Expected& expected, const Got& got, std::int64_t rows,
                                   std::int64_t cols, const SameBitsOptions& options = {}) {
  const bool by_columns = options.order == Order::column_major;
  const std::int64_t inner = by_columns ? rows : cols, outer = by_columns ? cols : rows;
  const std::int64_t ld = options.ld > 0 ? options.ld : inner;
  if (rows < 0 || cols < 0 || ld < inner) {
    return detail::refused("bad shape: " + std::to_string(rows) + " x " + std::to_string(cols) +
                           ", ld " + std::to_string(ld));
  }
  const std::int64_t needed = rows == 0 || cols == 0 ? 0 : (outer - 1) * ld + inner;
  const auto e_size = static_cast<std::int64_t>(std::ranges::size(expected));
  const auto g_size = static_cast<std::int64_t>(std::ranges::size(got));
  if (e_size < needed || g_size < needed) {
    return detail::refused(std::to_string(rows) + " x " + std::to_string(cols) + " (ld " +
                           std::to_string(ld) + ") needs " + std::to_string(needed) +
                           " elements; expected holds " + std::to_string(e_size) + ", got " +
                           std::to_string(g_size));
  }
  const auto* e = std::ranges::data(expected);
  const auto* g = std::ranges::data(got);
  const auto index = [=](std::int64_t i, std::int64_t j) {
    return static_cast<std::size_t>(by_columns ? j * ld + i : i * ld + j);
  };
  return compare_bits_at(
      rows, cols, [&](std::int64_t i, std::int64_t j) { return e[index(i, j)]; },
      [&](std::int64_t i, std::int64_t j) { return g[index(i, j)]; }, options);
}

// The same, as an assertion: EXPECT_TRUE(same_bits(expected, got, rows, cols, {...})).
template <typename Expected, typename Got>
::testing::AssertionResult same_bits(const Expected& expected, const Got& got, std::int64_t rows,
                                     std::int64_t cols,
                                     const SameBitsOptions& options = {}) requires requires {
  compare_bits(expected, got, rows, cols, options);
}
{ return compare_bits(expected, got, rows, cols, options).result; }

template <typename ExpectedAt, typename GotAt>
::testing::AssertionResult same_bits_at(std::int64_t rows, std::int64_t cols,
                                        const ExpectedAt& expected_at, const GotAt& got_at,
                                        const SameBitsOptions& options = {}) requires requires {
  compare_bits_at(rows, cols, expected_at, got_at, options);
}
{ return compare_bits_at(rows, cols, expected_at, got_at, options).result; }

// Short descriptions for `inputs`. hex_values: the first `shown` bit patterns of a vector,
// `digits` hex digits each ("3c00 bc00 0001 ... (77 values)"). value_range: what a vector of
// values spans ("130 values, |x| in [0x1p-40, 0x1.8p+3], 2 zeros, 1 NaN, 1 Inf").
std::string hex_values(std::int64_t count, const std::function<std::uint64_t(std::int64_t)>& at,
                       int digits, std::int64_t shown = 8);
std::string value_range(std::int64_t count, const std::function<double(std::int64_t)>& at);

// One bit pattern in hex, `digits` wide, with 0x ("0x3c00"); hex_of: an element's own bits
// ("0x3ff0000000000000" for 1.0).
std::string hex(std::uint64_t bits, int digits);
template <BitElement T>
std::string hex_of(T v) {
  return hex(detail::bits_of(v), 2 * static_cast<int>(sizeof(T)));
}

// `inputs` for C = A B (+ C) with A m x k and B k x n column major (lda = m, ldb = k, ldc = m),
// float or double: what row i of A and column j of B span, and C's element where c is given.
// The arrays must outlive the comparison.
template <typename T>
requires std::same_as<T, float> || std::same_as<T, double>
    std::function<std::string(std::int64_t, std::int64_t)> gemm_inputs(std::int64_t m,
                                                                       std::int64_t k, const T* a,
                                                                       const T* b,
                                                                       const T* c = nullptr) {
  return [=](std::int64_t i, std::int64_t j) {
    std::string out =
        "A row " + std::to_string(i) + ": " +
        value_range(k, [=](std::int64_t p) { return static_cast<double>(a[p * m + i]); }) +
        "\nB column " + std::to_string(j) + ": " +
        value_range(k, [=](std::int64_t p) { return static_cast<double>(b[j * k + p]); });
    if (c) out += "\nC " + hex_of(c[j * m + i]);
    return out;
  };
}

// Readings for SameBitsOptions::value of bit patterns held in a wider or integer type.
std::string fp32_value(std::uint64_t bits);
std::string fp64_value(std::uint64_t bits);

}  // namespace tcemu::test

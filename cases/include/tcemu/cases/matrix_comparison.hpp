// Whole-matrix comparison of bit patterns: which elements of a result differ from the expected
// ones, and by how much. `tcemu validate`, the kernel-test check (gemm_check.hpp) and the Python
// package report through it.
//
//   3 of 4096 elements (64 x 64) differ (0.073%); max distance 2 ulps
//   ulps   1: 2
//   ulps 2-3: 1
//   (5, 17): expected 0x3f800001 (1.00000012), got 0x3f800000 (1), 1 ulp
//            inputs ...
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu {

// The distance of two bit patterns of `f` in units in the last place: how many steps between
// consecutive values of `f` lead from one to the other. Patterns are mapped onto consecutive
// integers in value order (sign-magnitude to two's complement, after dropping the padding bits),
// so +0 and -0 are 0 ulps apart and the largest finite number is 1 ulp from Inf. Nothing when
// either is a NaN (NaN has no place in the order).
std::optional<std::uint64_t> ulp_distance(const FloatFormat& f, std::uint32_t a, std::uint32_t b);

struct DifferingElement {
  std::int64_t row = 0;
  std::int64_t col = 0;
  std::uint32_t expected = 0;
  std::uint32_t got = 0;
  std::optional<std::uint64_t> ulps;  // nothing: a NaN on either side
};

struct MatrixComparison {
  FloatFormat format;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t differing = 0;     // elements whose bits differ
  std::int64_t nan_involved = 0;  // of those, elements with a NaN on either side (no distance)
  std::uint64_t max_ulps = 0;     // the largest distance among the others
  // ulp_histogram[w] counts the differing elements with a distance d of bit width w: [0] holds
  // those equal in value but not in bits (+0 against -0), [1] d = 1, [2] d in 2..3, [3] 4..7, ...
  std::array<std::int64_t, 65> ulp_histogram{};
  std::vector<DifferingElement> first;  // the first differing elements, row by row

  bool equal() const { return differing == 0; }
  double share() const {  // differing / (rows x cols); 0 for an empty matrix
    const std::int64_t total = rows * cols;
    return total == 0 ? 0.0 : static_cast<double>(differing) / static_cast<double>(total);
  }
};

// Compares `got` with `expected` element by element, bit for bit (the views may differ in ld and
// layout); keeps the first `listed` differing elements in row-major order. Throws
// std::invalid_argument when the shapes or formats differ.
MatrixComparison compare_matrices(ConstMatrixView expected, ConstMatrixView got,
                                  std::int64_t listed = 10);

// The comparison as text: a summary line, the histogram of ulp distances, then each listed
// element with its (row, column), both bit patterns with their values, the distance, and, where
// `inputs` is given, a line saying what the element was computed from.
std::string format_comparison(
    const MatrixComparison& comparison,
    const std::function<std::string(std::int64_t row, std::int64_t col)>& inputs = {});

}  // namespace tcemu

#include <tcemu/cases/gemm_check.hpp>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/convert.hpp>

namespace tcemu {

namespace {

// check_gemm with or without scales (nullptr).
GemmCheck check(const Datapath& datapath, const GemmOptions& options, ConstMatrixView a,
                ConstMatrixView b, const BlockScales* scales, std::optional<ConstMatrixView> c,
                ConstMatrixView got, std::int64_t listed) {
  if (!(got.format == datapath.accumulator)) {
    throw std::invalid_argument("check_gemm: the result holds " + std::string(got.format.name) +
                                ", the datapath accumulates in " +
                                std::string(datapath.accumulator.name));
  }
  std::vector<unsigned char> storage(static_cast<std::size_t>(got.rows * got.cols) *
                                     container_bytes(got.format));
  const MatrixView expected{
      {storage.data(), got.format, got.rows, got.cols, got.cols, Layout::row_major}};
  if (scales) {
    emulated_gemm(datapath, options, a, b, *scales, c, expected);
  } else {
    emulated_gemm(datapath, options, a, b, c, expected);
  }
  GemmCheck check;
  check.comparison = compare_matrices(expected, got, listed);
  check.report = format_comparison(check.comparison, [&](std::int64_t i, std::int64_t j) {
    return gemm_element_inputs(datapath, options, a, b, c, i, j, scales);
  });
  return check;
}

}  // namespace

GemmCheck check_gemm(const Datapath& datapath, const GemmOptions& options, ConstMatrixView a,
                     ConstMatrixView b, std::optional<ConstMatrixView> c, ConstMatrixView got,
                     std::int64_t listed) {
  return check(datapath, options, a, b, nullptr, c, got, listed);
}

GemmCheck check_gemm(const Datapath& datapath, const GemmOptions& options, ConstMatrixView a,
                     ConstMatrixView b, const BlockScales& scales, std::optional<ConstMatrixView> c,
                     ConstMatrixView got, std::int64_t listed) {
  return check(datapath, options, a, b, &scales, c, got, listed);
}

std::string gemm_element_inputs(const Datapath& datapath, const GemmOptions& options,
                                ConstMatrixView a, ConstMatrixView b,
                                std::optional<ConstMatrixView> c, std::int64_t i, std::int64_t j,
                                const BlockScales* scales) {
  const std::uint32_t c_bits = c ? c->get(i, j) : 0;
  const bool c_starts_chain = options.c_input == CInput::initial_accumulator;
  const std::string c_text =
      (c ? "C 0x" + to_hex(datapath.accumulator, c_bits) : std::string("no C")) +
      (c && !c_starts_chain ? " (epilogue)" : "");
  const bool one_chain = options.takeout_every_k == 0 || options.takeout_every_k >= a.cols;
  // A block-scaled instruction is 32 or 64 k long: its case line is shown whole.
  if (a.cols <= (scales ? 64 : 16) && one_chain) {
    MmaCase element;
    element.c = c_starts_chain ? c_bits : 0;
    for (std::int64_t k = 0; k < a.cols; ++k) {
      element.a.push_back(a.get(i, k));
      element.b.push_back(b.get(k, j));
    }
    for (std::int64_t s = 0; scales && s < scales->a.cols; ++s) {
      element.scale_a.push_back(scales->a.get(i, s));
      element.scale_b.push_back(scales->b.get(s, j));
    }
    return c_text + "; case line: " + format_case_line(element, datapath);
  }
  double smallest = INFINITY, largest = 0;
  std::int64_t nonzero = 0;
  for (std::int64_t k = 0; k < a.cols; ++k) {
    const double p = std::fabs(to_double(datapath.input, a.get(i, k)) *
                               to_double(datapath.b_format(), b.get(k, j)));
    if (p == 0 || std::isnan(p)) continue;
    ++nonzero;
    smallest = std::fmin(smallest, p);
    largest = std::fmax(largest, p);
  }
  char range[96];
  std::snprintf(range, sizeof range, "%a, %a", smallest, largest);
  return c_text + "; row " + std::to_string(i) + " of A, column " + std::to_string(j) +
         " of B: K = " + std::to_string(a.cols) + ", " + std::to_string(nonzero) +
         " nonzero products" + (scales ? " (unscaled)" : "") +
         (nonzero > 0 ? ", |a b| in [" + std::string(range) + "]" : "");
}

}  // namespace tcemu

#include <tcemu/cases/gemm_check.hpp>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/convert.hpp>

namespace tcemu {

GemmCheck check_gemm(const Datapath& datapath, const GemmOptions& options, ConstMatrixView a,
                     ConstMatrixView b, std::optional<ConstMatrixView> c, ConstMatrixView got,
                     std::int64_t listed) {
  if (!(got.format == datapath.accumulator)) {
    throw std::invalid_argument("check_gemm: the result holds " + std::string(got.format.name) +
                                ", the datapath accumulates in " +
                                std::string(datapath.accumulator.name));
  }
  std::vector<unsigned char> storage(static_cast<std::size_t>(got.rows * got.cols) *
                                     container_bytes(got.format));
  const MatrixView expected{
      {storage.data(), got.format, got.rows, got.cols, got.cols, Layout::row_major}};
  emulated_gemm(datapath, options, a, b, c, expected);
  GemmCheck check;
  check.comparison = compare_matrices(expected, got, listed);
  check.report = format_comparison(check.comparison, [&](std::int64_t i, std::int64_t j) {
    return gemm_element_inputs(datapath, options, a, b, c, i, j);
  });
  return check;
}

std::string gemm_element_inputs(const Datapath& datapath, const GemmOptions& options,
                                ConstMatrixView a, ConstMatrixView b,
                                std::optional<ConstMatrixView> c, std::int64_t i, std::int64_t j) {
  const std::uint32_t c_bits = c ? c->get(i, j) : 0;
  const bool c_starts_chain = options.c_input == CInput::initial_accumulator;
  const std::string c_text =
      (c ? "C 0x" + to_hex(datapath.accumulator, c_bits) : std::string("no C")) +
      (c && !c_starts_chain ? " (epilogue)" : "");
  const bool one_chain = options.takeout_every_k == 0 || options.takeout_every_k >= a.cols;
  if (a.cols <= 16 && one_chain) {
    MmaCase element;
    element.c = c_starts_chain ? c_bits : 0;
    for (std::int64_t k = 0; k < a.cols; ++k) {
      element.a.push_back(a.get(i, k));
      element.b.push_back(b.get(k, j));
    }
    return c_text +
           "; case line: " + format_case_line(element, datapath.input, datapath.accumulator);
  }
  double smallest = INFINITY, largest = 0;
  std::int64_t nonzero = 0;
  for (std::int64_t k = 0; k < a.cols; ++k) {
    const double p =
        std::fabs(to_double(datapath.input, a.get(i, k)) * to_double(datapath.input, b.get(k, j)));
    if (p == 0 || std::isnan(p)) continue;
    ++nonzero;
    smallest = std::fmin(smallest, p);
    largest = std::fmax(largest, p);
  }
  char range[96];
  std::snprintf(range, sizeof range, "%a, %a", smallest, largest);
  return c_text + "; row " + std::to_string(i) + " of A, column " + std::to_string(j) +
         " of B: K = " + std::to_string(a.cols) + ", " + std::to_string(nonzero) +
         " nonzero products" + (nonzero > 0 ? ", |a b| in [" + std::string(range) + "]" : "");
}

}  // namespace tcemu

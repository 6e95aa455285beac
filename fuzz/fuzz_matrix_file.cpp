// libFuzzer target: the matrix-file reader of `tcemu gemm` (cli/matrix_file.hpp).
//
// Input: one byte choosing fp64 or fp32 elements, then the file's bytes. A malformed file
// (std::runtime_error naming the line) is a normal outcome. A file that reads must hold
// ROWS x COLS values and survive the round trip through write_matrix: the written text reads
// back as the same matrix (NaNs compared as NaNs: an fp32 signalling NaN is widened to double).
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

#include "matrix_file.hpp"

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "matrix file: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const tcemu::Real type = data[0] % 2 == 0 ? tcemu::Real::fp64 : tcemu::Real::fp32;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  tcemu::cli::DenseMatrix m;
  try {
    m = tcemu::cli::read_matrix(in, "fuzz", type);
  } catch (const std::runtime_error&) {
    return 0;
  }
  if (m.rows < 0 || m.cols < 0 ||
      static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(m.cols) != m.values.size()) {
    finding("the matrix does not hold ROWS x COLS values");
  }
  std::ostringstream out;
  tcemu::cli::write_matrix(out, m, type);
  std::istringstream back_in(out.str());
  const tcemu::cli::DenseMatrix back = tcemu::cli::read_matrix(back_in, "written", type);
  if (back.rows != m.rows || back.cols != m.cols || back.values.size() != m.values.size()) {
    finding("the written matrix reads back with another shape");
  }
  for (std::size_t i = 0; i < m.values.size(); ++i) {
    const double x = m.values[i], y = back.values[i];
    if (std::isnan(x) ? !std::isnan(y)
                      : std::bit_cast<std::uint64_t>(x) != std::bit_cast<std::uint64_t>(y)) {
      finding("the written matrix reads back with other values");
    }
  }
  return 0;
}

// Matrix files of `tcemu gemm`: a first line `ROWS COLS`, then ROWS lines of COLS hex bit
// patterns (16 digits for fp64, 8 for fp32), row major. Blank lines and lines starting with #
// are skipped. ROWS and COLS are decimal digits only; an R x 0 matrix has no row lines.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>

namespace tcemu::cli {

// A dense matrix in column-major order (the BLAS order the schemes take), fp32 values widened.
struct DenseMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<double> values;  // values[j * rows + i]
};

// Reads `path` with elements of `type`; throws std::runtime_error naming the file and line.
DenseMatrix read_matrix_file(const std::string& path, Real type);

// The same on an open stream; `name` stands for the file in messages (fuzz/ reads bytes).
DenseMatrix read_matrix(std::istream& in, const std::string& name, Real type);

// Writes `m` (fp32: each value must be a binary32 value) to `path`.
void write_matrix_file(const std::string& path, const DenseMatrix& m, Real type);

// The same on a stream; the caller checks the stream's state.
void write_matrix(std::ostream& out, const DenseMatrix& m, Real type);

}  // namespace tcemu::cli

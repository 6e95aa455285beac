// libFuzzer target: the matrix-file readers (cli/matrix_file.hpp: hex text; cli/npy_file.hpp:
// .npy).
//
// Input: byte 0 chooses the element type (bit 0: fp64 or fp32; bit 1 set: fp16 or e4m3 instead)
// and the reader (bit 2: .npy, else text); the rest is the file's bytes. A malformed file
// (std::runtime_error naming what is wrong) is a normal outcome. A file that reads holds
// ROWS x COLS elements and survives the round trip through both writers: what write_text_matrix
// and write_npy write reads back as the same bits.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

#include "matrix_file.hpp"
#include "npy_file.hpp"

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "matrix file: %s\n", what);
  std::abort();
}

void expect_same(const tcemu::cli::BitMatrix& m, const tcemu::cli::BitMatrix& back) {
  if (back.rows != m.rows || back.cols != m.cols || back.bytes.size() != m.bytes.size()) {
    finding("the written matrix reads back with another shape");
  }
  for (std::int64_t i = 0; !m.bytes.empty() && i < m.rows; ++i) {
    for (std::int64_t j = 0; j < m.cols; ++j) {
      if (m.get(i, j) != back.get(i, j)) finding("the written matrix reads back with other bits");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tcemu::cli;
  if (size == 0) return 0;
  const bool narrow = (data[0] & 2) != 0, npy = (data[0] & 4) != 0;
  const ElementType type =
      narrow ? element_type((data[0] & 1) ? tcemu::formats::e4m3 : tcemu::formats::fp16)
             : element_type((data[0] & 1) ? tcemu::Real::fp32 : tcemu::Real::fp64);
  std::istringstream in(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  BitMatrix m;
  try {
    m = npy ? read_npy(in, "fuzz", type) : read_text_matrix(in, "fuzz", type);
  } catch (const std::runtime_error&) {
    return 0;
  }
  if (m.rows < 0 || m.cols < 0 ||
      (m.rows != 0 && m.cols != 0 &&
       m.bytes.size() / static_cast<std::size_t>(type.bytes()) / static_cast<std::size_t>(m.rows) !=
           static_cast<std::size_t>(m.cols))) {
    finding("the matrix does not hold ROWS x COLS elements");
  }
  std::ostringstream text, binary;
  write_text_matrix(text, m);
  write_npy(binary, m);
  std::istringstream text_in(text.str()), binary_in(binary.str());
  expect_same(m, read_text_matrix(text_in, "written text", type));
  expect_same(m, read_npy(binary_in, "written npy", type));
  return 0;
}

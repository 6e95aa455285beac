// A row-major matrix of a format's codes, as the tests of the block-scaled and mixed-format GEMMs
// build their operands and scales (tests/emulator/scaled_fast_path_test.cpp, the caller-state
// matrix's tests/caller_state/scaled_gemms.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu::test {

struct Codes {
  FloatFormat format;
  std::int64_t rows, cols;
  std::vector<std::uint32_t> words;  // the codes, row-major
  std::vector<unsigned char> bytes;  // what view() shows: pack()'s copy of words

  Codes(const FloatFormat& f, std::int64_t r, std::int64_t c)
      : format(f), rows(r), cols(c), words(static_cast<std::size_t>(r * c)) {}
  std::uint32_t& at(std::int64_t i, std::int64_t j) {
    return words[static_cast<std::size_t>(i * cols + j)];
  }
  // bytes := each word's low container_bytes(format) bytes, little endian, as they are: bits
  // above a narrow code (FP6, FP4 in a byte) stay, as a caller's bytes may hold them.
  void pack() {
    const std::size_t size = container_bytes(format);
    bytes.clear();
    bytes.reserve(words.size() * size);
    for (const std::uint32_t w : words) {
      for (std::size_t b = 0; b < size; ++b)
        bytes.push_back(static_cast<unsigned char>(w >> (8 * b)));
    }
  }
  // The matrix emulated_gemm reads, as of the last pack().
  ConstMatrixView view() const {
    return {bytes.data(), format, rows, cols, cols, Layout::row_major};
  }
};

}  // namespace tcemu::test

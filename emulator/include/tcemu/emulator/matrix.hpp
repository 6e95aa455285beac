// A view of a matrix of raw bit patterns of one format, as BLAS describes it: rows, columns,
// leading dimension and storage order. Elements are stored in the smallest container that holds
// the format (1 byte for fp8, 2 for fp16/bf16, 4 for tf32/fp32).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <tcemu/emulator/format.hpp>

namespace tcemu {

enum class Layout { row_major, column_major };

constexpr std::size_t container_bytes(const FloatFormat& f) {
  return f.container_bits() <= 8 ? 1 : f.container_bits() <= 16 ? 2 : 4;
}

template <typename Byte>
struct BasicMatrixView {
  Byte* data;
  FloatFormat format;
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t ld;  // elements between consecutive rows (row major) or columns (column major)
  Layout layout;

  std::size_t offset(std::int64_t i, std::int64_t j) const {
    const std::int64_t index = layout == Layout::row_major ? i * ld + j : j * ld + i;
    return static_cast<std::size_t>(index) * container_bytes(format);
  }
  std::uint32_t get(std::int64_t i, std::int64_t j) const {
    const Byte* p = data + offset(i, j);
    switch (container_bytes(format)) {
      case 1:
        return std::to_integer<std::uint32_t>(static_cast<std::byte>(*p));
      case 2: {
        std::uint16_t v;
        std::memcpy(&v, p, 2);
        return v;
      }
      default: {
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        return v;
      }
    }
  }
};

using ConstMatrixView = BasicMatrixView<const unsigned char>;

struct MatrixView : BasicMatrixView<unsigned char> {
  void set(std::int64_t i, std::int64_t j, std::uint32_t bits) const {
    unsigned char* p = data + offset(i, j);
    switch (container_bytes(format)) {
      case 1:
        *p = static_cast<unsigned char>(bits);
        break;
      case 2: {
        const auto v = static_cast<std::uint16_t>(bits);
        std::memcpy(p, &v, 2);
        break;
      }
      default:
        std::memcpy(p, &bits, 4);
        break;
    }
  }
  operator ConstMatrixView() const { return {data, format, rows, cols, ld, layout}; }
};

}  // namespace tcemu

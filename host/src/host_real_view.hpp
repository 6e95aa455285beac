// Host access to the elements of a RealMatrix whose buffer lives in host memory (the emulator
// and cpu64 backends).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <tcemu/backend/backend.hpp>
#include <tcemu/emulator/fp64_bits.hpp>

namespace tcemu::detail {

struct HostReal {
  unsigned char* data = nullptr;
  Real type = Real::fp64;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 1;
  Layout layout = Layout::row_major;

  HostReal() = default;
  explicit HostReal(const RealMatrix& m)
      : data(static_cast<unsigned char*>(m.buffer->address()) + m.offset_bytes),
        type(m.format),
        rows(m.rows),
        cols(m.cols),
        ld(m.ld),
        layout(m.layout) {}

  std::size_t index(std::int64_t i, std::int64_t j) const {
    return static_cast<std::size_t>(layout == Layout::row_major ? i * ld + j : j * ld + i);
  }
  // The element as a double (fp32 widens exactly, fp64::widen).
  double get(std::int64_t i, std::int64_t j) const {
    if (type == Real::fp64) {
      double v;
      std::memcpy(&v, data + index(i, j) * 8, 8);
      return v;
    }
    std::uint32_t v;
    std::memcpy(&v, data + index(i, j) * 4, 4);
    return fp64::widen(v);
  }
  // The element's bit pattern (fp32: in the low 32 bits).
  std::uint64_t bits(std::int64_t i, std::int64_t j) const {
    if (type == Real::fp64) {
      std::uint64_t v;
      std::memcpy(&v, data + index(i, j) * 8, 8);
      return v;
    }
    std::uint32_t v;
    std::memcpy(&v, data + index(i, j) * 4, 4);
    return v;
  }
  // Stores the element's bit pattern (fp32: the low 32 bits).
  void set_bits(std::int64_t i, std::int64_t j, std::uint64_t bits) const {
    if (type == Real::fp64) {
      std::memcpy(data + index(i, j) * 8, &bits, 8);
    } else {
      const auto low = static_cast<std::uint32_t>(bits);
      std::memcpy(data + index(i, j) * 4, &low, 4);
    }
  }
  // Stores v in an element of v's type (double: fp64, float: fp32).
  template <class T>
  void set(std::int64_t i, std::int64_t j, T v) const {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8);
    set_bits(i, j,
             std::bit_cast<std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>>(v));
  }
  double* fp64_at(std::int64_t i, std::int64_t j) const {
    return reinterpret_cast<double*>(data + index(i, j) * 8);
  }
};

}  // namespace tcemu::detail

#include "crt_steps.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <tcemu/emulator/parallel_for.hpp>

#include "host_real_view.hpp"

namespace tcemu::detail {
namespace {

namespace el = crt_elements;

std::int32_t* shift_data(const ExponentVector& v) {
  return reinterpret_cast<std::int32_t*>(static_cast<unsigned char*>(v.buffer->address()) +
                                         v.offset_bytes);
}

}  // namespace

int host_crt_scale(const RealMatrix& x, SplitAxis axis, int max_bits, const ExponentVector& shifts,
                   int threads) {
  const HostReal in(x);
  const bool rows = axis == SplitAxis::rows;
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  std::vector<int> bits(static_cast<std::size_t>(vectors), 0);
  std::int32_t* out = shift_data(shifts);
  parallel_for(threads, vectors, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t v = begin; v < end; ++v) {
      el::VectorBits b;
      for (std::int64_t p = 0; p < length; ++p) b.add(rows ? in.get(v, p) : in.get(p, v));
      out[v] = b.shift(max_bits);
      bits[static_cast<std::size_t>(v)] = b.exact_bits();
    }
  });
  return bits.empty() ? 0 : *std::max_element(bits.begin(), bits.end());
}

void host_crt_residues(const RealMatrix& x, SplitAxis axis, const ExponentVector& shifts,
                       std::span<const IntegerMatrix> out, int threads) {
  const HostReal in(x);
  const bool rows = axis == SplitAxis::rows;
  const std::int32_t* shift = shift_data(shifts);
  parallel_for(threads, x.rows, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      for (std::int64_t j = 0; j < x.cols; ++j) {
        const double value = in.get(i, j);
        const int s = shift[rows ? i : j];
        for (std::size_t l = 0; l < out.size(); ++l) {
          const IntegerMatrix& o = out[l];
          const std::int64_t at = o.layout == Layout::row_major ? i * o.ld + j : j * o.ld + i;
          static_cast<std::int8_t*>(o.buffer->address())[o.offset_bytes + at] =
              static_cast<std::int8_t>(el::scaled_residue(value, s, el::kModuli[l]));
        }
      }
    }
  });
}

void host_crt_reconstruct(const RealMatrixStack& products, const crt_elements::Table& table,
                          const OuterExponents& shifts, const RealMatrix& dst, int threads) {
  std::vector<HostReal> layers;
  for (std::int64_t l = 0; l < products.count; ++l) {
    RealMatrix m = products.first;
    m.offset_bytes += static_cast<std::size_t>(l) * products.stride_bytes;
    layers.emplace_back(m);
  }
  const HostReal out(dst);
  const std::int32_t* row_shift = shift_data(shifts.rows);
  const std::int32_t* col_shift = shift_data(shifts.columns);
  parallel_for(threads, dst.cols, 4, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      for (std::int64_t i = 0; i < dst.rows; ++i) {
        const auto product = [&](int l) { return layers[static_cast<std::size_t>(l)].get(i, j); };
        out.set(i, j, el::reconstruct(table, product, std::int64_t{row_shift[i]} + col_shift[j]));
      }
    }
  });
}

}  // namespace tcemu::detail

// The checks of the tensor-core steps (tensor_core_steps.hpp); the arithmetic is each backend's.
#include <algorithm>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <tcemu/backend/tensor_core_steps.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>

namespace tcemu {
namespace {

// The bytes [begin, end) a checked, nonempty BufferMatrix spans in its buffer (its padding
// between vectors included).
struct Extent {
  const Buffer* buffer;
  std::size_t begin, end;
  std::size_t product;  // of the batch
};

Extent extent_of(const BufferMatrix& m, std::size_t product) {
  const std::int64_t inner = m.layout == Layout::row_major ? m.cols : m.rows;
  const std::int64_t outer = m.layout == Layout::row_major ? m.rows : m.cols;
  const std::size_t bytes =
      static_cast<std::size_t>((outer - 1) * m.ld + inner) * container_bytes(m.format);
  return {m.buffer, m.offset_bytes, m.offset_bytes + bytes, product};
}

// Throws std::invalid_argument naming the products when a D of the batch overlaps another
// product's D, or any product's A or B: the D extents sorted by place, neighbours must not
// overlap, and each A or B must not overlap the last D that starts before its end.
void check_batch_overlaps(const std::string& backend_name, std::span<const GemmProduct> batch) {
  if (batch.front().d.rows == 0 || batch.front().d.cols == 0) return;
  const auto before = [](const Extent& x, const Extent& y) {
    return x.buffer != y.buffer ? std::less<const Buffer*>()(x.buffer, y.buffer)
                                : x.begin < y.begin;
  };
  std::vector<Extent> ds;
  for (std::size_t i = 0; i < batch.size(); ++i) ds.push_back(extent_of(batch[i].d, i));
  std::sort(ds.begin(), ds.end(), before);
  const auto fail = [&](const char* what, std::size_t i, std::size_t j) {
    throw std::invalid_argument(backend_name + ": mma_gemm_batch: D of product " +
                                std::to_string(i) + " overlaps " + what + " of product " +
                                std::to_string(j));
  };
  for (std::size_t i = 1; i < ds.size(); ++i) {
    if (ds[i].buffer == ds[i - 1].buffer && ds[i].begin < ds[i - 1].end) {
      fail("D", ds[i - 1].product, ds[i].product);
    }
  }
  for (std::size_t j = 0; j < batch.size(); ++j) {
    for (const auto& [operand, what] : {std::pair{&batch[j].a, "A"}, std::pair{&batch[j].b, "B"}}) {
      if (operand->rows == 0 || operand->cols == 0) continue;
      const Extent x = extent_of(*operand, j);
      // The last D starting before x ends, in x's buffer.
      auto after = std::upper_bound(ds.begin(), ds.end(), Extent{x.buffer, x.end, x.end, 0},
                                    [&](const Extent& key, const Extent& d) {
                                      return key.buffer != d.buffer
                                                 ? std::less<const Buffer*>()(key.buffer, d.buffer)
                                                 : key.begin <= d.begin;
                                    });
      if (after == ds.begin()) continue;
      const Extent& d = *std::prev(after);
      if (d.buffer == x.buffer && d.end > x.begin) fail(what, d.product, j);
    }
  }
}

}  // namespace

void TensorCoreSteps::mma_gemm(const Datapath& datapath, const GemmOptions& options,
                               const BufferMatrix& a, const BufferMatrix& b,
                               const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                               const std::optional<ScaleBuffers>& scales) {
  const FloatingPointScope scope;
  check(a, "A");
  check(b, "B");
  if (c) check(*c, "C");
  check(d, "D");
  if (scales) {
    check(scales->a, "the scales of A");
    check(scales->b, "the scales of B");
  }
  check_operands(datapath, options, a, b, c, d, scales);
  mma_gemm_checked(datapath, options, a, b, c, d, scales);
}

// The GEMM contract (check_gemm_operands, gemm.hpp) on the views' shapes and formats; the
// addresses are the owner's and are not dereferenced.
void TensorCoreSteps::check_operands(const Datapath& datapath, const GemmOptions& options,
                                     const BufferMatrix& a, const BufferMatrix& b,
                                     const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                                     const std::optional<ScaleBuffers>& scales) const {
  const auto view = [](const BufferMatrix& m) {
    return ConstMatrixView{static_cast<const unsigned char*>(m.buffer->address()) + m.offset_bytes,
                           m.format,
                           m.rows,
                           m.cols,
                           m.ld,
                           m.layout};
  };
  std::optional<ConstMatrixView> c_view;
  if (c) c_view = view(*c);
  std::optional<BlockScales> scale_views;
  if (scales) scale_views = BlockScales{view(scales->a), view(scales->b)};
  check_gemm_operands(name() + ": mma_gemm", datapath, options, view(a), view(b), c_view, view(d),
                      scale_views ? &*scale_views : nullptr);
}

void TensorCoreSteps::mma_gemm_batch(const Datapath& datapath, const GemmOptions& options,
                                     std::span<const GemmProduct> batch) {
  const FloatingPointScope scope;
  if (options.beta != 0.0f || options.c_input != CInput::epilogue) {
    throw std::invalid_argument(
        name() + ": mma_gemm_batch: the options read C (beta = " + std::to_string(options.beta) +
        " or C as the initial accumulator); a batch has no C");
  }
  const auto alike = [](const BufferMatrix& x, const BufferMatrix& y) {
    return x.rows == y.rows && x.cols == y.cols && x.ld == y.ld && x.layout == y.layout &&
           x.format == y.format;
  };
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const GemmProduct& p = batch[i];
    check(p.a, "A");
    check(p.b, "B");
    check(p.d, "D");
    if (!alike(p.a, batch[0].a) || !alike(p.b, batch[0].b) || !alike(p.d, batch[0].d)) {
      throw std::invalid_argument(name() + ": mma_gemm_batch: product " + std::to_string(i) +
                                  " differs from product 0 in a shape, leading dimension, layout "
                                  "or format");
    }
  }
  if (batch.empty()) return;
  check_operands(datapath, options, batch[0].a, batch[0].b, std::nullopt, batch[0].d, std::nullopt);
  check_batch_overlaps(name(), batch);
  mma_gemm_batch_checked(datapath, options, batch);
}

void TensorCoreSteps::mma_gemm_batch_checked(const Datapath& datapath, const GemmOptions& options,
                                             std::span<const GemmProduct> batch) {
  for (const GemmProduct& p : batch)
    mma_gemm_checked(datapath, options, p.a, p.b, std::nullopt, p.d, std::nullopt);
}

void TensorCoreSteps::convert(const BufferMatrix& src, const BufferMatrix& dst, Rounding rounding) {
  const FloatingPointScope scope;
  check(src, "source");
  check(dst, "destination");
  if (src.rows != dst.rows || src.cols != dst.cols) {
    throw std::invalid_argument(name() + ": convert from " + std::to_string(src.rows) + " x " +
                                std::to_string(src.cols) + " to " + std::to_string(dst.rows) +
                                " x " + std::to_string(dst.cols));
  }
  convert_checked(src, dst, rounding);
}

}  // namespace tcemu

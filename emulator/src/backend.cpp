// The checks every backend shares; the arithmetic is each backend's own.
#include <algorithm>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <tcemu/emulator/backend.hpp>
#include <tcemu/emulator/residual_split.hpp>

namespace tcemu {

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (owner_ != nullptr) owner_->free_bytes(address_);
    owner_ = other.owner_;
    address_ = other.address_;
    bytes_ = other.bytes_;
    other.owner_ = nullptr;
    other.address_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

Buffer::~Buffer() {
  if (owner_ != nullptr) owner_->free_bytes(address_);
}

Buffer Backend::allocate(std::size_t bytes) {
  return Buffer(this, bytes == 0 ? nullptr : allocate_bytes(bytes), bytes);
}

void Backend::copy_in(const void* host, Buffer& buffer, std::size_t bytes, std::size_t offset) {
  if (buffer.owner() != this) throw std::invalid_argument(name() + ": buffer of another backend");
  if (offset > buffer.bytes() || bytes > buffer.bytes() - offset) {
    throw std::out_of_range(name() + ": copy of " + std::to_string(bytes) + " bytes at offset " +
                            std::to_string(offset) + " into a buffer of " +
                            std::to_string(buffer.bytes()));
  }
  if (bytes > 0) copy_in_bytes(host, static_cast<unsigned char*>(buffer.address()) + offset, bytes);
}

void Backend::copy_out(const Buffer& buffer, void* host, std::size_t bytes,
                       std::size_t offset) const {
  if (buffer.owner() != this) throw std::invalid_argument(name() + ": buffer of another backend");
  if (offset > buffer.bytes() || bytes > buffer.bytes() - offset) {
    throw std::out_of_range(name() + ": copy of " + std::to_string(bytes) + " bytes at offset " +
                            std::to_string(offset) + " out of a buffer of " +
                            std::to_string(buffer.bytes()));
  }
  if (bytes > 0) {
    copy_out_bytes(static_cast<const unsigned char*>(buffer.address()) + offset, host, bytes);
  }
}

namespace {

// The checks of a matrix view (BufferMatrix or RealMatrix) of `backend`'s memory with elements of
// `element_bytes` bytes: its own buffer, dimensions, leading dimension, and its end inside the
// buffer.
template <class Matrix>
void check_matrix(const Backend& backend, const Matrix& m, std::size_t element_bytes,
                  const char* name_of) {
  const std::string what = backend.name() + ": matrix " + name_of;
  if (m.buffer == nullptr || m.buffer->owner() != &backend) {
    throw std::invalid_argument(what + " is not in a buffer of this backend");
  }
  if (m.rows < 0 || m.cols < 0) throw std::invalid_argument(what + " has a negative dimension");
  const std::int64_t inner = m.layout == Layout::row_major ? m.cols : m.rows;
  const std::int64_t outer = m.layout == Layout::row_major ? m.rows : m.cols;
  if (m.ld < std::max<std::int64_t>(1, inner)) {
    throw std::invalid_argument(what + ": ld = " + std::to_string(m.ld) + " must be >= max(1, " +
                                std::to_string(inner) + ")");
  }
  if (m.rows == 0 || m.cols == 0) return;
  const auto end =
      m.offset_bytes + static_cast<std::size_t>((outer - 1) * m.ld + inner) * element_bytes;
  if (end > m.buffer->bytes()) {
    throw std::out_of_range(what + " (" + std::to_string(m.rows) + " x " + std::to_string(m.cols) +
                            ", ld " + std::to_string(m.ld) + ") ends at byte " +
                            std::to_string(end) + ", past its buffer of " +
                            std::to_string(m.buffer->bytes()));
  }
}

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

void Backend::check(const BufferMatrix& m, const char* name_of) const {
  check_matrix(*this, m, container_bytes(m.format), name_of);
}

void Backend::mma_gemm(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                       const BufferMatrix& b, const std::optional<BufferMatrix>& c,
                       const BufferMatrix& d) {
  check(a, "A");
  check(b, "B");
  if (c) check(*c, "C");
  check(d, "D");
  mma_gemm_checked(datapath, options, a, b, c, d);
}

void Backend::mma_gemm_batch(const Datapath& datapath, const GemmOptions& options,
                             std::span<const GemmProduct> batch) {
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
  check_batch_overlaps(name(), batch);
  mma_gemm_batch_checked(datapath, options, batch);
}

void Backend::mma_gemm_batch_checked(const Datapath& datapath, const GemmOptions& options,
                                     std::span<const GemmProduct> batch) {
  for (const GemmProduct& p : batch)
    mma_gemm_checked(datapath, options, p.a, p.b, std::nullopt, p.d);
}

void Backend::convert(const BufferMatrix& src, const BufferMatrix& dst, Rounding rounding) {
  check(src, "source");
  check(dst, "destination");
  if (src.rows != dst.rows || src.cols != dst.cols) {
    throw std::invalid_argument(name() + ": convert from " + std::to_string(src.rows) + " x " +
                                std::to_string(src.cols) + " to " + std::to_string(dst.rows) +
                                " x " + std::to_string(dst.cols));
  }
  convert_checked(src, dst, rounding);
}

// ===== Error-corrected SGEMM steps (markidis/) ==================================================

void Backend::check_fp32(const BufferMatrix& m, const char* name_of) const {
  check(m, name_of);
  if (!(m.format == formats::fp32)) {
    throw std::invalid_argument(name() + ": matrix " + name_of + " holds " +
                                std::string(m.format.name) + ", fp32 expected");
  }
}

namespace {

void check_same_shape(const std::string& backend, const char* step, const BufferMatrix& x,
                      const BufferMatrix& y, const char* y_name) {
  if (x.rows != y.rows || x.cols != y.cols) {
    throw std::invalid_argument(backend + ": " + step + ": " + y_name + " is " +
                                std::to_string(y.rows) + " x " + std::to_string(y.cols) +
                                ", expected " + std::to_string(x.rows) + " x " +
                                std::to_string(x.cols));
  }
}

}  // namespace

Fp32Summary Backend::summarize_fp32(const BufferMatrix& x) {
  check_fp32(x, "x");
  return summarize_fp32_checked(x);
}

std::int64_t Backend::split_fp32(const BufferMatrix& x, const BufferMatrix& part,
                                 const std::optional<BufferMatrix>& residual, Rounding rounding,
                                 int scale_exponent) {
  check_fp32(x, "x");
  check(part, "part");
  check_same_shape(name(), "split_fp32", x, part, "part");
  if (!is_split_format(part.format)) {
    throw std::invalid_argument(name() + ": split_fp32: part format " +
                                std::string(part.format.name) +
                                " is not a split format (fp16, bf16, tf32, e5m2)");
  }
  if (residual) {
    check_fp32(*residual, "residual");
    check_same_shape(name(), "split_fp32", x, *residual, "residual");
  }
  return split_fp32_checked(x, part, residual, rounding, scale_exponent);
}

void Backend::combine_fp32(const BufferMatrix& x, const std::optional<BufferMatrix>& y,
                           const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                           const CombineOptions& options) {
  check_fp32(x, "x");
  check_fp32(d, "d");
  check_same_shape(name(), "combine_fp32", x, d, "d");
  if (y) {
    check_fp32(*y, "y");
    check_same_shape(name(), "combine_fp32", x, *y, "y");
  }
  if (options.beta != 0.0f && !c) {
    throw std::invalid_argument(name() + ": combine_fp32: beta != 0 needs c");
  }
  if (c) {
    check_fp32(*c, "c");
    check_same_shape(name(), "combine_fp32", x, *c, "c");
  }
  combine_fp32_checked(x, y, c, d, options);
}

void Backend::propagate_nonfinite_fp32(const BufferMatrix& a, const BufferMatrix& b,
                                       const BufferMatrix& d) {
  check_fp32(a, "A");
  check_fp32(b, "B");
  check_fp32(d, "D");
  if (a.cols != b.rows || d.rows != a.rows || d.cols != b.cols) {
    throw std::invalid_argument(name() + ": propagate_nonfinite_fp32: A " + std::to_string(a.rows) +
                                " x " + std::to_string(a.cols) + ", B " + std::to_string(b.rows) +
                                " x " + std::to_string(b.cols) + ", D " + std::to_string(d.rows) +
                                " x " + std::to_string(d.cols));
  }
  propagate_nonfinite_fp32_checked(a, b, d);
}

// ===== end of the markidis/ steps =============================================================
namespace {

[[noreturn]] void refuse(const std::string& backend, const std::string& what) {
  throw std::invalid_argument(backend + ": " + what);
}

std::string shape(std::int64_t rows, std::int64_t cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

void same_shape(const std::string& backend, const RealMatrix& x, const char* x_name,
                std::int64_t rows, std::int64_t cols) {
  if (x.rows != rows || x.cols != cols) {
    refuse(backend, std::string(x_name) + " is " + shape(x.rows, x.cols) + ", expected " +
                        shape(rows, cols));
  }
}

void require_fp64(const std::string& backend, const RealMatrix& x, const char* x_name) {
  if (x.type != Real::fp64) refuse(backend, std::string(x_name) + " must be fp64");
}

}  // namespace

void Backend::check(const RealMatrix& m, const char* name_of) const {
  check_matrix(*this, m, real_bytes(m.type), name_of);
}

void Backend::check(const ExponentVector& v, std::int64_t size, const char* name_of) const {
  const std::string what = name() + ": exponent vector " + name_of;
  if (v.buffer == nullptr || v.buffer->owner() != this) {
    throw std::invalid_argument(what + " is not in a buffer of this backend");
  }
  if (v.size != size) {
    throw std::invalid_argument(what + " has " + std::to_string(v.size) + " elements, expected " +
                                std::to_string(size));
  }
  if (v.offset_bytes + static_cast<std::size_t>(size) * 4 > v.buffer->bytes()) {
    throw std::out_of_range(what + " runs past its buffer of " + std::to_string(v.buffer->bytes()));
  }
}

void Backend::copy_real(const RealMatrix& src, const RealMatrix& dst) {
  check(src, "source");
  check(dst, "destination");
  same_shape(name(), dst, "destination", src.rows, src.cols);
  if (src.type == Real::fp64 && dst.type == Real::fp32) {
    refuse(name(), "copy_real does not narrow fp64 to fp32");
  }
  copy_real_checked(src, dst);
}

void Backend::check_split(const RealMatrix& x, SplitAxis axis, int bits, const SliceMatrix& slice,
                          const ExponentVector& exponents) const {
  if (const auto* tc = std::get_if<BufferMatrix>(&slice)) {
    check(*tc, "slice");
    if (tc->rows != x.rows || tc->cols != x.cols) {
      refuse(name(),
             "slice is " + shape(tc->rows, tc->cols) + ", expected " + shape(x.rows, x.cols));
    }
    const FloatFormat& f = tc->format;
    // Integers below 2^bits need at most `bits` significant bits (fraction_bits + 1 >= bits);
    // 2^bits itself needs only its exponent (max_exponent() >= bits).
    if (f.fraction_bits + 1 < bits || f.max_exponent() < bits) {
      refuse(name(), "slice format " + std::string(f.name) + " cannot hold integers up to 2^" +
                         std::to_string(bits));
    }
  } else {
    const RealMatrix& r = std::get<RealMatrix>(slice);
    check(r, "slice");
    require_fp64(name(), r, "the slice");
    same_shape(name(), r, "slice", x.rows, x.cols);
  }
  check(exponents, axis == SplitAxis::rows ? x.rows : x.cols, "of the split");
}

void Backend::split_level(const RealMatrix& x, SplitAxis axis, int bits, const SliceMatrix& slice,
                          const ExponentVector& exponents) {
  check(x, "remainder");
  require_fp64(name(), x, "the remainder");
  if (bits < 1 || bits > 51) refuse(name(), "split_level: bits = " + std::to_string(bits));
  check_split(x, axis, bits, slice, exponents);
  split_level_checked(x, axis, bits, slice, exponents);
}

int Backend::split(const RealMatrix& x, SplitAxis axis, int bits, int levels,
                   std::span<const SliceMatrix> slices, std::span<const ExponentVector> exponents) {
  check(x, "remainder");
  require_fp64(name(), x, "the remainder");
  if (bits < 1 || bits > 51) refuse(name(), "split: bits = " + std::to_string(bits));
  if (levels < 1) refuse(name(), "split: levels = " + std::to_string(levels) + " must be >= 1");
  if (slices.size() != exponents.size() || slices.size() > static_cast<std::size_t>(levels)) {
    refuse(name(), "split: " + std::to_string(slices.size()) + " slices and " +
                       std::to_string(exponents.size()) + " exponent vectors for " +
                       std::to_string(levels) + " levels");
  }
  for (std::size_t s = 0; s < slices.size(); ++s) {
    check_split(x, axis, bits, slices[s], exponents[s]);
  }
  return split_checked(x, axis, bits, levels, slices, exponents);
}

bool Backend::all_zero(const RealMatrix& x) {
  check(x, "tested");
  require_fp64(name(), x, "the tested matrix");
  return all_zero_checked(x);
}

void Backend::fp64_gemm(const RealMatrix& a, const RealMatrix& b, const RealMatrix& c) {
  check(a, "A");
  check(b, "B");
  check(c, "C");
  require_fp64(name(), a, "A");
  require_fp64(name(), b, "B");
  require_fp64(name(), c, "C");
  same_shape(name(), b, "B", a.cols, b.cols);
  same_shape(name(), c, "C", a.rows, b.cols);
  fp64_gemm_checked(a, b, c);
}

void Backend::check(const OuterExponents& e, std::int64_t rows, std::int64_t cols,
                    const char* name_of) const {
  check(e.rows, rows, name_of);
  check(e.columns, cols, name_of);
}

void Backend::accumulate_scaled(const RealMatrixStack& products,
                                std::span<const OuterExponents> scales, const OuterExponents& base,
                                const RealMatrix& dst, bool overwrite) {
  if (products.count < 1 || scales.size() != static_cast<std::size_t>(products.count)) {
    refuse(name(), "accumulate_scaled: " + std::to_string(products.count) + " products and " +
                       std::to_string(scales.size()) + " scales");
  }
  RealMatrix last = products.first;
  last.offset_bytes += static_cast<std::size_t>(products.count - 1) * products.stride_bytes;
  check(products.first, "product");
  check(last, "product (last)");
  check(dst, "destination");
  require_fp64(name(), dst, "the destination");
  same_shape(name(), dst, "destination", products.first.rows, products.first.cols);
  for (const OuterExponents& scale : scales) check(scale, dst.rows, dst.cols, "of the scale");
  check(base, dst.rows, dst.cols, "of the base");
  accumulate_scaled_checked(products, scales, base, dst, overwrite);
}

void Backend::exact_sum(const RealMatrixStack& stack, const OuterExponents& scale,
                        const RealMatrix& dst) {
  if (stack.count < 1) refuse(name(), "exact_sum of an empty stack");
  RealMatrix last = stack.first;
  last.offset_bytes += static_cast<std::size_t>(stack.count - 1) * stack.stride_bytes;
  check(stack.first, "stack");
  check(last, "stack (last)");
  require_fp64(name(), stack.first, "the stack");
  check(dst, "sum");
  require_fp64(name(), dst, "the sum");
  same_shape(name(), dst, "sum", stack.first.rows, stack.first.cols);
  check(scale, dst.rows, dst.cols, "of the sum");
  exact_sum_checked(stack, scale, dst);
}

void Backend::epilogue(const std::optional<RealMatrix>& v,
                       const std::optional<OuterExponents>& v_scale, double alpha, double beta,
                       const std::optional<RealMatrix>& c, const std::optional<RealMatrix>& a,
                       const std::optional<RealMatrix>& b, const RealMatrix& out) {
  check(out, "out");
  if (v) {
    check(*v, "value");
    require_fp64(name(), *v, "the value");
    same_shape(name(), *v, "value", out.rows, out.cols);
  }
  if (v_scale) {
    if (!v) refuse(name(), "epilogue: a scale without a value");
    check(*v_scale, out.rows, out.cols, "of the value");
  }
  if (beta != 0.0) {
    if (!c) refuse(name(), "epilogue: beta != 0 needs C");
    check(*c, "C");
    same_shape(name(), *c, "C", out.rows, out.cols);
  }
  if (a.has_value() != b.has_value()) refuse(name(), "epilogue: give both A and B or neither");
  if (a) {
    check(*a, "A");
    check(*b, "B");
    if (a->rows != out.rows || b->cols != out.cols || a->cols != b->rows) {
      refuse(name(), "epilogue: A " + shape(a->rows, a->cols) + " and B " +
                         shape(b->rows, b->cols) + " do not give " + shape(out.rows, out.cols));
    }
  }
  epilogue_checked(v, v_scale, alpha, beta, c, a, b, out);
}

void Backend::inner_products(InnerProduct method, const RealMatrix& a, const RealMatrix& b,
                             double alpha, double beta, const RealMatrix& c) {
  check(a, "A");
  check(b, "B");
  check(c, "C");
  if (b.type != a.type || c.type != a.type) {
    refuse(name(), "inner_products: A, B and C must have one type (all fp64 or all fp32)");
  }
  if (a.cols < 1) refuse(name(), "inner_products: k = " + std::to_string(a.cols) + " must be >= 1");
  same_shape(name(), b, "B", a.cols, b.cols);
  same_shape(name(), c, "C", a.rows, b.cols);
  if (a.type == Real::fp32 && (static_cast<double>(static_cast<float>(alpha)) != alpha ||
                               static_cast<double>(static_cast<float>(beta)) != beta)) {
    refuse(name(), "inner_products: fp32 operands need binary32 alpha and beta");
  }
  inner_products_checked(method, a, b, alpha, beta, c);
}

}  // namespace tcemu

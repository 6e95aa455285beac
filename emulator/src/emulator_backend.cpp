// The CPU backends: buffers in host memory, the emulated GEMM, host conversions and the host
// Ozaki steps (host_ozaki_steps.hpp). "emulator" and "cpu64" are the same class under two names:
// which products the Ozaki scheme uses (tensor-core slices or binary64 slices) is the scheme's
// choice.
#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include <tcemu/emulator/backend.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/residual_split.hpp>

#include "host_inner_products.hpp"
#include "host_ozaki_steps.hpp"

namespace tcemu {
namespace {

constexpr std::align_val_t kAlignment{64};

ConstMatrixView host_view(const BufferMatrix& m) {
  return {static_cast<const unsigned char*>(m.buffer->address()) + m.offset_bytes,
          m.format,
          m.rows,
          m.cols,
          m.ld,
          m.layout};
}

MatrixView host_view_mutable(const BufferMatrix& m) {
  return {{static_cast<unsigned char*>(m.buffer->address()) + m.offset_bytes, m.format, m.rows,
           m.cols, m.ld, m.layout}};
}

class HostBackend final : public Backend {
 public:
  HostBackend(std::string name, int threads) : name_(std::move(name)), threads_(threads) {}
  std::string name() const override { return name_; }

 protected:
  void* allocate_bytes(std::size_t bytes) override {
    try {
      return ::operator new(bytes, kAlignment);
    } catch (const std::bad_alloc&) {
      throw std::runtime_error("emulator: out of host memory allocating " + std::to_string(bytes) +
                               " bytes");
    }
  }
  void free_bytes(void* address) noexcept override { ::operator delete(address, kAlignment); }
  void copy_in_bytes(const void* host, void* address, std::size_t bytes) override {
    std::memcpy(address, host, bytes);
  }
  void copy_out_bytes(const void* address, void* host, std::size_t bytes) const override {
    std::memcpy(host, address, bytes);
  }
  void mma_gemm_checked(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                        const BufferMatrix& b, const std::optional<BufferMatrix>& c,
                        const BufferMatrix& d) override {
    std::optional<ConstMatrixView> c_view;
    if (c) c_view = host_view(*c);
    GemmOptions threaded = options;
    if (threaded.threads == 0) threaded.threads = threads_;
    emulated_gemm(datapath, threaded, host_view(a), host_view(b), c_view, host_view_mutable(d));
  }
  void convert_checked(const BufferMatrix& src, const BufferMatrix& dst,
                       Rounding rounding) override {
    const ConstMatrixView from = host_view(src);
    const MatrixView to = host_view_mutable(dst);
    for (std::int64_t i = 0; i < src.rows; ++i) {
      for (std::int64_t j = 0; j < src.cols; ++j) {
        to.set(i, j, tcemu::convert(src.format, dst.format, from.get(i, j), rounding));
      }
    }
  }

  // ===== Error-corrected SGEMM steps (markidis/): the element functions of residual_split.hpp
  // on every element, one thread (these passes are O(size) beside the GEMM's O(m n k)).
  Fp32Summary summarize_fp32_checked(const BufferMatrix& x) override {
    const ConstMatrixView v = host_view(x);
    Fp32Summary summary;
    for (std::int64_t i = 0; i < x.rows; ++i) {
      for (std::int64_t j = 0; j < x.cols; ++j) {
        const std::uint32_t magnitude = v.get(i, j) & 0x7FFFFFFFu;
        if (magnitude > 0x7F800000u) {
          ++summary.nan_count;
        } else if (magnitude == 0x7F800000u) {
          ++summary.inf_count;
        } else {
          summary.max_abs_bits = std::max(summary.max_abs_bits, magnitude);
        }
      }
    }
    return summary;
  }
  std::int64_t split_fp32_checked(const BufferMatrix& x, const BufferMatrix& part,
                                  const std::optional<BufferMatrix>& residual, Rounding rounding,
                                  int scale_exponent) override {
    const ConstMatrixView from = host_view(x);
    const MatrixView to = host_view_mutable(part);
    std::optional<MatrixView> rest;
    if (residual) rest = host_view_mutable(*residual);
    std::int64_t overflows = 0;
    for (std::int64_t i = 0; i < x.rows; ++i) {
      for (std::int64_t j = 0; j < x.cols; ++j) {
        // Read before writing: the residual may alias x.
        const SplitElement e =
            split_fp32_element(from.get(i, j), part.format, rounding, scale_exponent);
        to.set(i, j, e.part);
        if (rest) rest->set(i, j, e.residual);
        overflows += e.overflow ? 1 : 0;
      }
    }
    return overflows;
  }
  void combine_fp32_checked(const BufferMatrix& x, const std::optional<BufferMatrix>& y,
                            const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                            const CombineOptions& options) override {
    const ConstMatrixView xv = host_view(x);
    std::optional<ConstMatrixView> yv, cv;
    if (y) yv = host_view(*y);
    if (c) cv = host_view(*c);
    const MatrixView dv = host_view_mutable(d);
    for (std::int64_t i = 0; i < x.rows; ++i) {
      for (std::int64_t j = 0; j < x.cols; ++j) {
        dv.set(i, j,
               combine_fp32_element(xv.get(i, j), yv.has_value(), yv ? yv->get(i, j) : 0,
                                    options.beta == 0.0f ? 0 : cv->get(i, j), options.y_exponent,
                                    options.scale_exponent, options.alpha, options.beta));
      }
    }
  }
  void propagate_nonfinite_fp32_checked(const BufferMatrix& a, const BufferMatrix& b,
                                        const BufferMatrix& d) override {
    const ConstMatrixView av = host_view(a), bv = host_view(b);
    const MatrixView dv = host_view_mutable(d);
    const std::int64_t m = a.rows, k = a.cols, n = b.cols;
    auto nonfinite = [](std::uint32_t bits) { return (bits & 0x7F800000u) == 0x7F800000u; };
    // The k indices holding a NaN or Inf, per row of A and per column of B.
    std::vector<std::vector<std::int64_t>> row_special(m), col_special(n);
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t p = 0; p < k; ++p) {
        if (nonfinite(av.get(i, p))) row_special[i].push_back(p);
      }
    }
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t p = 0; p < k; ++p) {
        if (nonfinite(bv.get(p, j))) col_special[j].push_back(p);
      }
    }
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        if (row_special[i].empty() && col_special[j].empty()) continue;
        NonfiniteProducts products;
        for (std::int64_t p : row_special[i]) products.add(av.get(i, p), bv.get(p, j));
        // A p in both lists is added twice, which changes nothing.
        for (std::int64_t p : col_special[j]) products.add(av.get(i, p), bv.get(p, j));
        dv.set(i, j, products.result());
      }
    }
  }
  // ===== end of the markidis/ steps
  void copy_real_checked(const RealMatrix& src, const RealMatrix& dst) override {
    detail::host_copy_real(src, dst, threads_);
  }
  void split_level_checked(const RealMatrix& x, SplitAxis axis, int bits, const SliceMatrix& slice,
                           const ExponentVector& exponents) override {
    detail::host_split(x, axis, bits, 1, {&slice, 1}, {&exponents, 1}, threads_);
  }
  int split_checked(const RealMatrix& x, SplitAxis axis, int bits, int levels,
                    std::span<const SliceMatrix> slices,
                    std::span<const ExponentVector> exponents) override {
    return detail::host_split(x, axis, bits, levels, slices, exponents, threads_);
  }
  bool all_zero_checked(const RealMatrix& x) override { return detail::host_all_zero(x); }
  void fp64_gemm_checked(const RealMatrix& a, const RealMatrix& b, const RealMatrix& c) override {
    detail::host_fp64_gemm(a, b, c, threads_);
  }
  void accumulate_scaled_checked(const RealMatrixStack& products,
                                 std::span<const OuterExponents> scales, const OuterExponents& base,
                                 const RealMatrix& dst, bool overwrite) override {
    detail::host_accumulate_scaled(products, scales, base, dst, overwrite, threads_);
  }
  void exact_sum_checked(const RealMatrixStack& stack, const OuterExponents& scale,
                         const RealMatrix& dst) override {
    detail::host_exact_sum(stack, scale, dst, threads_);
  }
  void epilogue_checked(const std::optional<RealMatrix>& v,
                        const std::optional<OuterExponents>& v_scale, double alpha, double beta,
                        const std::optional<RealMatrix>& c, const std::optional<RealMatrix>& a,
                        const std::optional<RealMatrix>& b, const RealMatrix& out) override {
    detail::host_epilogue(v, v_scale, alpha, beta, c, a, b, out, threads_);
  }
  void inner_products_checked(InnerProduct method, const RealMatrix& a, const RealMatrix& b,
                              double alpha, double beta, const RealMatrix& c) override {
    detail::host_inner_products(method, a, b, alpha, beta, c, threads_);
  }
  void synchronize_checked() override {}  // host steps finish before they return

 private:
  std::string name_;
  int threads_;
};

}  // namespace

std::unique_ptr<Backend> make_emulator_backend(int threads) {
  return std::make_unique<HostBackend>("emulator", threads);
}

std::unique_ptr<Backend> make_cpu64_backend(int threads) {
  return std::make_unique<HostBackend>("cpu64", threads);
}

}  // namespace tcemu

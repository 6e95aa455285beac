// The CPU backends (host_backends.hpp): buffers in host memory, and every step family delegated
// to its own source file (tensor_core_steps.cpp, fp32_split_steps.cpp, ozaki_steps.cpp with
// fp64_gemm.cpp, inner_product_steps.cpp, integer_gemm_steps.cpp, crt_steps.cpp,
// complex_steps.cpp). "emulator" and "cpu64" are the same class under two names.
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include <tcemu/host/host_backends.hpp>

#include "complex_steps.hpp"
#include "crt_steps.hpp"
#include "fp32_split_steps.hpp"
#include "inner_product_steps.hpp"
#include "integer_gemm_steps.hpp"
#include "ozaki_steps.hpp"
#include "tensor_core_steps.hpp"

namespace tcemu::host {
namespace {

constexpr std::align_val_t kAlignment{64};

class HostBackend final : public Backend {
 public:
  HostBackend(std::string name, int threads) : name_(std::move(name)), threads_(threads) {}
  std::string name() const override { return name_; }

 protected:
  // Memory
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
  void synchronize_checked() override {}  // host steps finish before they return

  // Tensor-core steps
  void mma_gemm_checked(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                        const BufferMatrix& b, const std::optional<BufferMatrix>& c,
                        const BufferMatrix& d, const std::optional<ScaleBuffers>& scales) override {
    detail::host_mma_gemm(datapath, options, a, b, c, d, scales, threads_);
  }
  void convert_checked(const BufferMatrix& src, const BufferMatrix& dst,
                       Rounding rounding) override {
    detail::host_convert(src, dst, rounding);
  }

  // fp32 split steps
  Fp32Summary summarize_fp32_checked(const BufferMatrix& x) override {
    return detail::host_summarize_fp32(x);
  }
  std::int64_t split_fp32_checked(const BufferMatrix& x, const BufferMatrix& part,
                                  const std::optional<BufferMatrix>& residual, Rounding rounding,
                                  int scale_exponent) override {
    return detail::host_split_fp32(x, part, residual, rounding, scale_exponent);
  }
  void combine_fp32_checked(const BufferMatrix& x, const std::optional<BufferMatrix>& y,
                            const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                            const CombineOptions& options) override {
    detail::host_combine_fp32(x, y, c, d, options);
  }
  void propagate_nonfinite_fp32_checked(const BufferMatrix& a, const BufferMatrix& b,
                                        const BufferMatrix& d) override {
    detail::host_propagate_nonfinite_fp32(a, b, d);
  }

  // Ozaki steps
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
                         const RealMatrix& dst, fp64::Direction d) override {
    detail::host_exact_sum(stack, scale, dst, d, threads_);
  }
  void epilogue_checked(const std::optional<RealMatrix>& v,
                        const std::optional<OuterExponents>& v_scale, double alpha, double beta,
                        const std::optional<RealMatrix>& c, const std::optional<RealMatrix>& a,
                        const std::optional<RealMatrix>& b, const RealMatrix& out,
                        fp64::Direction d) override {
    detail::host_epilogue(v, v_scale, alpha, beta, c, a, b, out, d, threads_);
  }

  // Complex steps
  void complex_real_form_checked(const ComplexMatrix& x, bool conjugate,
                                 const RealMatrix& dst) override {
    detail::host_complex_real_form(x, conjugate, dst, threads_);
  }
  void complex_epilogue_checked(const std::optional<RealMatrix>& v, Real arithmetic,
                                std::complex<double> alpha, std::complex<double> beta,
                                const ComplexMatrix& c, fp64::Direction d) override {
    detail::host_complex_epilogue(v, arithmetic, alpha, beta, c, d, threads_);
  }

  // Inner-product step
  void inner_products_checked(InnerProduct method, const RealMatrix& a, const RealMatrix& b,
                              double alpha, double beta, const RealMatrix& c) override {
    detail::host_inner_products(method, a, b, alpha, beta, c, threads_);
  }

  // CRT steps
  ScaleSummary crt_scale_checked(const RealMatrix& x, SplitAxis axis, int max_bits,
                                 const ExponentVector& shifts) override {
    return detail::host_crt_scale(x, axis, max_bits, shifts, threads_);
  }
  void crt_norm_shifts_checked(const RealMatrix& x, SplitAxis axis, int gamma,
                               const ExponentVector& shifts, const VectorNorms* norms) override {
    detail::host_crt_norm_shifts(x, axis, gamma, shifts, norms, threads_);
  }
  void crt_magnitude_bound_checked(const RealMatrix& x, SplitAxis axis, int depth,
                                   const VectorNorms& norms, const IntegerMatrix& out,
                                   const BoundExponents& exponents) override {
    detail::host_crt_magnitude_bound(x, axis, depth, norms, out, exponents, threads_);
  }
  int crt_bound_need_checked(std::span<const BoundLevel> levels, int log2_k) override {
    return detail::host_crt_bound_need(levels, log2_k, threads_);
  }
  void crt_residues_checked(const RealMatrix& x, SplitAxis axis, const ExponentVector& shifts,
                            std::span<const IntegerMatrix> out) override {
    detail::host_crt_residues(x, axis, shifts, out, threads_);
  }
  void crt_product_residues_checked(const IntegerMatrix& a, const IntegerMatrix& b, int modulus,
                                    const IntegerMatrix& dst) override {
    detail::host_crt_product_residues(a, b, modulus, dst, threads_);
  }
  void crt_reconstruct_checked(const IntegerMatrixStack& residues, const crt_elements::Table& table,
                               const OuterExponents& shifts, const RealMatrix& dst) override {
    detail::host_crt_reconstruct(residues, table, shifts, dst, threads_);
  }

  // Integer GEMM step
  void integer_gemm_checked(const IntegerMatrix& a, const IntegerMatrix& b,
                            const RealMatrix& c) override {
    detail::host_integer_gemm(a, b, c, threads_);
  }

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

}  // namespace tcemu::host

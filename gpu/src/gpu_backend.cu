// The GPU backend (gpu_backend.hpp).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/gpu/mma_runner.hpp>

#include "cuda_check.hpp"
#include "device_matrix.hpp"
#include "gemm/cublas_gemm.hpp"
#include "gemm/emulated_gemm.hpp"
#include "gemm/tiled_mma_gemm.hpp"
#include "gemm/wgmma_gemm.hpp"
#include "steps/complex_steps.hpp"
#include "steps/crt_bound_steps.hpp"
#include "steps/crt_steps.hpp"
#include "steps/fp32_split_steps.hpp"
#include "steps/inner_product_steps.hpp"
#include "steps/integer_gemm_steps.hpp"
#include "steps/ozaki_steps.hpp"
#include "steps/tensor_core_steps.hpp"

namespace tcemu::gpu {
namespace {

using detail::DeviceMatrix;

std::size_t round_up(std::size_t x, std::size_t to) {
  return (x + to - 1) / to * to;
}

class GpuBackend final : public Backend {
 public:
  explicit GpuBackend(const GpuBackendOptions& options)
      : engine_(options.engine),
        batched_gemm_max_multiply_adds_(options.batched_gemm_max_multiply_adds) {
    try {
      device_ = require_device(options.device);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string("gpu: ") + e.what());
    }
    if (device_.compute_major < 8) {
      throw std::runtime_error("gpu: " + device_.name + " has compute capability " +
                               std::to_string(device_.compute_major) + "." +
                               std::to_string(device_.compute_minor) +
                               "; the GPU backend's kernels need sm_80 or newer");
    }
    if (engine_ == GemmEngine::wgmma &&
        (device_.compute_major != 9 || device_.compute_minor != 0)) {
      throw std::runtime_error(
          "gpu: the wgmma engine needs an sm_90a device (compute capability "
          "9.0); " +
          device_.name + " has " + std::to_string(device_.compute_major) + "." +
          std::to_string(device_.compute_minor));
    }
    TCEMU_CUDA_CHECK(cudaSetDevice(device_.index));
    TCEMU_CUBLAS_CHECK(cublasCreate(&cublas_));
  }
  ~GpuBackend() override {
    cublasDestroy(cublas_);
    for (Scratch* s : {&pack_scratch_, &step_scratch_, &batch_scratch_}) cudaFree(s->address);
  }

  std::string name() const override {
    return std::string("gpu (") +
           (engine_ == GemmEngine::cublas     ? "cublas"
            : engine_ == GemmEngine::wgmma    ? "wgmma"
            : engine_ == GemmEngine::fastest  ? "fastest"
            : engine_ == GemmEngine::emulated ? "emulated"
                                              : "mma.sync") +
           " on " + device_.name + ")";
  }

 protected:
  void* allocate_bytes(std::size_t bytes) override {
    void* address = nullptr;
    const cudaError_t status = cudaMalloc(&address, bytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      std::size_t free = 0, total = 0;
      cudaMemGetInfo(&free, &total);
      throw std::runtime_error("gpu: out of device memory allocating " + std::to_string(bytes) +
                               " bytes (" + std::to_string(free) + " of " + std::to_string(total) +
                               " free on " + device_.name + ")");
    }
    TCEMU_CUDA_CHECK(status);
    return address;
  }
  void free_bytes(void* address) noexcept override { cudaFree(address); }
  void copy_in_bytes(const void* host, void* address, std::size_t bytes) override {
    TCEMU_CUDA_CHECK(cudaMemcpy(address, host, bytes, cudaMemcpyHostToDevice));
  }
  void copy_out_bytes(const void* address, void* host, std::size_t bytes) const override {
    TCEMU_CUDA_CHECK(cudaMemcpy(host, address, bytes, cudaMemcpyDeviceToHost));
  }

  void convert_checked(const BufferMatrix& src, const BufferMatrix& dst,
                       Rounding rounding) override {
    detail::convert_matrix(detail::device_matrix(src), src.format, detail::device_matrix(dst),
                           dst.format, rounding);
  }

  Fp32Summary summarize_fp32_checked(const BufferMatrix& x) override {
    return detail::summarize_fp32(detail::device_matrix(x), scratch(step_scratch_, 24));
  }
  std::int64_t split_fp32_checked(const BufferMatrix& x, const BufferMatrix& part,
                                  const std::optional<BufferMatrix>& residual, Rounding rounding,
                                  int scale_exponent) override {
    std::optional<DeviceMatrix> rest;
    if (residual) rest = detail::device_matrix(*residual);
    return detail::split_fp32(detail::device_matrix(x), detail::device_matrix(part), part.format,
                              rest ? &*rest : nullptr, rounding, scale_exponent,
                              scratch(step_scratch_, 24));
  }
  void combine_fp32_checked(const BufferMatrix& x, const std::optional<BufferMatrix>& y,
                            const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                            const CombineOptions& options) override {
    std::optional<DeviceMatrix> yd, cd;
    if (y) yd = detail::device_matrix(*y);
    if (c) cd = detail::device_matrix(*c);
    detail::combine_fp32(detail::device_matrix(x), yd ? &*yd : nullptr, cd ? &*cd : nullptr,
                         detail::device_matrix(d), options);
  }
  void propagate_nonfinite_fp32_checked(const BufferMatrix& a, const BufferMatrix& b,
                                        const BufferMatrix& d) override {
    detail::propagate_nonfinite_fp32(
        detail::device_matrix(a), detail::device_matrix(b), detail::device_matrix(d),
        scratch(step_scratch_, static_cast<std::size_t>(a.rows + b.cols) * sizeof(unsigned)));
  }

  // Complex steps
  void complex_real_form_checked(const ComplexMatrix& x, bool conjugate,
                                 const RealMatrix& dst) override {
    detail::complex_real_form(detail::device_real(complex_parts(x)), x.rows, x.cols, conjugate,
                              detail::device_real(dst));
  }
  void complex_epilogue_checked(const std::optional<RealMatrix>& v, Real arithmetic,
                                std::complex<double> alpha, std::complex<double> beta,
                                const ComplexMatrix& c, fp64::Direction d) override {
    std::optional<detail::DeviceReal> vd;
    if (v) vd = detail::device_real(*v);
    detail::complex_epilogue(vd ? &*vd : nullptr, arithmetic == Real::fp64, alpha, beta,
                             detail::device_real(complex_parts(c)), c.rows, c.cols, d);
  }

  // Ozaki steps: the kernels of ozaki_step_kernels.cu and cublasDgemm.
  void copy_real_checked(const RealMatrix& src, const RealMatrix& dst) override {
    detail::copy_real(detail::device_real(src), detail::device_real(dst));
  }
  void split_level_checked(const RealMatrix& x, SplitAxis axis, int bits, const SliceMatrix& slice,
                           const ExponentVector& exponents) override {
    split_checked(x, axis, bits, 1, {&slice, 1}, {&exponents, 1});
  }
  int split_checked(const RealMatrix& x, SplitAxis axis, int bits, int levels,
                    std::span<const SliceMatrix> slices,
                    std::span<const ExponentVector> exponents) override {
    std::vector<detail::SliceTarget> targets;
    for (std::size_t s = 0; s < slices.size(); ++s) {
      detail::SliceTarget t{};
      if (const auto* r = std::get_if<RealMatrix>(&slices[s])) {
        t = {static_cast<unsigned char*>(r->buffer->address()) + r->offset_bytes,
             r->ld,
             r->layout == Layout::row_major,
             true,
             formats::fp32,
             8,
             nullptr};
      } else if (const auto* s8 = std::get_if<IntegerMatrix>(&slices[s])) {
        t.data = static_cast<unsigned char*>(s8->buffer->address()) + s8->offset_bytes;
        t.ld = s8->ld;
        t.row_major = s8->layout == Layout::row_major;
        t.format = formats::fp32;  // unused by an int8 slice
        t.element_bytes = 1;
        t.int8 = true;
      } else {
        const auto& b = std::get<BufferMatrix>(slices[s]);
        t = {static_cast<unsigned char*>(b.buffer->address()) + b.offset_bytes,
             b.ld,
             b.layout == Layout::row_major,
             false,
             b.format,
             static_cast<int>(container_bytes(b.format)),
             nullptr,
             detail::hardware_format(b.format)};
      }
      t.exponents = detail::device_exponents(exponents[s]);
      targets.push_back(t);
    }
    return detail::split(detail::device_real(x), axis == SplitAxis::rows, bits, levels, targets,
                         scratch(step_scratch_, detail::split_scratch_bytes(targets.size())));
  }
  bool all_zero_checked(const RealMatrix& x) override {
    return detail::all_zero(detail::device_real(x), scratch(step_scratch_, sizeof(unsigned)));
  }
  void fp64_gemm_checked(const RealMatrix& a, const RealMatrix& b, const RealMatrix& c) override {
    detail::cublas_fp64_gemm(cublas_, detail::device_real(a), detail::device_real(b),
                             detail::device_real(c));
  }
  void accumulate_scaled_checked(const RealMatrixStack& products,
                                 std::span<const OuterExponents> scales, const OuterExponents& base,
                                 const RealMatrix& dst, bool overwrite) override {
    std::vector<detail::LayerExponents> layers;
    for (const OuterExponents& e : scales) layers.push_back(exponents(e));
    detail::accumulate_scaled(detail::device_real(products.first), products.stride_bytes,
                              products.count, layers, exponents(base), detail::device_real(dst),
                              overwrite);
  }
  void exact_sum_checked(const RealMatrixStack& stack, const OuterExponents& scale,
                         const RealMatrix& dst, fp64::Direction d) override {
    detail::exact_sum(detail::device_real(stack.first), stack.stride_bytes, stack.count,
                      exponents(scale), detail::device_real(dst), d);
  }
  void epilogue_checked(const std::optional<RealMatrix>& v,
                        const std::optional<OuterExponents>& v_scale, double alpha, double beta,
                        const std::optional<RealMatrix>& c, const std::optional<RealMatrix>& a,
                        const std::optional<RealMatrix>& b, const RealMatrix& out,
                        fp64::Direction d) override {
    std::optional<detail::DeviceReal> vd, cd, ad, bd;
    if (v) vd = detail::device_real(*v);
    if (c) cd = detail::device_real(*c);
    if (a) ad = detail::device_real(*a);
    if (b) bd = detail::device_real(*b);
    void* flags =
        a ? scratch(step_scratch_, static_cast<std::size_t>(a->rows + b->cols) * 4) : nullptr;
    detail::epilogue(vd ? &*vd : nullptr,
                     v_scale ? exponents(*v_scale) : detail::LayerExponents{nullptr, nullptr},
                     alpha, beta, cd ? &*cd : nullptr, ad ? &*ad : nullptr, bd ? &*bd : nullptr,
                     detail::device_real(out), flags, d);
  }
  void inner_products_checked(InnerProduct method, const RealMatrix& a, const RealMatrix& b,
                              double alpha, double beta, const RealMatrix& c) override {
    void* s = scratch(step_scratch_,
                      detail::inner_products_scratch_bytes(method, c, device_.multiprocessors));
    detail::inner_products(method, a, b, alpha, beta, c, s, device_.multiprocessors);
  }
  // CRT steps (crt_steps.cu).
  ScaleSummary crt_scale_checked(const RealMatrix& x, SplitAxis axis, int max_bits,
                                 const ExponentVector& shifts) override {
    return detail::crt_scale(x, axis, max_bits, shifts,
                             scratch(step_scratch_, detail::crt_scale_scratch_bytes(x, axis)));
  }
  void crt_norm_shifts_checked(const RealMatrix& x, SplitAxis axis, int gamma,
                               const ExponentVector& shifts, const VectorNorms* norms) override {
    detail::crt_norm_shifts(x, axis, gamma, shifts, norms,
                            scratch(step_scratch_, detail::crt_norm_shifts_scratch_bytes(x, axis)));
  }
  void crt_magnitude_bound_checked(const RealMatrix& x, SplitAxis axis, int depth,
                                   const VectorNorms& norms, const IntegerMatrix& out,
                                   const BoundExponents& exponents) override {
    detail::crt_magnitude_bound(
        x, axis, depth, norms, out, exponents,
        scratch(step_scratch_, detail::crt_magnitude_bound_scratch_bytes(x, axis)));
  }
  int crt_bound_need_checked(std::span<const BoundLevel> levels, int log2_k) override {
    const BoundLevel& first = levels.front();
    return detail::crt_bound_need(
        cublas_, levels, log2_k,
        scratch(step_scratch_, detail::crt_bound_need_scratch_bytes(first.a.rows, first.b.cols,
                                                                    first.a.cols, levels.size())));
  }
  void crt_residues_checked(const RealMatrix& x, SplitAxis axis, const ExponentVector& shifts,
                            std::span<const IntegerMatrix> out) override {
    detail::crt_residues(x, axis, shifts, out);
  }
  void crt_product_residues_checked(const IntegerMatrix& a, const IntegerMatrix& b, int modulus,
                                    const IntegerMatrix& dst) override {
    detail::crt_product_residues(
        cublas_, a, b, modulus, dst,
        scratch(step_scratch_, detail::crt_product_residues_scratch_bytes(a, b, dst)));
  }
  void crt_reconstruct_checked(const IntegerMatrixStack& residues, const crt_elements::Table& table,
                               const OuterExponents& shifts, const RealMatrix& dst) override {
    detail::crt_reconstruct(residues, table, shifts, dst);
  }
  // Integer GEMM step: cublasGemmEx on IMMA, its int32 result widened (integer_gemm_steps.cu).
  void integer_gemm_checked(const IntegerMatrix& a, const IntegerMatrix& b,
                            const RealMatrix& c) override {
    detail::integer_gemm(
        cublas_, a, b, c,
        scratch(step_scratch_, detail::integer_gemm_scratch_bytes(c.rows, c.cols, a.cols)));
  }
  void synchronize_checked() override { TCEMU_CUDA_CHECK(cudaDeviceSynchronize()); }

  void mma_gemm_checked(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                        const BufferMatrix& b, const std::optional<BufferMatrix>& c,
                        const BufferMatrix& d, const std::optional<ScaleBuffers>& scales) override {
    check_dimensions(a, b);
    std::optional<DeviceMatrix> c_device;
    if (c) c_device = detail::device_matrix(*c);
    if (a.rows == 0 || b.cols == 0) return;
    if (!hardware_formats(datapath)) {
      // No kernel of ours and no cuBLAS call takes a b format of its own or block scales.
      if (engine_ != GemmEngine::emulated && engine_ != GemmEngine::fastest) {
        throw std::invalid_argument(
            name() + ": only the emulated engine (or 'fastest', which then runs it) computes " +
            std::string(datapath.input.name) + " x " + std::string(datapath.b_format().name) +
            (datapath.block_scaled() ? " block-scaled" : "") + " products");
      }
      std::optional<detail::DeviceScales> device_scales;
      if (scales) {
        device_scales = detail::DeviceScales{detail::device_matrix(scales->a),
                                             detail::device_matrix(scales->b)};
      }
      run_emulated(datapath, options, a, b, c_device, d, device_scales);
      return;
    }
    if (engine_ == GemmEngine::cublas) {
      detail::check_cublas_gemm(datapath, options);
      detail::cublas_gemm(cublas_, datapath, options, detail::device_matrix(a),
                          detail::device_matrix(b), c_device, detail::device_matrix(d),
                          [this](std::size_t bytes) { return scratch(pack_scratch_, bytes); });
      return;
    }
    if (engine_ == GemmEngine::emulated ||
        (engine_ == GemmEngine::fastest && !fastest_on_wgmma(datapath) &&
         !mma_sync_computes(datapath))) {
      run_emulated(datapath, options, a, b, c_device, d, std::nullopt);
      return;
    }
    run_tiled(datapath, options, a, b, c_device, d);
  }
  void mma_gemm_batch_checked(const Datapath& datapath, const GemmOptions& options,
                              std::span<const GemmProduct> batch) override {
    const GemmProduct& front = batch.front();
    if (engine_ != GemmEngine::cublas || batch.size() < 2 || options.takeout_every_k != 0 ||
        !batches_gemms(front.d.rows, front.d.cols, front.a.cols, batched_gemm_max_multiply_adds_)) {
      TensorCoreSteps::mma_gemm_batch_checked(datapath, options, batch);
      return;
    }
    check_dimensions(front.a, front.b);
    detail::check_cublas_gemm(datapath, options);
    std::vector<detail::DeviceProduct> products;
    products.reserve(batch.size());
    for (const GemmProduct& p : batch) {
      products.push_back(
          {detail::device_matrix(p.a), detail::device_matrix(p.b), detail::device_matrix(p.d)});
    }
    detail::cublas_gemm_batch(cublas_, datapath, options.alpha, products,
                              scratch(batch_scratch_, detail::batched_gemm_pointer_bytes()));
  }

 private:
  // What our kernels and cuBLAS's int parameters can index (the GEMM contract itself is checked
  // by TensorCoreSteps::mma_gemm before this backend sees a product).
  void check_dimensions(const BufferMatrix& a, const BufferMatrix& b) const {
    if (a.rows > INT32_MAX || b.cols > INT32_MAX || a.cols > INT32_MAX) {
      throw std::invalid_argument(name() +
                                  ": mma_gemm: dimensions past 2^31 - 1 are not supported");
    }
  }

  // Whether the fastest engine runs this product on the wgmma kernel: where that kernel applies
  // and computes exactly `datapath`.
  // Whether the datapath's operands are of the formats the hardware kernels and cuBLAS take:
  // one input format of fp16, bf16, tf32, e4m3 or e5m2, no block scales.
  static bool hardware_formats(const Datapath& datapath) {
    const FloatFormat& in = datapath.input;
    return !datapath.has_input_b && !datapath.block_scaled() &&
           (in == formats::fp16 || in == formats::bf16 || in == formats::tf32 ||
            in == formats::e4m3 || in == formats::e5m2);
  }

  bool fastest_on_wgmma(const Datapath& datapath) const {
    return device_.compute_major == 9 && device_.compute_minor == 0 &&
           datapath.accumulator == formats::fp32 &&
           detail::wgmma_computes(
               detail::mma_sync_instruction(datapath.input, datapath.accumulator)) &&
           datapath ==
               preset(device_.arch_preset(), datapath.input, datapath.accumulator,
                      kernel_instruction(GemmEngine::wgmma, datapath.input, datapath.accumulator));
  }

  // Whether the device's mma.sync computes `datapath` (its format pair and its preset).
  bool mma_sync_computes(const Datapath& datapath) const {
    try {
      check_mma_sync(datapath.input, datapath.accumulator);
    } catch (const std::exception&) {
      return false;  // no mma.sync of this device takes the formats
    }
    return datapath ==
           preset(device_.arch_preset(), datapath.input, datapath.accumulator, "mma.sync");
  }

  // The emulated engine: any datapath, on the CUDA cores.
  void run_emulated(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                    const BufferMatrix& b, const std::optional<DeviceMatrix>& c,
                    const BufferMatrix& d, const std::optional<detail::DeviceScales>& scales) {
    validate(datapath);
    if (options.takeout_every_k < 0 || options.takeout_every_k % datapath.instruction_k != 0) {
      throw std::invalid_argument(name() +
                                  ": takeout_every_k = " + std::to_string(options.takeout_every_k) +
                                  " is not a non-negative multiple of the instruction's k = " +
                                  std::to_string(datapath.instruction_k));
    }
    if (options.takeout_every_k > 0 && !(datapath.accumulator == formats::fp32)) {
      throw std::invalid_argument(name() + ": takeout_every_k needs an fp32 accumulator");
    }
    detail::launch_emulated_gemm(datapath, options, detail::device_matrix(a),
                                 detail::device_matrix(b), c, detail::device_matrix(d), scales,
                                 scratch(step_scratch_, detail::kEmulatedGemmScratchBytes));
  }

  // The device's instruction (mma.sync or wgmma) is the only datapath our kernels compute.
  void check_hardware_datapath(const Datapath& datapath, bool wgmma) const {
    check_mma_sync(datapath.input, datapath.accumulator);
    if (wgmma) {
      if (device_.compute_major != 9 || device_.compute_minor != 0) {
        throw std::runtime_error(name() + ": the wgmma engine needs an sm_90a device");
      }
      if (!detail::wgmma_computes(
              detail::mma_sync_instruction(datapath.input, datapath.accumulator))) {
        throw std::invalid_argument(name() +
                                    ": the wgmma engine takes fp16, bf16 or tf32 inputs with an "
                                    "fp32 accumulator; use the mma_sync engine for " +
                                    std::string(datapath.input.name) + " -> " +
                                    std::string(datapath.accumulator.name));
      }
    }
    const std::string instruction = kernel_instruction(
        wgmma ? GemmEngine::wgmma : GemmEngine::mma_sync, datapath.input, datapath.accumulator);
    const std::string arch = device_.arch_preset();
    const Datapath hardware = preset(arch, datapath.input, datapath.accumulator, instruction);
    if (!(datapath == hardware)) {
      throw std::invalid_argument(name() + ": the GPU's " + instruction + " computes the " + arch +
                                  " preset (" + describe(hardware) + "), not " +
                                  describe(datapath) +
                                  "; use the emulator backend for other datapaths");
    }
  }

  // Bytes of k a packed row holds: k rounded up to the tiled kernel's 128-byte pieces.
  static std::size_t packed_row_bytes(const BufferMatrix& x, bool columns, int element_bytes) {
    const std::int64_t k = columns ? x.rows : x.cols;
    return round_up(static_cast<std::size_t>(k) * element_bytes, detail::kTileBytes);
  }

  // A (or B's columns, `columns`) as k-contiguous rows read in place: possible when the layout
  // already is k-contiguous, k ends on an instruction boundary (no zero padding is needed), rows
  // are 16-byte aligned and every row can be read to its next 128 bytes inside the buffer.
  static std::optional<detail::KRows> in_place_k_rows(const BufferMatrix& x, bool columns,
                                                      int element_bytes, int k_per_instruction) {
    const std::int64_t rows = columns ? x.cols : x.rows;
    const std::int64_t k = columns ? x.rows : x.cols;
    const bool k_contiguous = (x.layout == Layout::row_major) != columns;
    const std::size_t readable = packed_row_bytes(x, columns, element_bytes);
    const auto ld_bytes = static_cast<std::size_t>(x.ld) * element_bytes;
    const auto address = reinterpret_cast<std::uintptr_t>(x.buffer->address()) + x.offset_bytes;
    const bool usable = k_contiguous && k % k_per_instruction == 0 && ld_bytes % 16 == 0 &&
                        address % 16 == 0 && ld_bytes >= readable &&
                        x.offset_bytes + (rows - 1) * ld_bytes + readable <= x.buffer->bytes();
    if (!usable) return std::nullopt;
    return detail::KRows{reinterpret_cast<const void*>(address),
                         static_cast<std::int64_t>(ld_bytes)};
  }

  // Packs A (or B's columns) into k-contiguous rows at `at`, zero padded.
  static detail::KRows packed_k_rows(const BufferMatrix& x, bool columns, unsigned char* at,
                                     int element_bytes) {
    const std::size_t row_bytes = packed_row_bytes(x, columns, element_bytes);
    detail::pack_k_rows(detail::device_matrix(x), columns, columns ? x.cols : x.rows,
                        columns ? x.rows : x.cols, at,
                        static_cast<std::int64_t>(row_bytes / element_bytes));
    return {at, static_cast<std::int64_t>(row_bytes)};
  }

  void run_tiled(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                 const BufferMatrix& b, const std::optional<DeviceMatrix>& c,
                 const BufferMatrix& d) {
    const bool wgmma = engine_ == GemmEngine::wgmma ||
                       (engine_ == GemmEngine::fastest && fastest_on_wgmma(datapath));
    check_hardware_datapath(datapath, wgmma);
    const detail::Instruction instruction =
        detail::mma_sync_instruction(datapath.input, datapath.accumulator);
    const int k_per_instruction = detail::instruction_k(instruction);
    if (options.takeout_every_k < 0 || options.takeout_every_k % k_per_instruction != 0) {
      throw std::invalid_argument(name() +
                                  ": takeout_every_k = " + std::to_string(options.takeout_every_k) +
                                  " is not a non-negative multiple of the instruction's k = " +
                                  std::to_string(k_per_instruction));
    }
    if (options.takeout_every_k > 0 && !(datapath.accumulator == formats::fp32)) {
      throw std::invalid_argument(name() + ": takeout_every_k needs an fp32 accumulator");
    }
    const int bytes = detail::input_bytes(instruction);
    const auto a_in_place = in_place_k_rows(a, false, bytes, k_per_instruction);
    const auto b_in_place = in_place_k_rows(b, true, bytes, k_per_instruction);
    const std::size_t a_bytes =
        a_in_place ? 0 : static_cast<std::size_t>(a.rows) * packed_row_bytes(a, false, bytes);
    const std::size_t b_bytes =
        b_in_place ? 0 : static_cast<std::size_t>(b.cols) * packed_row_bytes(b, true, bytes);
    unsigned char* packed =
        a_bytes + b_bytes > 0
            ? static_cast<unsigned char*>(scratch(pack_scratch_, a_bytes + b_bytes))
            : nullptr;
    const detail::KRows a_rows = a_in_place ? *a_in_place : packed_k_rows(a, false, packed, bytes);
    const detail::KRows b_rows =
        b_in_place ? *b_in_place : packed_k_rows(b, true, packed + a_bytes, bytes);
    const DeviceMatrix out = detail::device_matrix(d);
    const bool reads_c = options.c_input == CInput::initial_accumulator || options.beta != 0.0f;
    detail::TiledGemmArguments args{};
    args.m = static_cast<int>(a.rows);
    args.n = static_cast<int>(b.cols);
    args.k = static_cast<int>(a.cols);
    args.a = a_rows;
    args.b = b_rows;
    args.c = reads_c ? detail::AccumulatorMatrix{c->data, c->ld, c->row_major}
                     : detail::AccumulatorMatrix{nullptr, 0, true};
    args.d = {out.data, out.ld, out.row_major};
    args.c_is_initial_accumulator = options.c_input == CInput::initial_accumulator;
    args.alpha = options.alpha;
    args.beta = options.beta;
    args.takeout_instructions = static_cast<int>(options.takeout_every_k / k_per_instruction);
    if (wgmma) {
      detail::launch_wgmma_gemm(instruction, args, nullptr);
    } else {
      detail::launch_tiled_mma_gemm(instruction, args, nullptr);
    }
  }

  static detail::LayerExponents exponents(const OuterExponents& e) {
    return {detail::device_exponents(e.rows), detail::device_exponents(e.columns)};
  }

  // Device memory kept between calls: the tiled GEMM's packed operands, the Ozaki steps'
  // descriptors, flags and results, the fp32 steps' counters and flags, the batched GEMMs'
  // pointer arrays.
  struct Scratch {
    void* address = nullptr;
    std::size_t bytes = 0;
  };
  // At least `bytes` of `slot`; growing it drops its contents.
  void* scratch(Scratch& slot, std::size_t bytes) {
    if (bytes > slot.bytes) {
      TCEMU_CUDA_CHECK(cudaDeviceSynchronize());  // kernels still reading the old block
      if (slot.address != nullptr) TCEMU_CUDA_CHECK(cudaFree(slot.address));
      slot = {};
      slot.address = allocate_bytes(bytes);
      slot.bytes = bytes;
    }
    return slot.address;
  }

  GemmEngine engine_;
  std::int64_t batched_gemm_max_multiply_adds_;
  DeviceInfo device_{};
  cublasHandle_t cublas_ = nullptr;
  Scratch pack_scratch_, step_scratch_, batch_scratch_;
};

}  // namespace

std::string kernel_instruction(GemmEngine engine, const FloatFormat& input,
                               const FloatFormat& accumulator) {
  check_mma_sync(input, accumulator);
  const detail::Instruction instruction = detail::mma_sync_instruction(input, accumulator);
  const std::string k = std::to_string(detail::instruction_k(instruction));
  if (engine == GemmEngine::mma_sync) return "mma.sync.m16n8k" + k;
  if (engine == GemmEngine::wgmma && detail::wgmma_computes(instruction)) {
    return "wgmma.m64n256k" + k;
  }
  throw std::invalid_argument("kernel_instruction: " +
                              std::string(engine == GemmEngine::wgmma
                                              ? "the wgmma kernel takes fp16, bf16 or tf32 -> fp32"
                                              : "only the mma_sync and wgmma engines have one "
                                                "instruction shape"));
}

std::unique_ptr<Backend> make_gpu_backend(const GpuBackendOptions& options) {
  return std::make_unique<GpuBackend>(options);
}

bool is_gpu_backend(const Backend& backend) {
  return dynamic_cast<const GpuBackend*>(&backend) != nullptr;
}

}  // namespace tcemu::gpu

// matmul(): D = alpha A B + beta C through a datapath, for whole matrices: the emulated GEMM
// (tcemu/emulator/gemm.hpp) on host arrays, without copying them (packed FP4 is unpacked once),
// with the scales of a block-scaled datapath, or the GPU backend's mma_gemm
// (tcemu/backend/tensor_core_steps.hpp) on CUDA arrays or when backend="gpu".
#include <optional>
#include <string>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/mma.hpp>

#include "arrays.hpp"
#include "backends.hpp"
#include "bindings.hpp"
#include "buffers.hpp"
#include "scales.hpp"

namespace tcemu::python {
namespace {

// Where `scales` is set the datapath is block-scaled and the scales have been checked.
nb::object emulated(const Datapath& datapath, const GemmOptions& options, const BitMatrix& ma,
                    const BitMatrix& mb, const std::optional<ScaleMatrices>& scales,
                    const std::optional<Operand>& c) {
  std::optional<BitMatrix> mc;
  if (c) mc = bit_matrix(*c, datapath.accumulator);
  const std::int64_t m = ma.view.rows, n = mb.view.cols;
  const NewArray d = new_array({static_cast<std::size_t>(m), static_cast<std::size_t>(n)},
                               dtype_of(datapath.accumulator));
  const MatrixView vd{{static_cast<unsigned char*>(d.data), datapath.accumulator, m, n,
                       std::max<std::int64_t>(n, 1), Layout::row_major}};
  const auto vc = mc ? std::optional<ConstMatrixView>(mc->view) : std::nullopt;
  {
    nb::gil_scoped_release release;
    if (scales) {
      emulated_gemm(datapath, options, ma.view, mb.view, scales->view(), vc, vd);
    } else {
      emulated_gemm(datapath, options, ma.view, mb.view, vc, vd);
    }
  }
  return d.object;
}

// One argument's scales in `backend`'s memory: a CUDA array of uint8 codes as it is, a host
// array (any dtype scale_matrix takes) checked there and copied in, row-major.
BufferOperand<FloatFormat> scales_on_backend(Backend& backend, nb::handle scales, const char* name,
                                             const FloatFormat& format, std::int64_t rows,
                                             std::int64_t cols, const char* shape) {
  const Operand op = operand(scales, name);
  if (on_gpu(op)) {
    auto out = to_buffer(backend, op, format);
    if (out.shape.rows != rows || out.shape.cols != cols) {
      throw nb::value_error((std::string(name) + " must be " + shape + " = " +
                             std::to_string(rows) + " x " + std::to_string(cols) + ", got " +
                             std::to_string(out.shape.rows) + " x " +
                             std::to_string(out.shape.cols))
                                .c_str());
    }
    return out;
  }
  const BitMatrix host = scale_matrix(scales, name, format, rows, cols, shape);
  std::vector<unsigned char> bytes(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j)
      bytes[static_cast<std::size_t>(i * cols + j)] =
          static_cast<unsigned char>(host.view.get(i, j));
  }
  auto out = new_buffer(backend, format, rows, cols);
  backend.copy_in(bytes.data(), out.buffer, bytes.size());
  return out;
}

nb::object on_backend(Backend& backend, const Datapath& datapath, const GemmOptions& options,
                      const Operand& a, const Operand& b, const std::optional<Operand>& c,
                      nb::handle scale_a, nb::handle scale_b, int device) {
  const auto ba = to_buffer(backend, a, datapath.input);
  const auto bb = to_buffer(backend, b, datapath.b_format());
  std::optional<BufferOperand<FloatFormat>> bc;
  if (c) bc = to_buffer(backend, *c, datapath.accumulator);
  std::optional<BufferOperand<FloatFormat>> sa, sb;
  std::optional<ScaleBuffers> scales;
  if (datapath.block_scaled()) {
    const std::int64_t m = ba.shape.rows, k = ba.shape.cols, n = bb.shape.cols;
    const auto s = static_cast<std::int64_t>(scale_count(datapath, static_cast<std::size_t>(k)));
    sa.emplace(scales_on_backend(backend, scale_a, "scale_a", datapath.block_scaling.scale_a, m, s,
                                 "m x ceil(k / scale_block)"));
    sb.emplace(scales_on_backend(backend, scale_b, "scale_b", datapath.block_scaling.scale_b, s, n,
                                 "ceil(k / scale_block) x n"));
    scales = ScaleBuffers{sa->view(), sb->view()};
  }
  const auto bd = new_buffer(backend, datapath.accumulator, ba.shape.rows, bb.shape.cols);
  {
    nb::gil_scoped_release release;
    backend.mma_gemm(datapath, options, ba.view(), bb.view(),
                     bc ? std::optional<BufferMatrix>(bc->view()) : std::nullopt, bd.view(),
                     scales);
    backend.synchronize();
  }
  return from_buffer(backend, bd, device >= 0, device);
}

}  // namespace

CInput c_input_named(const std::string& word) {
  if (word == "epilogue") return CInput::epilogue;
  if (word == "initial_accumulator") return CInput::initial_accumulator;
  throw nb::value_error(
      ("c_input must be 'epilogue' or 'initial_accumulator', got '" + word + "'").c_str());
}

void bind_matmul(nb::module_& m) {
  m.def(
      "matmul",
      [](nb::handle a, nb::handle b, nb::handle c, const Datapath& datapath, nb::handle scale_a,
         nb::handle scale_b, const PackedArg& packed, float alpha, float beta,
         const std::string& c_input, std::int64_t takeout_every_k, int threads,
         std::optional<std::string> backend, const std::string& engine) {
        validate(datapath);
        const std::optional<NibbleOrder> packing = fp4_packing("matmul", datapath, packed);
        const Operand oa = operand(a, "a"), ob = operand(b, "b");
        std::optional<Operand> oc;
        if (!c.is_none()) oc = operand(c, "c");
        const bool scaled = takes_scales("matmul", datapath, scale_a, scale_b,
                                         "scale_a m x ceil(k / scale_block), scale_b "
                                         "ceil(k / scale_block) x n");
        const GemmOptions options{.alpha = alpha,
                                  .beta = beta,
                                  .c_input = c_input_named(c_input),
                                  .takeout_every_k = takeout_every_k,
                                  .threads = threads};
        const int device = oc ? cuda_device({&oa, &ob, &*oc}) : cuda_device({&oa, &ob});
        const std::string where = backend.value_or(device >= 0 ? "gpu" : "emulator");
        if (where == "emulator" && device < 0) {
          const BitMatrix ma = input_matrix(oa, datapath.input, packing, 1);
          const BitMatrix mb = input_matrix(ob, datapath.b_format(), packing, 0);
          std::optional<ScaleMatrices> scales;
          if (scaled) {
            const std::int64_t rows = ma.view.rows, k = ma.view.cols, cols = mb.view.cols;
            const auto s =
                static_cast<std::int64_t>(scale_count(datapath, static_cast<std::size_t>(k)));
            const BlockScaling& f = datapath.block_scaling;
            scales = ScaleMatrices{
                scale_matrix(scale_a, "scale_a", f.scale_a, rows, s, "m x ceil(k / scale_block)"),
                scale_matrix(scale_b, "scale_b", f.scale_b, s, cols, "ceil(k / scale_block) x n")};
          }
          return emulated(datapath, options, ma, mb, scales, oc);
        }
        if (where != "gpu") {
          throw nb::value_error((device >= 0
                                     ? "CUDA arrays run on backend 'gpu', got '" + where + "'"
                                     : "backend must be 'emulator' or 'gpu', got '" + where + "'")
                                    .c_str());
        }
        if (packing) {
          throw nb::value_error(
              "matmul: backend 'gpu' takes one e2m1 code a byte: packed FP4 runs on backend "
              "'emulator' with host arrays");
        }
        const auto gpu = make_backend("gpu", threads, std::max(device, 0), engine);
        return on_backend(*gpu, datapath, options, oa, ob, oc, scale_a, scale_b, device);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c") = nb::none(), nb::kw_only(), nb::arg("datapath"),
      nb::arg("scale_a") = nb::none(), nb::arg("scale_b") = nb::none(), nb::arg("packed") = false,
      nb::arg("alpha") = 1.0f, nb::arg("beta") = 0.0f, nb::arg("c_input") = "epilogue",
      nb::arg("takeout_every_k") = 0, nb::arg("threads") = 0, nb::arg("backend") = nb::none(),
      nb::arg("engine") = "fastest",
      "D = alpha A B + beta C through `datapath` (emulated_gemm, gemm.hpp): A [m, k] of the "
      "input format and B [k, n] of datapath.b_format (its float dtype, float32 for tf32, "
      "ml_dtypes' float4_e2m1fn/float6_e2m3fn/float6_e3m2fn for FP4/FP6, or uint bit patterns: "
      "FP6/FP4 one code a byte in the low bits), C [m, n] of the accumulator format or None. "
      "packed=True or 'high_first': each e2m1 operand is uint8 with two codes a byte along k "
      "(A [m, k/2], B [k/2, n]), byte j holding k = 2j in bits 7:4 and 2j + 1 in bits 3:0, as "
      "MMA-Sim unpacks them; packed='low_first': k = 2j in bits 3:0. A block-scaled datapath "
      "(datapath.block_scaled) needs scale_a "
      "[m, ceil(k / scale_block)] and scale_b [ceil(k / scale_block), n] in its scale formats "
      "(ue8m0: float8_e8m0fnu or uint8; ue4m3: float8_e4m3fn, its sign ignored, or uint8); "
      "scale j covers k = j scale_block up to the next. c_input: 'epilogue' (cuBLAS: D = "
      "RN(alpha acc + beta C)) or 'initial_accumulator' (C starts the chain; alpha = beta = 1). "
      "takeout_every_k: kb > 0 adds each chunk of kb values of k to an fp32 register (Ootomo and "
      "Yokota). Any strides; returns a new float32/float16 array. backend: 'emulator' (the "
      "default for host arrays) or 'gpu' (the default for CUDA arrays, whose result is a CUDA "
      "array; engine 'fastest' (our hardware kernels where they compute the datapath, the "
      "emulated engine for any other), 'mma_sync', 'wgmma', 'cublas' or 'emulated' (any datapath "
      "on the CUDA cores, the emulator's bits); block-scaled datapaths run on the emulator "
      "only).");
}

}  // namespace tcemu::python

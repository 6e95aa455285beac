// matmul(): D = alpha A B + beta C through a datapath, for whole matrices or batches of them:
// the emulated GEMM (tcemu/emulator/gemm.hpp) on host arrays, without copying them (packed FP4
// is unpacked once), with the scales of a block-scaled datapath, or the GPU backend's mma_gemm
// (tcemu/backend/tensor_core_steps.hpp) on CUDA arrays or when backend="gpu". CUDA operands are
// read in place and the result written in place; the GPU backend is kept between calls
// (shared_gpu_backend), so a call costs its kernels, one allocation and one synchronisation.
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

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

// The array arguments of one call: 2-D, or batched (each 3-D, [batch, ...], the same batch),
// one product per batch element. Scales are set exactly when the datapath takes them.
struct Arguments {
  Operand a, b;
  std::optional<Operand> c, scale_a, scale_b;
  std::optional<std::size_t> batch;

  std::size_t products() const { return batch.value_or(1); }
  std::vector<std::size_t> result_shape(std::int64_t m, std::int64_t n) const {
    std::vector<std::size_t> shape{static_cast<std::size_t>(m), static_cast<std::size_t>(n)};
    if (batch) shape.insert(shape.begin(), *batch);
    return shape;
  }
  // Product i's arguments: each array's element i when batched, the arguments themselves if not.
  Arguments product(std::size_t i) const {
    if (!batch) return *this;
    const auto element = [i](const std::optional<Operand>& op) {
      return op ? std::optional<Operand>(batch_element(*op, i)) : std::nullopt;
    };
    return {batch_element(a, i), batch_element(b, i), element(c),
            element(scale_a),    element(scale_b),    std::nullopt};
  }
};

// A's rank decides: 2-D, or 3-D with every other array 3-D and of A's batch. ValueError naming
// the argument otherwise.
Arguments arguments(nb::handle a, nb::handle b, nb::handle c, nb::handle scale_a,
                    nb::handle scale_b, bool scaled) {
  Arguments args{operand(a, "a"), operand(b, "b"), std::nullopt,
                 std::nullopt,    std::nullopt,    std::nullopt};
  if (!c.is_none()) args.c = operand(c, "c");
  if (scaled) {
    args.scale_a = operand(scale_a, "scale_a");
    args.scale_b = operand(scale_b, "scale_b");
  }
  const std::size_t ndim = args.a.array.ndim();
  if (ndim != 2 && ndim != 3) {
    throw nb::value_error(
        ("a: expected a 2-D array or a batch of them (3-D), got " + std::to_string(ndim) + "-D")
            .c_str());
  }
  if (ndim == 2) return args;  // the other arrays' ranks are checked as 2-D operands are
  args.batch = args.a.array.shape(0);
  const auto require_batch = [&](const Operand& op) {
    if (op.array.ndim() != 3 || op.array.shape(0) != *args.batch) {
      throw nb::value_error(
          (op.name + ": a is a batch of " + std::to_string(*args.batch) +
           " matrices [batch, m, k], so " + op.name + " must be a batch of as many [" +
           std::to_string(*args.batch) + ", ...], got " + std::to_string(op.array.ndim()) + "-D" +
           (op.array.ndim() == 3 ? " of batch " + std::to_string(op.array.shape(0)) : ""))
              .c_str());
    }
  };
  require_batch(args.b);
  for (const auto* op : {&args.c, &args.scale_a, &args.scale_b}) {
    if (*op) require_batch(**op);
  }
  return args;
}

// The emulator on host arrays: every product's matrices read (the GIL held), then computed into
// the result with the GIL released.
nb::object emulated(const Datapath& datapath, const GemmOptions& options, const Arguments& args,
                    std::optional<NibbleOrder> packing) {
  struct Product {
    BitMatrix a, b;
    std::optional<BitMatrix> c;
    std::optional<ScaleMatrices> scales;
  };
  std::vector<Product> products;
  for (std::size_t i = 0; i < args.products(); ++i) {
    const Arguments p = args.product(i);
    Product& q = products.emplace_back(Product{input_matrix(p.a, datapath.input, packing, 1),
                                               input_matrix(p.b, datapath.b_format(), packing, 0),
                                               std::nullopt, std::nullopt});
    if (p.c) q.c = bit_matrix(*p.c, datapath.accumulator);
    if (p.scale_a) {
      const std::int64_t rows = q.a.view.rows, k = q.a.view.cols, cols = q.b.view.cols;
      const auto s = static_cast<std::int64_t>(scale_count(datapath, static_cast<std::size_t>(k)));
      const BlockScaling& f = datapath.block_scaling;
      q.scales =
          ScaleMatrices{scale_matrix(*p.scale_a, f.scale_a, rows, s, "m x ceil(k / scale_block)"),
                        scale_matrix(*p.scale_b, f.scale_b, s, cols, "ceil(k / scale_block) x n")};
    }
  }
  const std::int64_t m = products.front().a.view.rows, n = products.front().b.view.cols;
  const NewArray d = new_array(args.result_shape(m, n), dtype_of(datapath.accumulator));
  const std::size_t stride = static_cast<std::size_t>(m * n) * element_bytes(datapath.accumulator);
  nb::gil_scoped_release release;
  for (std::size_t i = 0; i < products.size(); ++i) {
    const Product& q = products[i];
    const MatrixView vd{{static_cast<unsigned char*>(d.data) + i * stride, datapath.accumulator, m,
                         n, std::max<std::int64_t>(n, 1), Layout::row_major}};
    const auto vc = q.c ? std::optional<ConstMatrixView>(q.c->view) : std::nullopt;
    if (q.scales) {
      emulated_gemm(datapath, options, q.a.view, q.b.view, q.scales->view(), vc, vd);
    } else {
      emulated_gemm(datapath, options, q.a.view, q.b.view, vc, vd);
    }
  }
  return d.object;
}

// One product's scales in `backend`'s memory: a CUDA array of uint8 codes as it is, a host array
// (any dtype scale_matrix takes) checked there and copied in, row-major.
BufferOperand<FloatFormat> scales_on_backend(Backend& backend, const Operand& scales,
                                             const FloatFormat& format, std::int64_t rows,
                                             std::int64_t cols, const char* shape) {
  if (on_gpu(scales)) {
    auto out = read_only_buffer(backend, scales, format);
    if (out.shape.rows != rows || out.shape.cols != cols) {
      throw nb::value_error((scales.name + " must be " + shape + " = " + std::to_string(rows) +
                             " x " + std::to_string(cols) + ", got " +
                             std::to_string(out.shape.rows) + " x " +
                             std::to_string(out.shape.cols))
                                .c_str());
    }
    return out;
  }
  const BitMatrix host = scale_matrix(scales, format, rows, cols, shape);
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

// The GPU backend: every product's operands in its memory (CUDA arrays borrowed in place, host
// arrays copied in), the products into one contiguous result (a new CUDA array for CUDA
// operands, else a backend buffer copied out to NumPy), then one synchronisation.
nb::object on_backend(const SharedBackend& shared, const Datapath& datapath,
                      const GemmOptions& options, const Arguments& args, int device) {
  Backend& backend = shared.backend;
  const CurrentDevice current(std::max(device, 0));
  struct Product {
    BufferOperand<FloatFormat> a, b;
    std::optional<BufferOperand<FloatFormat>> c, scale_a, scale_b;
  };
  std::vector<Product> products;
  for (std::size_t i = 0; i < args.products(); ++i) {
    const Arguments p = args.product(i);
    Product& q = products.emplace_back(Product{read_only_buffer(backend, p.a, datapath.input),
                                               read_only_buffer(backend, p.b, datapath.b_format()),
                                               std::nullopt, std::nullopt, std::nullopt});
    if (p.c) q.c = read_only_buffer(backend, *p.c, datapath.accumulator);
    if (p.scale_a) {
      const std::int64_t m = q.a.shape.rows, k = q.a.shape.cols, n = q.b.shape.cols;
      const auto s = static_cast<std::int64_t>(scale_count(datapath, static_cast<std::size_t>(k)));
      q.scale_a = scales_on_backend(backend, *p.scale_a, datapath.block_scaling.scale_a, m, s,
                                    "m x ceil(k / scale_block)");
      q.scale_b = scales_on_backend(backend, *p.scale_b, datapath.block_scaling.scale_b, s, n,
                                    "ceil(k / scale_block) x n");
    }
  }
  const std::int64_t m = products.front().a.shape.rows, n = products.front().b.shape.cols;
  const std::vector<std::size_t> shape = args.result_shape(m, n);
  const nb::dlpack::dtype dtype = dtype_of(datapath.accumulator);
  const std::size_t stride = static_cast<std::size_t>(m * n) * element_bytes(datapath.accumulator);
  std::optional<CudaResult> on_device;
  BufferOperand<FloatFormat> on_host;
  if (device >= 0) {
    on_device = new_cuda_result(backend, shape, dtype, device);
  } else {
    on_host = new_buffer(backend, datapath.accumulator,
                         static_cast<std::int64_t>(products.size()) * m, n);
  }
  const Buffer& d = on_device ? on_device->buffer : on_host.buffer;
  {
    nb::gil_scoped_release release;
    const std::lock_guard<std::mutex> steps(shared.steps);
    for (std::size_t i = 0; i < products.size(); ++i) {
      const Product& q = products[i];
      std::optional<ScaleBuffers> scales;
      if (q.scale_a) scales = ScaleBuffers{q.scale_a->view(), q.scale_b->view()};
      const BufferMatrix vd{&d,
                            i * stride,
                            datapath.accumulator,
                            m,
                            n,
                            std::max<std::int64_t>(n, 1),
                            Layout::row_major};
      backend.mma_gemm(datapath, options, q.a.view(), q.b.view(),
                       q.c ? std::optional<BufferMatrix>(q.c->view()) : std::nullopt, vd, scales);
    }
    backend.synchronize();
  }
  if (on_device) return on_device->array;
  const NewArray out = new_array(shape, dtype);
  backend.copy_out(d, out.data, products.size() * stride);
  return out.object;
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
         std::optional<std::string> backend, const std::string& engine) -> nb::object {
        validate(datapath);
        const std::optional<NibbleOrder> packing = fp4_packing("matmul", datapath, packed);
        const bool scaled = takes_scales("matmul", datapath, scale_a, scale_b,
                                         "scale_a m x ceil(k / scale_block), scale_b "
                                         "ceil(k / scale_block) x n");
        const Arguments args = arguments(a, b, c, scale_a, scale_b, scaled);
        const GemmOptions options{.alpha = alpha,
                                  .beta = beta,
                                  .c_input = c_input_named(c_input),
                                  .takeout_every_k = takeout_every_k,
                                  .threads = threads};
        const int device =
            args.c ? cuda_device({&args.a, &args.b, &*args.c}) : cuda_device({&args.a, &args.b});
        const std::string where = backend.value_or(device >= 0 ? "gpu" : "emulator");
        if (where != "gpu" && (where != "emulator" || device >= 0)) {
          throw nb::value_error((device >= 0
                                     ? "CUDA arrays run on backend 'gpu', got '" + where + "'"
                                     : "backend must be 'emulator' or 'gpu', got '" + where + "'")
                                    .c_str());
        }
        if (where == "gpu" && packing) {
          throw nb::value_error(
              "matmul: backend 'gpu' takes one e2m1 code a byte: packed FP4 runs on backend "
              "'emulator' with host arrays");
        }
        if (args.products() == 0) {  // an empty batch: nothing to read
          const std::vector<std::size_t> shape{0, args.a.array.shape(1), args.b.array.shape(2)};
          const nb::dlpack::dtype dtype = dtype_of(datapath.accumulator);
          if (device < 0) return new_array(shape, dtype).object;
          return new_cuda_result(shared_gpu_backend(device, engine).backend, shape, dtype, device)
              .array;
        }
        if (where == "emulator") return emulated(datapath, options, args, packing);
        return on_backend(shared_gpu_backend(std::max(device, 0), engine), datapath, options, args,
                          device);
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
      "Batched: A [batch, m, k], B [batch, k, n], C [batch, m, n] (and the scales [batch, ...]) "
      "give D [batch, m, n], product i of element i of each, the bits of one call per element. "
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
      "on the CUDA cores, the emulator's bits; the only one for block-scaled datapaths)). CUDA "
      "operands are read in place on the legacy default stream, which the call synchronises "
      "before it returns.");
}

}  // namespace tcemu::python

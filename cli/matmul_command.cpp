// tcemu matmul: the emulated GEMM of whole matrices through any datapath.
#include <iostream>
#include <new>
#include <stdexcept>

#include <tcemu/cases/printable.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/session/backends.hpp>

#include "commands.hpp"
#include "datapath_options.hpp"
#include "gemm_operands.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage =
    R"(usage: tcemu matmul [datapath options] --a FILE --b FILE [--scale-a FILE --scale-b FILE]
                    [--c FILE] [--alpha x --beta y]
                    [--c-input epilogue|initial] [--takeout KB] [--threads N]
                    [--backend emulator|gpu] --out FILE

Computes D = alpha A B + beta C through the datapath, bit for bit as the emulated GEMM of
tcemu/emulator/gemm.hpp: each element of D is the chain of MMA instructions over k in k order
(a k tail shorter than one instruction is a partial instruction, as a kernel padding with zeros
computes it). Writes D (M x N, the accumulator format) to --out: .npy by the name (float32 or
float16), hex text otherwise. Prints the datapath on standard error. A block-scaled datapath
(tcemu presets lists them) takes the scales of A and B (--scale-a, --scale-b), e.g. NVFP4:
  tcemu matmul --arch sm100 --instr tcgen05.mxf4nvf4.block16.ue4m3 --type e2m1 \
    --a A.npy --b B.npy --scale-a SA.npy --scale-b SB.npy --out D.npy

Exit status: 0 success; 2 a usage or input error (an unknown or malformed option, a matrix file
that is missing, unreadable, malformed, of the wrong shape or of a dtype that does not say its
format); 1 any other failure (D that could not be written whole, a GPU error).

  --backend NAME          emulator (default): the CPU emulator on --threads threads; gpu: the
                          same bits on the CUDA device, for any datapath (the GPU backend's
                          hardware kernels where they compute it, its emulated engine otherwise)

)";

// A buffer of `backend` holding x's storage (x's rows or columns, ld apart).
Buffer put(Backend& backend, const ConstMatrixView& x) {
  const std::int64_t outer = x.layout == Layout::row_major ? x.rows : x.cols;
  const std::size_t bytes =
      static_cast<std::size_t>(std::max<std::int64_t>(1, outer * x.ld)) * container_bytes(x.format);
  Buffer buffer = backend.allocate(bytes);
  if (x.rows > 0 && x.cols > 0) backend.copy_in(x.data, buffer, bytes);
  return buffer;
}

// x's shape, layout and ld in `buffer`.
BufferMatrix in(const Buffer& buffer, const ConstMatrixView& x) {
  return {&buffer, 0, x.format, x.rows, x.cols, x.ld, x.layout};
}

// D on a backend's mma_gemm: the operands go in, D comes back.
void gpu_gemm(Backend& backend, const Datapath& dp, const GemmOperands& operands,
              const MatrixView& d) {
  const ConstMatrixView a = operands.a_view(dp), b = operands.b_view(dp);
  const Buffer a_buffer = put(backend, a), b_buffer = put(backend, b), d_buffer = put(backend, d);
  const std::optional<ConstMatrixView> c = operands.c_view(dp);
  const std::optional<Buffer> c_buffer = c ? std::optional(put(backend, *c)) : std::nullopt;
  const std::optional<BlockScales> scales = operands.scales(dp);
  std::optional<Buffer> scale_a_buffer, scale_b_buffer;
  std::optional<ScaleBuffers> scale_buffers;
  if (scales) {
    scale_a_buffer.emplace(put(backend, scales->a));
    scale_b_buffer.emplace(put(backend, scales->b));
    scale_buffers = ScaleBuffers{in(*scale_a_buffer, scales->a), in(*scale_b_buffer, scales->b)};
  }
  backend.mma_gemm(dp, operands.options, in(a_buffer, a), in(b_buffer, b),
                   c ? std::optional(in(*c_buffer, *c)) : std::nullopt, in(d_buffer, d),
                   scale_buffers);
  if (d.rows > 0 && d.cols > 0) backend.copy_out(d_buffer, d.data, d_buffer.bytes());
}

}  // namespace

int matmul_command(const std::vector<std::string>& words) {
  auto names = datapath_option_names();
  names.merge(gemm_operand_option_names());
  names.insert("out");
  names.insert("backend");
  const session::Arguments args(words, names, {"help"});
  if (args.flag("help")) {
    std::cout << kUsage << gemm_operand_options_help() << '\n' << datapath_options_help();
    return 0;
  }
  if (!args.positional().empty()) {
    throw session::UsageError("unexpected argument '" + printable(args.positional().front()) + "'");
  }
  const auto out = args.value("out");
  if (!out) throw session::UsageError("--out FILE is required");
  const Datapath dp = datapath_from(args);
  const GemmOperands operands = gemm_operands_from(args, dp);
  BitMatrix d{.type = element_type(dp.accumulator),
              .rows = operands.a.rows,
              .cols = operands.b.cols,
              .layout = Layout::row_major,
              .bytes = {},
              .npy_dtype = {}};
  // emulated_gemm checks every shape against A and B; only D's storage is sized here (A and B
  // are bounded by their files, their product's D is not: 10^6 x 0 times 0 x 10^6).
  const std::string d_size =
      std::to_string(d.rows) + " x " + std::to_string(d.cols) + " " + d.type.name + " elements";
  if (d.rows != 0 && d.cols > (std::int64_t{1} << 60) / d.rows) {
    throw std::runtime_error("D of " + d_size + " overflows a byte count");
  }
  try {
    d.bytes.resize(static_cast<std::size_t>(d.rows * d.cols * d.type.bytes()));
  } catch (const std::bad_alloc&) {
    throw std::runtime_error("out of memory: could not allocate D of " + d_size);
  }
  const MatrixView d_view{{d.bytes.data(), dp.accumulator, d.rows, d.cols,
                           std::max<std::int64_t>(d.cols, 1), Layout::row_major}};
  const std::string backend = args.value_or("backend", "emulator");
  if (backend != "emulator" && backend != "gpu") {
    throw session::UsageError("--backend must be emulator or gpu, got '" + printable(backend) +
                              "'");
  }
  std::cerr << "datapath: " << describe(dp) << '\n';
  if (backend == "gpu") {
    const auto gpu = session::make_backend(session::backend_choice("gpu"),
                                           {.threads = operands.options.threads});
    gpu_gemm(*gpu, dp, operands, d_view);
  } else if (const auto scales = operands.scales(dp)) {
    emulated_gemm(dp, operands.options, operands.a_view(dp), operands.b_view(dp), *scales,
                  operands.c_view(dp), d_view);
  } else {
    emulated_gemm(dp, operands.options, operands.a_view(dp), operands.b_view(dp),
                  operands.c_view(dp), d_view);
  }
  write_bit_matrix_file(*out, d);
  return 0;
}

}  // namespace tcemu::cli

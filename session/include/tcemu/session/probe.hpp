// The probe-and-fit pipeline of `tcemu probe`, `tcemu detect` and Python's tcemu.probe,
// tcemu.detect_gpu and tcemu.gpu_mma: the present GPU's instruction shapes, cases run through one
// of them (the GPU's results recorded in the cases), and the datapath fitted to those results.
// Every function that touches the GPU throws NotBuilt (backends.hpp) in a build without the CUDA
// backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <tcemu/cases/case_generator.hpp>
#include <tcemu/cases/detect.hpp>
#include <tcemu/cases/sparse_probe_cases.hpp>
#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/format.hpp>

namespace tcemu::session {

using FormatPair = std::pair<FloatFormat, FloatFormat>;  // input, accumulator

// The GPU the probe runs on (device 0).
struct ProbeDevice {
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  std::string arch;  // the emulator's preset of its architecture; "sm90" where it has none

  int compute_capability() const { return compute_major * 10 + compute_minor; }
};

// Device 0. Throws std::runtime_error ("no CUDA device (REASON)") where there is none.
ProbeDevice probe_device();

// The instruction shapes `name` selects on `device`: "mma.sync" (itself: the largest-K mma.sync
// shape of each format), "all" (every dense shape the probe runners issue, then the sparse
// mma.sp shapes, then on a Blackwell GPU its Blackwell instructions; not the wgmma of N > 8), or
// one shape the runners issue there (the wide wgmma shapes included). A Blackwell name
// (gpu/blackwell_runner.hpp: tcgen05, tcgen05.KIND.blockS[.SCALE], the block-scaled sm_120
// mma.sync names) on any other GPU throws std::runtime_error naming the GPU it needs and the one
// present ("tcgen05.mxf4.block32 needs an sm_100a GPU (B200, GB200; compute capability 10.0);
// this is NVIDIA H200 (compute capability 9.0)"). Throws UsageError ("--instr: DEVICE has no
// probe runner for 'NAME'; it has: mma.sync all ...") for another name.
std::vector<std::string> probe_instructions(const ProbeDevice& device, const std::string& name);

// Device 0 for probing `instruction`: probe_device(), whose "no CUDA device" error also names
// what a Blackwell instruction needs ("...; tcgen05 needs an sm_100a GPU (...)").
ProbeDevice probe_device(const std::string& instruction);

// Whether `instruction` runs through a Blackwell runner on `device` (a tcgen05 name, a
// block-scaled sm_120 name, or mma.sync.m16n8k32 on an sm_120 GPU: its kind::f8f6f4).
bool is_blackwell_instruction(const ProbeDevice& device, const std::string& instruction);

// The formats B takes with `pair` on `instruction` (the preset rows of the device's
// architecture): every one of e5m2, e4m3, e3m2, e2m3, e2m1 for kind::f8f6f4 and mxf8f6f4, else
// pair.first alone.
std::vector<FloatFormat> instruction_b_formats(const ProbeDevice& device,
                                               const std::string& instruction,
                                               const FormatPair& pair);

// Whether `instruction` is a sparse shape (mma.sp.mMnNkK): its cases are SparseMmaCase.
bool is_sparse_instruction(const std::string& instruction);

// The (input, accumulator) pairs `instruction` takes on `device`.
std::vector<FormatPair> instruction_pairs(const ProbeDevice& device,
                                          const std::string& instruction);

// D(0, 0) of one `instruction` (a dense shape, "mma.sync" included) per case on device 0. Throws
// std::invalid_argument for a shape or pair the runners do not cover.
std::vector<std::uint32_t> run_cases(const std::string& instruction, const FormatPair& pair,
                                     std::span<const MmaCase> cases);

// A dense shape's probe: `random` generated cases (seed `seed`) and the crafted ones, run on the
// GPU, each case's d its result. A Blackwell instruction (is_blackwell_instruction) takes B in
// `input_b` (default: the input format) and draws its random cases from the MMA-Sim evidence
// generator (mmasim_evidence.hpp: FP6/FP4 values, mixed formats and scales), its crafted ones,
// where B's format is A's, with scales of 1 on a block-scaled datapath.
struct DenseProbe {
  // The datapath the cases are generated for and compared with. The sm90 mma.sync.m8n8k4 fp16 ->
  // fp16 (pair_fma) has no preset: its cases are generated as for the fp32 accumulator's shape,
  // with fp16 results, and compared with the fp32 pair-FMA emulation (pair_fma_emulation.hpp).
  Datapath datapath;
  bool pair_fma = false;
  int k = 0;
  ProbeCases probe;
};
DenseProbe probe_dense(const ProbeDevice& device, const std::string& instruction,
                       const FormatPair& pair, std::size_t random, std::uint64_t seed,
                       const std::optional<FloatFormat>& input_b = std::nullopt);

// A sparse shape's probe, the same with sparse cases; `datapath` is the architecture's sparse
// preset (over the K/2 kept products).
struct SparseProbe {
  Datapath datapath;
  int k = 0;
  SparseProbeCases probe;
};
SparseProbe probe_sparse(const ProbeDevice& device, const std::string& instruction,
                         const FormatPair& pair, std::size_t random, std::uint64_t seed);

// The datapath fitted (detect.hpp, fit_datapath from the baseline of the shape's K) to a probe's
// results; a sparse probe's over the K/2 kept products of each case (dense_case()). A block-scaled
// or mixed-format probe keeps its instruction's B format and scale layout, and the fit searches G,
// F, the zero exponent and the NaN-scale rule with the rest.
DatapathFit fit_probe(const DenseProbe& probe);
DatapathFit fit_probe(const SparseProbe& probe);

}  // namespace tcemu::session

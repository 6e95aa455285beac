// Reader for the Khattak-Mikaitis GPU capture sets (tests/data/gpu-captures, README there):
// GPU/FORMAT/{a,b,c,d}_GPU_*.txt, row i of every file belonging together.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/format.hpp>

namespace tcemu {

// One output element recorded on a GPU, converted to the formats the MMA reads and writes:
// a and b in the input format's container, c and d in the accumulator format.
struct CaptureCase {
  std::vector<std::uint32_t> a;
  std::vector<std::uint32_t> b;
  std::uint32_t c;
  std::uint32_t d;
};

struct CaptureSet {
  std::string gpu;  // directory name: V100, A100, A2, Ada, L40S, H100, H200, B200
  FloatFormat input;
  FloatFormat accumulator;
  std::vector<CaptureCase> cases;
};

// Every capture set under `root` (one per GPU, input format and output file), sorted by GPU and
// format. Throws InputError naming the file and line of any malformed or inconsistent
// row (an operand not exactly representable in its format, rows that differ in count).
std::vector<CaptureSet> load_capture_sets(const std::filesystem::path& root);

// The architecture preset a capture directory's GPU belongs to (V100 -> sm70, ... B200 -> sm100).
std::string arch_of_gpu(const std::string& gpu);

// The instruction path a capture set was recorded with: mma.sync, except the H100/H200 fp8 sets
// with an fp32 accumulator. Those fit the wgmma fp8 datapath exactly and differ from what
// mma.sync computes on our H100 (docs/presets.md), so they come from wgmma whatever the capture
// README believed.
std::string instruction_of_capture(const CaptureSet& set);

struct ReplayMismatch {
  std::size_t row;  // 0-based row of the capture files
  std::uint32_t expected;
  std::uint32_t got;
};

struct ReplayResult {
  std::size_t cases = 0;
  std::size_t mismatches = 0;
  std::vector<ReplayMismatch> first;  // the first few mismatches, in row order
};

// Runs every case of `set` through `datapath` (mma_element) and compares bits.
ReplayResult replay(const CaptureSet& set, const Datapath& datapath, std::size_t keep = 3);

}  // namespace tcemu

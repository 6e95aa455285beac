// The Blackwell runners' names, device check and operands (blackwell_runner.hpp); the kernels are
// in sm120_runner.cu and tcgen05_runner.cu, built only with TCEMU_BLACKWELL_PROBES.
#include <tcemu/gpu/blackwell_runner.hpp>

#include <algorithm>
#include <array>
#include <stdexcept>

#include <tcemu/emulator/mma.hpp>
#include <tcemu/gpu/blackwell_operands.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/tcgen05_descriptors.hpp>

#include "blackwell_cases.hpp"

namespace tcemu::gpu {
namespace {

using detail::ScaleVec;
using tcgen05::Kind;

// One Blackwell runner: its name, its architecture (compute capability x10) and its kind; the
// plain "tcgen05" takes its kind from the input format.
struct Runner {
  std::string_view name;
  int compute_capability;
  Kind kind;
  ScaleVec vec;
};

constexpr std::array kRunners = {
    Runner{"tcgen05", 100, Kind::f8f6f4, ScaleVec::none},
    Runner{"tcgen05.mxf8f6f4.block32", 100, Kind::mxf8f6f4, ScaleVec::x1},
    Runner{"tcgen05.mxf4.block32", 100, Kind::mxf4, ScaleVec::x2},
    Runner{"tcgen05.mxf4nvf4.block32", 100, Kind::mxf4nvf4, ScaleVec::x2},
    Runner{"tcgen05.mxf4nvf4.block16.ue8m0", 100, Kind::mxf4nvf4, ScaleVec::x4},
    Runner{"tcgen05.mxf4nvf4.block16.ue4m3", 100, Kind::mxf4nvf4, ScaleVec::x4},
    Runner{"mma.sync.m16n8k32", 120, Kind::f8f6f4, ScaleVec::none},
    Runner{"mma.sync.m16n8k32.mxf8f6f4.block32", 120, Kind::mxf8f6f4, ScaleVec::x1},
    Runner{"mma.sync.m16n8k64.mxf4.block32", 120, Kind::mxf4, ScaleVec::x2},
    Runner{"mma.sync.m16n8k64.mxf4nvf4.block32", 120, Kind::mxf4nvf4, ScaleVec::x2},
    Runner{"mma.sync.m16n8k64.mxf4nvf4.block16.ue8m0", 120, Kind::mxf4nvf4, ScaleVec::x4},
    Runner{"mma.sync.m16n8k64.mxf4nvf4.block16.ue4m3", 120, Kind::mxf4nvf4, ScaleVec::x4},
};

constexpr std::string_view kSm100 = "an sm_100a GPU (B200, GB200; compute capability 10.0)";
constexpr std::string_view kSm120 =
    "an sm_120a GPU (RTX 50, RTX PRO 6000 Blackwell; compute capability 12.0)";

const Runner* find_runner(std::string_view instruction) {
  const auto* r = std::ranges::find(kRunners, instruction, &Runner::name);
  return r == kRunners.end() ? nullptr : r;
}

// kind::f8f6f4's index of a format: e5m2, e4m3, e3m2, e2m3, e2m1 (the kernels' A and B).
int f8f6f4_index(const FloatFormat& f) {
  const std::array<FloatFormat, 5> order = {formats::e5m2, formats::e4m3, formats::e3m2,
                                            formats::e2m3, formats::e2m1};
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i] == f) return static_cast<int>(i);
  }
  throw std::invalid_argument("kind::f8f6f4 takes no " + std::string(f.name) + " inputs");
}

// The kind of `runner` for this datapath: "tcgen05" by the input format.
Kind kind_of(const Runner& runner, const Datapath& dp) {
  if (runner.name != "tcgen05") return runner.kind;
  if (dp.input == formats::fp16 || dp.input == formats::bf16) return Kind::f16;
  if (dp.input == formats::tf32) return Kind::tf32;
  return Kind::f8f6f4;
}

std::string device_words(const DeviceInfo& d) {
  return d.name + " (compute capability " + std::to_string(d.compute_major) + "." +
         std::to_string(d.compute_minor) + ")";
}

}  // namespace

std::string_view blackwell_requirement(std::string_view instruction) {
  const Runner* r = find_runner(instruction);
  // mma.sync.m16n8k32 is also the fp8 shape of sm_89 and sm_90 (mma_runner.hpp): only its
  // Blackwell datapaths need sm_120a, so the name alone asks for no GPU.
  if (r == nullptr || instruction == "mma.sync.m16n8k32") return "";
  return r->compute_capability == 100 ? kSm100 : kSm120;
}

std::vector<std::string_view> blackwell_instructions(int compute_capability) {
  std::vector<std::string_view> names;
  for (const Runner& r : kRunners) {
    if (r.compute_capability == compute_capability) names.push_back(r.name);
  }
  return names;
}

void check_blackwell_device(std::string_view instruction) {
  const Runner* r = find_runner(instruction);
  if (r == nullptr) {
    throw std::invalid_argument("no Blackwell probe runner is called '" + std::string(instruction) +
                                "'");
  }
  const std::string needs = std::string(instruction) + " needs " +
                            std::string(r->compute_capability == 100 ? kSm100 : kSm120);
  std::string why;
  const std::vector<DeviceInfo> devices = list_devices(&why);
  if (devices.empty()) throw std::runtime_error(needs + "; there is no CUDA device (" + why + ")");
  const DeviceInfo& d = devices.front();
  if (d.compute_major * 10 + d.compute_minor != r->compute_capability) {
    throw std::runtime_error(needs + "; this is " + device_words(d));
  }
}

std::vector<std::uint32_t> run_blackwell(std::string_view instruction, const Datapath& dp,
                                         std::span<const MmaCase> cases) {
  const Runner* runner = find_runner(instruction);
  if (runner == nullptr) {
    throw std::invalid_argument("no Blackwell probe runner is called '" + std::string(instruction) +
                                "'");
  }
  const Kind kind = kind_of(*runner, dp);
  const bool packed = kind == Kind::mxf4 || kind == Kind::mxf4nvf4;
  const bool sm100 = runner->compute_capability == 100;
  const bool half = dp.accumulator == formats::fp16;
  const int k = tcgen05::instruction_k(kind);
  if (dp.instruction_k != k || dp.block_scaled() != tcgen05::block_scaled(kind)) {
    throw std::invalid_argument(std::string(instruction) +
                                " takes no datapath of K = " + std::to_string(dp.instruction_k) +
                                " (" + (dp.block_scaled() ? "block-scaled" : "unscaled") + ")");
  }
  const std::size_t scales = dp.block_scaled() ? scale_count(dp, static_cast<std::size_t>(k)) : 0;
  // The descriptor (sm_100a) also checks the formats, the D type and the scale type.
  std::uint32_t idesc = 0;
  if (sm100) {
    idesc = tcgen05::instruction_descriptor({.kind = kind,
                                             .a = dp.input,
                                             .b = dp.b_format(),
                                             .d = dp.accumulator,
                                             .m = 128,
                                             .n = 16,
                                             .scale = dp.block_scaling.scale_a});
  }
  if (dp.block_scaled() && !(dp.block_scaling.scale_a == dp.block_scaling.scale_b)) {
    throw std::invalid_argument(std::string(instruction) + " takes one scale type for A and B");
  }
  // mma.sync (sm_120a) checks here what the tcgen05 descriptor checks: fp16 results only for
  // kind::f8f6f4, e2m1 alone for mxf4 / mxf4nvf4, ue4m3 only at 4X.
  if (!sm100) {
    const bool fp32 = dp.accumulator == formats::fp32;
    const bool e2m1 = dp.input == formats::e2m1 && dp.b_format() == formats::e2m1;
    const bool ue4m3_scales = dp.block_scaled() && dp.block_scaling.scale_a == formats::ue4m3;
    if ((!fp32 && !(half && kind == Kind::f8f6f4)) || (packed && !e2m1) ||
        (ue4m3_scales && runner->vec != ScaleVec::x4)) {
      throw std::invalid_argument(std::string(instruction) + " takes no " +
                                  std::string(dp.input.name) + " x " +
                                  std::string(dp.b_format().name) + " -> " +
                                  std::string(dp.accumulator.name) + " datapath");
    }
  }
  int a_index = 4, b_index = 4;
  if (kind == Kind::f8f6f4 || kind == Kind::mxf8f6f4) {
    a_index = f8f6f4_index(dp.input);
    b_index = f8f6f4_index(dp.b_format());
  }
  std::vector<std::uint32_t> words;
  words.reserve(cases.size() * detail::kCaseWords);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const MmaCase& c = cases[i];
    if (c.a.size() != static_cast<std::size_t>(k) || c.b.size() != c.a.size()) {
      throw std::invalid_argument("case " + std::to_string(i + 1) +
                                  " has K = " + std::to_string(c.a.size()) + ", " +
                                  std::string(instruction) + " takes K = " + std::to_string(k));
    }
    if (c.scale_a.size() != scales || c.scale_b.size() != scales) {
      throw std::invalid_argument("case " + std::to_string(i + 1) + " has " +
                                  std::to_string(c.scale_a.size()) + " and " +
                                  std::to_string(c.scale_b.size()) + " scales, " +
                                  std::string(instruction) + " takes " + std::to_string(scales));
    }
    const auto pack = [&](const FloatFormat& f, const std::vector<std::uint32_t>& v) {
      const RowPacking p = sm100 ? tcgen05_packing(f, packed) : sm120_packing(f, packed);
      return pack_row(p, f.container_bits(), v);
    };
    const std::array<std::uint32_t, 8> a = pack(dp.input, c.a), b = pack(dp.b_format(), c.b);
    words.insert(words.end(), a.begin(), a.end());
    words.insert(words.end(), b.begin(), b.end());
    words.push_back(c.c);
    words.push_back(scale_word(c.scale_a));
    words.push_back(scale_word(c.scale_b));
  }
  check_blackwell_device(instruction);
#if TCEMU_WITH_BLACKWELL_PROBES
  const bool ue4m3 = dp.block_scaled() && dp.block_scaling.scale_a == formats::ue4m3;
  return sm100 ? detail::run_tcgen05_cases(kind, runner->vec, idesc, half, words)
               : detail::run_sm120_cases(kind, runner->vec, ue4m3, a_index, b_index, half, words);
#else
  (void)half, (void)idesc, (void)a_index, (void)b_index;
  throw std::runtime_error(std::string(instruction) +
                           ": this tcemu was configured with TCEMU_BLACKWELL_PROBES=OFF, without "
                           "the sm_100a and sm_120a kernels");
#endif
}

}  // namespace tcemu::gpu

// The Blackwell probe runners: their descriptors and operand rows on the host (no GPU needed),
// their names against the presets, their refusals; and, on an sm_100a or sm_120a GPU, every
// instruction's D(0, 0) against the preset bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/mmasim_evidence.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/gpu/blackwell_operands.hpp>
#include <tcemu/gpu/blackwell_runner.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/tcgen05_descriptors.hpp>

namespace tcemu {
namespace {

using gpu::tcgen05::InstructionFields;
using gpu::tcgen05::Kind;

TEST(Tcgen05Descriptor, RefusesWhatTheIsaDoesNotAllow) {
  const InstructionFields ok{.kind = Kind::f16,
                             .a = formats::fp16,
                             .b = formats::fp16,
                             .d = formats::fp32,
                             .m = 128,
                             .n = 16};
  EXPECT_EQ(gpu::tcgen05::instruction_descriptor(ok), 0x08040010u);
  InstructionFields f = ok;
  f.m = 96;
  EXPECT_THROW(gpu::tcgen05::instruction_descriptor(f), std::invalid_argument);
  f = ok;
  f.n = 12;  // N in steps of 8, 8 to 256
  EXPECT_THROW(gpu::tcgen05::instruction_descriptor(f), std::invalid_argument);
  f.n = 264;
  EXPECT_THROW(gpu::tcgen05::instruction_descriptor(f), std::invalid_argument);
  f.n = 8;
  EXPECT_EQ(gpu::tcgen05::instruction_descriptor(f), 0x08020010u);
  f.m = 64;
  EXPECT_EQ(gpu::tcgen05::instruction_descriptor(f), 0x04020010u);
  f = ok;
  f.kind = Kind::tf32;  // kind::tf32 takes tf32 alone, and gives fp32 alone
  EXPECT_THROW(gpu::tcgen05::instruction_descriptor(f), std::invalid_argument);
  f.a = f.b = formats::tf32;
  EXPECT_EQ(gpu::tcgen05::instruction_descriptor(f), 0x08040010u | 2u << 7 | 2u << 10);
  f.d = formats::fp16;
  EXPECT_THROW(gpu::tcgen05::instruction_descriptor(f), std::invalid_argument);
  const InstructionFields mxf8{.kind = Kind::mxf8f6f4,
                               .a = formats::e5m2,
                               .b = formats::e2m3,
                               .d = formats::fp32,
                               .m = 128,
                               .n = 16,
                               .scale = formats::ue4m3};  // ue4m3 is mxf4nvf4's alone
  EXPECT_THROW(gpu::tcgen05::instruction_descriptor(mxf8), std::invalid_argument);
  f = mxf8;
  f.scale = formats::ue8m0;
  EXPECT_EQ(gpu::tcgen05::instruction_descriptor(f), 0x08840000u | 1u << 7 | 3u << 10);
  f.a_scale_byte = 4;
  EXPECT_THROW(gpu::tcgen05::instruction_descriptor(f), std::invalid_argument);
  f.a_scale_byte = 0;
  f.m = 64;  // the block-scaled kinds take M = 128 alone
  EXPECT_THROW(gpu::tcgen05::instruction_descriptor(f), std::invalid_argument);
  f = mxf8;
  f.kind = Kind::mxf4;  // packed e2m1 only
  EXPECT_THROW(gpu::tcgen05::instruction_descriptor(f), std::invalid_argument);
  EXPECT_THROW(gpu::tcgen05::shared_memory_descriptor(0x408, 128, 128), std::invalid_argument);
  EXPECT_THROW(gpu::tcgen05::shared_memory_descriptor(1u << 18, 128, 128), std::invalid_argument);
  EXPECT_EQ(gpu::tcgen05::tmem_address(0x00000020u, 32, 4), 0x00200024u);
}

TEST(BlackwellOperands, PacksEachFormatWhereTheInstructionReadsIt) {
  using gpu::pack_row;
  const std::vector<std::uint32_t> fp4 = {0xF, 0x1};
  // mma.sync kind::f8f6f4: e2m1 in bits 2-5 of its byte.
  auto row = pack_row(gpu::sm120_packing(formats::e2m1, false), 4, fp4);
  EXPECT_EQ(row[0], 0x0000043Cu);
  // e3m2 in the low 6 bits of its byte.
  row = pack_row(gpu::sm120_packing(formats::e3m2, false), 6, std::vector<std::uint32_t>{0x3F});
  EXPECT_EQ(row[0], 0x3Fu);
  // kind::mxf4 / mxf4nvf4: two a byte, the lower k in the lower nibble; k 8-15 in word 1.
  std::vector<std::uint32_t> k64(64, 0);
  for (std::uint32_t i = 0; i < 8; ++i) k64[i] = i + 1;
  k64[8] = 0xA;
  k64[63] = 0x9;
  row = pack_row(gpu::sm120_packing(formats::e2m1, true), 4, k64);
  EXPECT_EQ(row[0], 0x87654321u);
  EXPECT_EQ(row[1], 0x0000000Au);
  EXPECT_EQ(row[7], 0x90000000u);
  // tcgen05 FP6: 16 packed in 12 bytes, then a 4-byte gap; element 5 spans words 0 and 1.
  std::vector<std::uint32_t> fp6(32, 0);
  fp6[0] = 0x3F;
  fp6[1] = 0x01;
  fp6[5] = 0x3F;
  fp6[15] = 0x2A;
  fp6[16] = 0x15;
  row = pack_row(gpu::tcgen05_packing(formats::e2m3, false), 6, fp6);
  EXPECT_EQ(row[0], 0xC000007Fu);
  EXPECT_EQ(row[1], 0x0000000Fu);
  EXPECT_EQ(row[2], 0xA8000000u);  // element 15 at bits 90-95
  EXPECT_EQ(row[3], 0u);           // the gap
  EXPECT_EQ(row[4], 0x15u);
  // tcgen05 FP4: 16 packed in 8 bytes, then an 8-byte gap.
  std::vector<std::uint32_t> fp4_32(32, 0);
  fp4_32[15] = 0xF;
  fp4_32[16] = 0x1;
  row = pack_row(gpu::tcgen05_packing(formats::e2m1, false), 4, fp4_32);
  EXPECT_EQ(row[1], 0xF0000000u);
  EXPECT_EQ(row[2], 0u);
  EXPECT_EQ(row[3], 0u);
  EXPECT_EQ(row[4], 0x1u);
  // fp16 two a word, tf32 one.
  row = pack_row(gpu::tcgen05_packing(formats::fp16, false), 16,
                 std::vector<std::uint32_t>{0x3C00, 0x4000});
  EXPECT_EQ(row[0], 0x40003C00u);
  row = pack_row(gpu::tcgen05_packing(formats::tf32, false), 32,
                 std::vector<std::uint32_t>{0, 0x3F800000});
  EXPECT_EQ(row[1], 0x3F800000u);
  EXPECT_THROW(
      pack_row(gpu::tcgen05_packing(formats::tf32, false), 32, std::vector<std::uint32_t>(9, 0)),
      std::invalid_argument);
  EXPECT_EQ(gpu::scale_word(std::vector<std::uint32_t>{0x7F, 0x80, 0x01, 0xFF}), 0xFF01807Fu);
  EXPECT_THROW(gpu::scale_word(std::vector<std::uint32_t>(5, 0)), std::invalid_argument);
}

// Every runner name is a preset instruction of its architecture, and needs that architecture.
TEST(BlackwellRunner, NamesArePresetInstructions) {
  for (const auto& [cc, arch] : {std::pair{100, "sm100"}, std::pair{120, "sm120"}}) {
    const std::vector<std::string_view> names = gpu::blackwell_instructions(cc);
    EXPECT_EQ(names.size(), 6u);
    const std::vector<std::string_view> known = instruction_names(arch);
    for (std::string_view name : names) {
      EXPECT_NE(std::ranges::find(known, name), known.end()) << arch << " " << name;
      if (name == "mma.sync.m16n8k32") {
        EXPECT_EQ(gpu::blackwell_requirement(name), "");  // also sm_89 and sm_90's fp8 shape
      } else {
        EXPECT_NE(gpu::blackwell_requirement(name).find(cc == 100 ? "sm_100a" : "sm_120a"),
                  std::string_view::npos)
            << name;
      }
    }
  }
  EXPECT_TRUE(gpu::blackwell_instructions(90).empty());
  EXPECT_EQ(gpu::blackwell_requirement("wgmma"), "");
}

// The device-independent refusals come before any device check.
TEST(BlackwellRunner, RefusesCasesTheInstructionDoesNotTake) {
  const Datapath nvfp4 =
      preset("sm100", formats::e2m1, formats::fp32, "tcgen05.mxf4nvf4.block16.ue4m3");
  MmaCase c{.a = std::vector<std::uint32_t>(32, 2),
            .b = std::vector<std::uint32_t>(32, 2),
            .c = 0,
            .d = std::nullopt,
            .scale_a = {0x38, 0x38, 0x38, 0x38},
            .scale_b = {0x38, 0x38, 0x38, 0x38}};
  const std::vector<MmaCase> short_k = {c};
  EXPECT_THROW(gpu::run_blackwell("tcgen05.mxf4nvf4.block16.ue4m3", nvfp4, short_k),
               std::invalid_argument);
  c.a.resize(64, 2);
  c.b.resize(64, 2);
  c.scale_b.pop_back();
  const std::vector<MmaCase> three_scales = {c};
  EXPECT_THROW(gpu::run_blackwell("tcgen05.mxf4nvf4.block16.ue4m3", nvfp4, three_scales),
               std::invalid_argument);
  const Datapath fp16 = preset("sm100", formats::fp16, formats::fp32, "tcgen05");
  EXPECT_THROW(gpu::run_blackwell("tcgen05.mxf4nvf4.block16.ue4m3", fp16, {}),
               std::invalid_argument);
  EXPECT_THROW(gpu::run_blackwell("wgmma", fp16, {}), std::invalid_argument);
}

// On the GPU a name needs: every pair of every instruction, D(0, 0) of 2000 evidence cases against
// the preset, bit for bit. On any other machine: the refusal that names the GPU needed.
TEST(BlackwellRunner, MatchesThePresetsOnItsGpuAndRefusesOthers) {
  const std::vector<gpu::DeviceInfo> devices = gpu::list_devices();
  const int cc =
      devices.empty() ? 0 : devices.front().compute_major * 10 + devices.front().compute_minor;
  for (const PresetEntry& row : all_presets()) {
    const std::string name(row.instruction);
    const int needs = row.arch == "sm100" ? 100 : 120;
    const std::vector<std::string_view> runners = gpu::blackwell_instructions(needs);
    if ((row.arch != "sm100" && row.arch != "sm120") ||
        std::ranges::find(runners, name) == runners.end()) {
      continue;
    }
    std::vector<MmaCase> cases;
    for (std::uint64_t i = 0; i < 2000; ++i) {
      cases.push_back(evidence_case(row.datapath, 1, 0, i));
    }
    const std::string what = std::string(row.arch) + " " + name + " " +
                             std::string(row.datapath.input.name) + " x " +
                             std::string(row.datapath.b_format().name) + " -> " +
                             std::string(row.datapath.accumulator.name);
    if (cc != needs) {
      if (name == "mma.sync.m16n8k32") continue;  // the name asks for no GPU by itself
      try {
        gpu::run_blackwell(name, row.datapath, cases);
        ADD_FAILURE() << what << " ran on a GPU of compute capability " << cc;
      } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find(name + " needs an sm_" + std::to_string(needs) + "a"),
                  std::string::npos)
            << e.what();
      }
      continue;
    }
    std::vector<std::uint32_t> d;
    try {
      d = gpu::run_blackwell(name, row.datapath, cases);
    } catch (const std::runtime_error& e) {
      // The one name a toolkit before CUDA 13.1 cannot assemble (sm120_runner.cu) says so.
      ASSERT_NE(std::string(e.what()).find("needs PTX ISA 9.1"), std::string::npos) << e.what();
      std::cout << what << ": " << e.what() << '\n';
      continue;
    }
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (d[i] != mma_case_element(row.datapath, cases[i])) ++mismatches;
    }
    EXPECT_EQ(mismatches, 0u) << what;
  }
}

}  // namespace
}  // namespace tcemu

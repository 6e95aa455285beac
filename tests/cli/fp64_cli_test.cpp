// tcemu mma, validate, presets and probe with fp64 (DMMA), as a user runs them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_runner.hpp"

namespace {

using tcemu::test::Result;
using tcemu::test::run;
using tcemu::test::TempFile;

// c = 1, -1 at k = 1, 2^-60 at k = 2 (K = 4): 2^-60 when k = 1 comes before k = 2, else 0.
constexpr const char* kOrderCase =
    "4 0000000000000000 bff0000000000000 3c30000000000000 0000000000000000 3ff0000000000000 "
    "3ff0000000000000 3ff0000000000000 3ff0000000000000 3ff0000000000000";

TEST(Fp64Cli, MmaRunsTheChainInTheDatapathsOrder) {
  const Result up = run("mma --type fp64 --arch sm80", std::string(kOrderCase) + "\n");
  EXPECT_EQ(up.status, 0) << up.output;
  EXPECT_EQ(up.output, "3c30000000000000\n");
  const Result down =
      run("mma --type fp64 --acc fp64 --fp64-order descending", std::string(kOrderCase) + "\n");
  EXPECT_EQ(down.status, 0) << down.output;
  EXPECT_EQ(down.output, "0000000000000000\n");
  // (1 + 2^-30)^2 on c = -(1 + 2^-29): 2^-60 fused, 0 unfused.
  const std::string fusion = "1 3ff0000000400000 3ff0000000400000 bff0000000800000\n";
  EXPECT_EQ(run("mma --type fp64", fusion).output, "3c30000000000000\n");
  EXPECT_EQ(run("mma --type fp64 --fp64-step unfused", fusion).output, "0000000000000000\n");
  // 0 x Inf: the preset's NaN, or the one --nan-bits names.
  const std::string nan = "1 0000000000000000 7ff0000000000000 3ff0000000000000\n";
  EXPECT_EQ(run("mma --type fp64", nan).output, "fff8000000000000\n");
  EXPECT_EQ(run("mma --type fp64 --nan-bits 7ff8000000000000", nan).output, "7ff8000000000000\n");
  // A NaN operand comes back quieted, or as --nan-bits with --fp64-nan replace.
  const std::string operand = "1 7ff0000000000abc 3ff0000000000000 3ff0000000000000\n";
  EXPECT_EQ(run("mma --type fp64", operand).output, "7ff8000000000abc\n");
  EXPECT_EQ(run("mma --type fp64 --fp64-nan replace", operand).output, "fff8000000000000\n");
  const Result bad_rule = run("mma --type fp64 --fp64-nan keep", operand);
  EXPECT_EQ(bad_rule.status, 2);
  EXPECT_NE(bad_rule.output.find("--fp64-nan: 'keep' is not propagate or replace"),
            std::string::npos);
}

TEST(Fp64Cli, BadInputIsRefusedNamingIt) {
  const Result digits = run("mma --type fp64", "1 3ff0 3ff0000000000000 0000000000000000\n");
  EXPECT_EQ(digits.status, 2);
  EXPECT_NE(digits.output.find("line 1: a_0 '3ff0' must be 16 hex digits (fp64)"),
            std::string::npos)
      << digits.output;
  const Result acc = run("mma --type fp64 --acc fp32", "");
  EXPECT_EQ(acc.status, 2);
  EXPECT_NE(acc.output.find("--acc must be fp64, got 'fp32'"), std::string::npos) << acc.output;
  const Result type = run("mma --acc fp64", "");
  EXPECT_EQ(type.status, 2);
  EXPECT_NE(type.output.find("--type must be fp64, got '(none)'"), std::string::npos);
  const Result turing = run("mma --type fp64 --arch sm75", "");
  EXPECT_EQ(turing.status, 2);
  EXPECT_NE(
      turing.output.find("sm75 has no fp64 MMA instruction (mma.sync .f64 starts with sm_80)"),
      std::string::npos);
  const Result shape = run("mma --type fp64 --arch sm89 --instr mma.sync.m16n8k16", "");
  EXPECT_EQ(shape.status, 2);
  EXPECT_NE(shape.output.find("it has mma.sync.m8n8k4 (K 4)"), std::string::npos) << shape.output;
  const Result k = run("mma --type fp64 --instr mma.sync.m16n8k8", std::string(kOrderCase) + "\n");
  EXPECT_EQ(k.status, 2);
  EXPECT_NE(k.output.find("line 1: K = 4 is not a multiple of mma.sync.m16n8k8's K = 8"),
            std::string::npos)
      << k.output;
  const Result option = run("mma --type fp64 --block-terms 4", "");
  EXPECT_EQ(option.status, 2);
  EXPECT_NE(option.output.find("--block-terms is not a field of the fp64 datapath"),
            std::string::npos);
  const Result order = run("mma --type fp64 --fp64-order sideways", "");
  EXPECT_EQ(order.status, 2);
  EXPECT_NE(order.output.find("--fp64-order: 'sideways' is not ascending or descending"),
            std::string::npos);
  const Result nan = run("mma --type fp64 --nan-bits 7ff0000000000000", "");
  EXPECT_EQ(nan.status, 2);
  EXPECT_NE(nan.output.find("nan_bits 7ff0000000000000 is not a binary64 NaN"), std::string::npos);
  const Result detect = run("detect --type fp64 --acc fp64 --from /dev/null");
  EXPECT_EQ(detect.status, 2);
  EXPECT_NE(detect.output.find("fp64 MMA is a chain of fused multiply-adds: `tcemu probe --instr "
                               "dmma`"),
            std::string::npos)
      << detect.output;
  const Result recorded = run("mma --type fp64", std::string(kOrderCase) + " 0000000000000000\n");
  EXPECT_EQ(recorded.status, 2);
  EXPECT_NE(recorded.output.find("a recorded d, is for tcemu validate"), std::string::npos);
}

TEST(Fp64Cli, ValidateCountsMismatchesAndPresetsListTheRows) {
  const TempFile file("dmma_cases.txt",
                      "# crafted: order\n" + std::string(kOrderCase) + " 3c30000000000000\n");
  const Result ok =
      run("validate --type fp64 --arch sm90 --instr mma.sync.m8n8k4 " + file.path.string());
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("1 cases, 0 mismatches"), std::string::npos) << ok.output;
  const Result down = run("validate --type fp64 --fp64-order descending " + file.path.string());
  EXPECT_EQ(down.status, 1) << down.output;
  EXPECT_NE(down.output.find("(order): recorded 3c30000000000000, emulated 0000000000000000"),
            std::string::npos)
      << down.output;
  const Result presets = run("presets");
  EXPECT_EQ(presets.status, 0);
  EXPECT_NE(presets.output.find("sm90 mma.sync.m16n8k16 (m16n8k16.f64): fp64 x fp64 -> fp64, K = "
                                "16 per instruction"),
            std::string::npos);
  EXPECT_NE(presets.output.find("sm80 mma.sync fp64 -> fp64 = mma.sync.m8n8k4"), std::string::npos);
  EXPECT_EQ(presets.output.find("sm75 mma.sync.m8n8k4 (m8n8k4.f64)"), std::string::npos);
  const Result one = run("presets --type fp64 --arch sm120 --instr mma.sync.m16n8k4");
  EXPECT_EQ(one.output,
            "fp64 x fp64 -> fp64, K = 4 per instruction: a chain of K fused multiply-adds (one "
            "rounding each) from c in ascending k order, round to nearest even, NaN operands "
            "propagated quieted (b, then d, then a), invalid operations fff8000000000000\n");
}

TEST(Fp64Cli, ProbeWithoutAGpuSaysWhy) {
  const Result probe = run("probe --instr dmma --random 10 --out-dir " +
                           (std::filesystem::temp_directory_path() / "tcemu_dmma_probe").string());
  if (probe.status == 0) GTEST_SKIP() << "a GPU is present: tests/gpu/dmma_runner_test.cpp runs";
  EXPECT_EQ(probe.status, 1) << probe.output;
  EXPECT_TRUE(probe.output.find("no CUDA device") != std::string::npos ||
              probe.output.find("built without the CUDA backend") != std::string::npos)
      << probe.output;
  const Result type = run("probe --instr dmma --type fp32 --out-dir /tmp");
  EXPECT_EQ(type.status, 2);
  EXPECT_NE(type.output.find("--instr dmma probes fp64 MMA: --type must be fp64, got 'fp32'"),
            std::string::npos)
      << type.output;
}

}  // namespace

namespace {

// The DMMA results recorded on the H200 (tests/data/h200-dmma) replay through the sm90 presets,
// each file by the `tcemu validate` line in its header, with 0 mismatches.
TEST(H200DmmaProbe, EveryRecordedCaseReplaysThroughThePreset) {
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TCEMU_H200_DMMA_DIR)) {
    if (entry.path().extension() != ".txt") continue;
    ++files;
    std::ifstream in(entry.path());
    std::string header;
    std::getline(in, header);
    std::getline(in, header);
    const std::string prefix = "# validate: tcemu validate ";
    ASSERT_TRUE(header.starts_with(prefix)) << entry.path() << ": " << header;
    // The options, less the file name the header ends with.
    std::string options = header.substr(prefix.size());
    options = options.substr(0, options.rfind(' '));
    const Result r = run("validate " + options + " " + entry.path().string());
    EXPECT_EQ(r.status, 0) << entry.path() << "\n" << r.output;
    EXPECT_NE(r.output.find(" 0 mismatches"), std::string::npos) << r.output;
  }
  EXPECT_EQ(files, 4u);
}

}  // namespace

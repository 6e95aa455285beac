// Sparse MMA (--instr mma.sp.*) through the tcemu command: tcemu mma on sparse case lines, tcemu
// validate and tcemu detect on the H100's recorded cases, tcemu presets, and the commands that
// refuse them.
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.hpp"

namespace {

using tcemu::test::Result;
using tcemu::test::run;

// K = 16: eight kept a = 1, metadata `metadata`, the 16 b in `b`, c = 0.
std::string sparse_line(const std::string& metadata, const std::string& b) {
  return "16 3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00 " + metadata + " " + b + " 00000000\n";
}

std::string b_ones_with(int k, const char* value) {
  std::string s;
  for (int i = 0; i < 16; ++i) s += std::string(i == 0 ? "" : " ") + (i == k ? value : "3c00");
  return s;
}

TEST(SparseCli, MmaReadsOnlyTheKeptRowsOfB) {
  // Eight products 1 x 1: 8 (0x41000000). A NaN in row 2 of B, dropped by indices 01 in group 0,
  // changes nothing; kept by indices 23 it gives the GPU's NaN.
  const Result all_ones =
      run("mma --instr mma.sp.m16n8k16", sparse_line("01230123", b_ones_with(-1, "")));
  EXPECT_EQ(all_ones.status, 0) << all_ones.output;
  EXPECT_EQ(all_ones.output, "41000000\n");
  const Result dropped =
      run("mma --instr mma.sp.m16n8k16", sparse_line("01230123", b_ones_with(2, "7e00")));
  EXPECT_EQ(dropped.output, "41000000\n");
  const Result kept =
      run("mma --instr mma.sp.m16n8k16", sparse_line("23230123", b_ones_with(2, "7e00")));
  EXPECT_EQ(kept.output, "7fffffff\n");
  // b_5 = 2 (0x4000) kept as the first product of group 1 (index 1): 7 + 2 = 9.
  const Result two =
      run("mma --instr mma.sp.m16n8k16", sparse_line("01120123", b_ones_with(5, "4000")));
  EXPECT_EQ(two.output, "41100000\n");
}

TEST(SparseCli, MalformedSparseLinesStopWithTheirLineNumber) {
  Result r = run("mma --instr mma.sp.m16n8k16", sparse_line("01230123", b_ones_with(-1, "")) +
                                                    sparse_line("01320123", b_ones_with(-1, "")));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output,
            "41000000\ntcemu mma: <stdin>: line 2: sparse case: indices 32 of group 1 are not "
            "increasing (01 02 03 12 13 23)\n");
  r = run("mma --instr mma.sp.m16n8k32", sparse_line("01230123", b_ones_with(-1, "")));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output, "tcemu mma: <stdin>: line 1: K = 16, but the sparse shape takes K = 32\n");
  r = run("mma --instr mma.sp.m16n8k32 --type tf32", "");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("no sparse preset: sm90 mma.sp.m16n8k32 tf32 -> fp32"), std::string::npos)
      << r.output;
}

TEST(SparseCli, ValidateReplaysTheH100sSparseCases) {
  const std::string file = std::string(TCEMU_H100_SPARSE_DIR) + "/mma.sp.m16n8k32-bf16-fp32.txt";
  Result r = run("validate --instr mma.sp.m16n8k32 --type bf16 " + file);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("cases, 0 mismatches"), std::string::npos) << r.output;
  // Blocks of 8 kept products instead of one of 16: some recorded cases differ.
  r = run("validate --instr mma.sp.m16n8k32 --type bf16 --block-terms 8 --k-group 8 --show 1 " +
          file);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find(": recorded "), std::string::npos) << r.output;
}

// tcemu detect --from on the H100's fp8 mma.sp.m16n8k64 cases recovers the dense fp8 k32
// datapath over the 32 kept products: two interleaved 16-term halves, c after the blocks.
TEST(SparseCli, DetectFindsTheKeptProductsDatapathFromTheH100sSparseCases) {
  const std::string file = std::string(TCEMU_H100_SPARSE_DIR) + "/mma.sp.m16n8k64-e4m3-fp32.txt";
  Result r = run("detect --instr mma.sp.m16n8k64 --type e4m3 --acc fp32 --from " + file);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("435 cases, 0 mismatches"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--instruction-k 32 --block-terms 16 --k-group 2 --alignment-bits 25"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--c-entry after-blocks"), std::string::npos) << r.output;
  // The same file read as another shape, and an integer detect: refused, naming why (input errors:
  // exit 2).
  r = run("detect --instr mma.sp.m16n8k32 --type e4m3 --acc fp32 --from " + file);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("K = 64, the sparse shape takes K = 32"), std::string::npos) << r.output;
  r = run("detect --type s8 --acc s32");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("an integer MMA is an exact sum"), std::string::npos) << r.output;
}

TEST(SparseCli, PresetsListTheSparseShapesAndDenseCommandsRefuseThem) {
  Result r = run("presets");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("sm90 mma.sp.m16n8k32 (sparse; the 16 kept products): input=bf16"),
            std::string::npos);
  r = run("presets --instr mma.sp.m16n8k16 --acc fp16");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("instruction_k=8 block_terms=8"), std::string::npos) << r.output;
  r = run("gemm --scheme dgemm-tc --instr mma.sp.m16n8k16 --m 2 --n 2 --k 16");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("is a sparse shape: only `tcemu mma` and `tcemu validate`"),
            std::string::npos)
      << r.output;
}

}  // namespace

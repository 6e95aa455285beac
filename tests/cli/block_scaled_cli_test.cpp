// The CLI on block-scaled and FP6/FP4 datapaths: the datapath options (--b-type, --scale-block,
// --scale-format[-a|-b], --group-terms, --nan-scale), case lines with scales (tcemu mma,
// tcemu validate), matrices with scale files (tcemu matmul, tcemu validate --d), tcemu presets,
// and their error messages.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/mmasim_evidence.hpp>
#include <tcemu/emulator/presets.hpp>

#include "cli_runner.hpp"

namespace {

using tcemu::test::Result;
using tcemu::test::run;
using tcemu::test::TempFile;

constexpr const char* kNvfp4 = "--arch sm100 --instr tcgen05.mxf4nvf4.block16.ue4m3 --type e2m1";
constexpr const char* kNvfp4Ue8m0 =
    "--arch sm100 --instr tcgen05.mxf4nvf4.block16.ue8m0 --type e2m1";

bool has(const Result& r, const std::string& text) {
  return r.output.find(text) != std::string::npos;
}

// `count` copies of `word`, each followed by a space.
std::string repeated(const std::string& word, int count) {
  std::string s;
  for (int i = 0; i < count; ++i) s += word + " ";
  return s;
}

// A K = 48 e2m1 case of three groups of 16, c = +0: group 0 is 16 products 6 x 6 (576), group 1
// sixteen -6 x 6 (-576), group 2 one 0.5 x 0.5 and zeros; A's scales `sa`, B's `sb` (ue8m0 hex).
// With scales 1, 1, 2^-16 (A) and 1, 1, 2^-15 (B) group 2 is 2^-33: on the ue8m0 NVFP4 datapath
// (F = 35) the grid is 2^-35 with groups of 16 (aligned on the scales' exponent 0) but 2^-31 with
// each product a term (aligned on 2 + 2 + 0 = 4): d is 2^-33 or 0.
std::string cancelling_case(const std::string& sa, const std::string& sb) {
  return "48 " + repeated("7", 16) + repeated("f", 16) + "1 " + repeated("0", 15) +
         repeated("7", 32) + "1 " + repeated("0", 15) + "00000000 " + sa + " " + sb;
}

TEST(BlockScaledCli, MmaCaseLinesCarryTheScales) {
  // The --help example: 64 products 1 x 1 with every scale 1 (ue4m3 38) is 64.
  Result r = run(std::string("mma ") + kNvfp4,
                 "64 " + repeated("2", 128) + "00000000 38 38 38 38 38 38 38 38\n");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "42800000\n");
  // The scales multiply: A's scale of the first 16 k is 2 (ue4m3 40), B's 0.5 (30), the other
  // 48 products have scale 1: 16 + 48 = 64 again; A's 448 (7e) there instead gives 16 x 224 + 48.
  r = run(std::string("mma ") + kNvfp4,
          "64 " + repeated("2", 128) + "00000000 40 38 38 38 30 38 38 38\n64 " +
              repeated("2", 128) + "00000000 7e 38 38 38 30 38 38 38\n");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "42800000\n45630000\n");  // 64, 3632
  // The F and G fields alone, on the cancelling case: 2^-33 = 2f000000 or 0.
  const std::string line = cancelling_case("7f 7f 6f", "7f 7f 70") + "\n";
  r = run(std::string("mma ") + kNvfp4Ue8m0, line);
  EXPECT_EQ(r.output, "2f000000\n");
  r = run(std::string("mma ") + kNvfp4Ue8m0 + " --group-terms 1", line);
  EXPECT_EQ(r.output, "00000000\n");
  r = run(std::string("mma ") + kNvfp4Ue8m0 + " --alignment-bits 31", line);
  EXPECT_EQ(r.output, "00000000\n");
}

TEST(BlockScaledCli, NanScaleRuleIsAFieldOfItsOwn) {
  // A NaN scale (ue8m0 ff) over a group whose products are all zero: poison gives NaN,
  // ignore-zero adds a zero (d = c = 1).
  const std::string line =
      "32 " + repeated("0", 16) + repeated("2", 16) + repeated("2", 32) + "3f800000 ff 7f 7f 7f\n";
  Result r = run(std::string("mma ") + kNvfp4Ue8m0, line);
  EXPECT_EQ(r.output, "7fffffff\n") << r.output;
  r = run(std::string("mma ") + kNvfp4Ue8m0 + " --nan-scale ignore-zero", line);
  EXPECT_EQ(r.output, "41880000\n") << r.output;  // 1 + 16 x 1 x 1 = 17
  r = run(std::string("mma ") + kNvfp4Ue8m0 + " --nan-scale none", line);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "--nan-scale must be one of poison, ignore-zero, got 'none'")) << r.output;
}

TEST(BlockScaledCli, MalformedScaledLinesNameFileLineAndCount) {
  const TempFile f("bs_cases.txt", "# NVFP4\n64 " + repeated("2", 128) +
                                       "00000000 38 38 38 38 38 38 38 38\n64 " +
                                       repeated("2", 128) + "00000000 38 38 38 38 38 38 38\n");
  Result r = run(std::string("mma ") + kNvfp4 + " " + f.path.string());
  EXPECT_EQ(r.status, 2);  // an input error
  EXPECT_EQ(r.output.substr(0, 9), "42800000\n") << r.output;
  EXPECT_TRUE(has(r, f.path.string() +
                         ": line 3: K = 64 needs 138 fields (K, 64 a, 64 b, c, 4 scales of A and "
                         "4 of B, one per 16 k) or 139 with a recorded d, found 137"))
      << r.output;
  // A ue4m3 scale is the byte the hardware reads, bit 7 ignored (MMA-Sim 2.1.1): 80 is 00.
  r = run(std::string("mma ") + kNvfp4, "16 " + repeated("2", 32) + "00000000 80 38\n");
  EXPECT_EQ(r.status, 0) << r.output;
  const Result zero_scale =
      run(std::string("mma ") + kNvfp4, "16 " + repeated("2", 32) + "00000000 00 38\n");
  EXPECT_EQ(r.output, zero_scale.output);
  // An element code above its format's bits is refused, never read modulo its width.
  r = run("mma --arch sm100 --instr tcgen05 --type e2m3", "1 40 01 00000000\n");
  EXPECT_EQ(r.status, 2);  // an input error
  EXPECT_TRUE(has(r, "line 1: a_0 '40' is not a bit pattern of e2m3 (6 bits: at most 3f)"))
      << r.output;
  // An unscaled line on a block-scaled datapath is a wrong count too.
  r = run(std::string("mma ") + kNvfp4, "2 2 2 2 2 00000000\n");
  EXPECT_EQ(r.status, 2);  // an input error
  EXPECT_TRUE(has(r,
                  "K = 2 needs 8 fields (K, 2 a, 2 b, c, 1 scales of A and 1 of B, one per 16 "
                  "k) or 9 with a recorded d, found 6"))
      << r.output;
}

TEST(BlockScaledCli, TwoInputFormats) {
  // kind::f8f6f4 e4m3 x e2m1: 1.5 (3c) x 6 (7) + 2 (40) x -0.5 (9) = 8.
  Result r =
      run("mma --arch sm100 --instr tcgen05 --type e4m3 --b-type e2m1", "2 3c 40 7 9 00000000\n");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "41000000\n");
  // b's fields are b's format: an e4m3 byte is no e2m1 code.
  r = run("mma --arch sm100 --instr tcgen05 --type e4m3 --b-type e2m1", "1 3c 3c 00000000\n");
  EXPECT_EQ(r.status, 2);  // an input error
  EXPECT_TRUE(has(r, "b_0 '3c' must be 1 hex digit (e2m1)")) << r.output;
  // Where the pair has no preset row, --b-type overrides --type's preset like any field.
  r = run("presets --arch sm90 --type e4m3 --b-type e5m2");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "input=e4m3 ")) << r.output;
  EXPECT_TRUE(has(r, " input_b=e5m2")) << r.output;
  // ... and where neither has one, the pair's message says what the instruction takes.
  r = run("presets --arch sm100 --instr tcgen05.mxf4.block32 --type e4m3 --b-type e2m1");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "has no e4m3 x e2m1 MMA")) << r.output;
  EXPECT_TRUE(has(r, "(sm100 tcgen05.mxf4.block32 takes --type e2m1 --acc fp32)")) << r.output;
  // Sparse shapes take one format and no scales; integer MMA no float-only field.
  r = run("mma --instr mma.sp.m16n8k16 --b-type bf16", "");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r,
                  "--b-type: the sparse shape mma.sp.m16n8k16 takes one input format and no "
                  "scales"))
      << r.output;
  r = run("mma --type s8 --acc s32 --scale-block 16", "");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "--scale-block is a floating-point datapath option; integer MMA has none"))
      << r.output;
}

// The schemes multiply slices of one format without scales: a second format or scales are refused
// naming the option, not deep in the GEMM.
TEST(BlockScaledCli, SchemesRefuseTwoFormatsAndScales) {
  Result r = run("gemm --scheme dgemm-tc --m 4 --n 4 --k 4 " + std::string(kNvfp4Ue8m0));
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r,
                  "--instr/--scale-block: the Ozaki scheme multiplies slices without block "
                  "scales; the datapath takes ue8m0 scales per 16 k"))
      << r.output;
  r = run("gemm --scheme halfhalf --m 4 --n 4 --k 4 --arch sm100 --instr tcgen05 --b-type bf16");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "--b-type bf16: scheme halfhalf multiplies slices of one format (fp16)"))
      << r.output;
  r = run("explain ozaki --arch sm100 --instr tcgen05 --type e4m3 --b-type e2m1");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "ozaki: --b-type e2m1: the Ozaki scheme multiplies slices of one format"))
      << r.output;
}

TEST(BlockScaledCli, EveryScalingFieldAloneOrRefused) {
  Result r = run(std::string("presets ") + kNvfp4 +
                 " --scale-block 32 --scale-format-b ue8m0 --group-terms 8 --nan-scale "
                 "ignore-zero");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r,
                  "scale_block=32 scale_a=ue4m3 scale_b=ue8m0 group_terms=8 "
                  "nan_scale=ignore-zero"))
      << r.output;
  // Scales on an unscaled preset need their format; then they apply.
  r = run("presets --arch sm100 --instr tcgen05 --type e2m1 --scale-block 32");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "--scale-block 32: the preset has no scales, so their format must be given"))
      << r.output;
  r =
      run("presets --arch sm100 --instr tcgen05 --type e2m1 --scale-block 32 --scale-format "
          "ue8m0");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "scale_block=32 scale_a=ue8m0 scale_b=ue8m0 group_terms=1")) << r.output;
  // --scale-block 0 removes them; the scale fields then have nothing to set.
  r = run(std::string("presets ") + kNvfp4 + " --scale-block 0");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(has(r, "scale_block")) << r.output;
  r = run("presets --arch sm100 --instr tcgen05 --type e2m1 --group-terms 16");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "--group-terms: the datapath takes no scales")) << r.output;
  r = run(std::string("presets ") + kNvfp4 + " --scale-format e4m3");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "--scale-format: e4m3 is not a scale format (ue8m0 or ue4m3)")) << r.output;
  r = run(std::string("presets ") + kNvfp4 + " --group-terms 5");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "group_terms")) << r.output;
  // A block-scaled instruction with the default --type says which one it takes.
  r = run("mma --arch sm100 --instr tcgen05.mxf4nvf4.block16.ue4m3", "");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "(sm100 tcgen05.mxf4nvf4.block16.ue4m3 takes --type e2m1 --acc fp32)"))
      << r.output;
}

TEST(BlockScaledCli, PresetsListEveryPairOnOneLine) {
  const Result r = run("presets");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(has(r,
                  "sm100 tcgen05: input=e5m2|e4m3|e3m2|e2m3|e2m1 "
                  "input_b=e5m2|e4m3|e3m2|e2m3|e2m1 (every pair) accumulator=fp32 "
                  "instruction_k=32"))
      << r.output;
  EXPECT_TRUE(has(r, "sm120 mma.sync.m16n8k16: input=e4m3|e5m2 input_b=e4m3|e5m2 (every pair)"))
      << r.output;
  EXPECT_TRUE(has(r,
                  "sm100 tcgen05.mxf4nvf4.block16.ue4m3: input=e2m1 accumulator=fp32 "
                  "instruction_k=64"))
      << r.output;
  EXPECT_TRUE(has(r,
                  "scale_block=16 scale_a=ue4m3 scale_b=ue4m3 group_terms=16 nan_scale=poison "
                  "(MMA-Sim 2.1.1)\n"))
      << r.output;
  // Every alias line once.
  const std::string alias = "sm120 mma.sync e4m3 -> fp32 = mma.sync.m16n8k32\n";
  const auto first = r.output.find(alias);
  EXPECT_NE(first, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(alias, first + 1), std::string::npos) << r.output;
  // The pairs are the collapsed lines only: sm100 tcgen05 (fp32, fp16) and mxf8f6f4, sm120
  // m16n8k16 and m16n8k32 (fp32, fp16) and mxf8f6f4.
  std::size_t pair_lines = 0;
  for (std::size_t at = r.output.find("(every pair)"); at != std::string::npos;
       at = r.output.find("(every pair)", at + 1))
    ++pair_lines;
  EXPECT_EQ(pair_lines, 8u) << r.output;
  EXPECT_FALSE(has(r, " input_b=e2m1 scale")) << r.output;
}

// A .npy file: version 1.0, the header dict as NumPy writes it, then `data`.
std::string npy(const std::string& dict, const std::string& data) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string s = "\x93NUMPY\x01";
  s += '\0';
  s += static_cast<char>(header.size() & 0xff);
  s += static_cast<char>(header.size() >> 8);
  return s + header + data;
}

std::string npy_bytes(const std::string& descr, int rows, int cols,
                      const std::vector<std::uint32_t>& codes) {
  std::string data;
  for (const std::uint32_t c : codes) data += static_cast<char>(c);
  return npy("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
                 std::to_string(rows) + ", " + std::to_string(cols) + "), }",
             data);
}

void write_binary(const TempFile& f, const std::string& bytes) {
  std::ofstream(f.path, std::ios::binary) << bytes;
}

std::string hex2(std::uint32_t v) {
  char text[8];
  std::snprintf(text, sizeof text, "%02x", v);
  return text;
}

// A rows x cols text matrix of byte codes (row major).
std::string text_matrix(int rows, int cols, const std::vector<std::uint32_t>& codes) {
  std::string s = std::to_string(rows) + " " + std::to_string(cols) + "\n";
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) s += (j ? " " : "") + hex2(codes[i * cols + j]);
    s += '\n';
  }
  return s;
}

std::vector<std::string> words_after_shape(const std::string& text) {
  std::istringstream in(text);
  std::string word;
  std::vector<std::string> words;
  in >> word >> word;
  while (in >> word) words.push_back(word);
  return words;
}

// The NVFP4 GEMM of random codes and scales, K = 80 (one instruction and a partial one, five
// scales per row): every element of matmul's D is `tcemu mma` of its case line, from .npy
// (uint8) and from text; validate --d agrees and finds an altered element, listing its case
// line with the scales.
class Nvfp4Gemm : public ::testing::Test {
 protected:
  static constexpr int m = 3, k = 80, n = 2, s = 5;
  std::vector<std::uint32_t> a, b, sa, sb;
  void SetUp() override {
    std::mt19937 rng(7);
    std::uniform_int_distribution<std::uint32_t> code(0, 15), scale(0x20, 0x50);
    for (int i = 0; i < m * k; ++i) a.push_back(code(rng));
    for (int i = 0; i < k * n; ++i) b.push_back(code(rng));
    for (int i = 0; i < m * s; ++i) sa.push_back(scale(rng));
    for (int i = 0; i < s * n; ++i) sb.push_back(scale(rng));
  }
  std::string cases() const {
    tcemu::Datapath dp = tcemu::preset("sm100", tcemu::formats::e2m1, tcemu::formats::fp32,
                                       "tcgen05.mxf4nvf4.block16.ue4m3");
    std::string lines;
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        tcemu::MmaCase e;
        for (int p = 0; p < k; ++p) {
          e.a.push_back(a[i * k + p]);
          e.b.push_back(b[p * n + j]);
        }
        for (int q = 0; q < s; ++q) {
          e.scale_a.push_back(sa[i * s + q]);
          e.scale_b.push_back(sb[q * n + j]);
        }
        e.c = 0;
        lines += tcemu::format_case_line(e, dp) + '\n';
      }
    }
    return lines;
  }
};

TEST_F(Nvfp4Gemm, MatmulIsTheMmaOfEveryElementFromNpyAndText) {
  const TempFile na("bs_a.npy"), nb("bs_b.npy"), nsa("bs_sa.npy"), nsb("bs_sb.npy");
  write_binary(na, npy_bytes("|u1", m, k, a));
  write_binary(nb, npy_bytes("|u1", k, n, b));
  write_binary(nsa, npy_bytes("|u1", m, s, sa));
  write_binary(nsb, npy_bytes("|u1", s, n, sb));
  const TempFile ta("bs_a.txt", text_matrix(m, k, a)), tb("bs_b.txt", text_matrix(k, n, b)),
      tsa("bs_sa.txt", text_matrix(m, s, sa)), tsb("bs_sb.txt", text_matrix(s, n, sb));
  const Result chains = run(std::string("mma ") + kNvfp4, cases());
  ASSERT_EQ(chains.status, 0) << chains.output;
  const TempFile out("bs_d.txt");
  for (const bool text : {false, true}) {
    const Result r =
        run(std::string("matmul ") + kNvfp4 + " --a " + (text ? ta : na).path.string() + " --b " +
            (text ? tb : nb).path.string() + " --scale-a " + (text ? tsa : nsa).path.string() +
            " --scale-b " + (text ? tsb : nsb).path.string() + " --out " + out.path.string());
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(words_after_shape(out.slurp()), words_after_shape("0 0\n" + chains.output));
  }
  // validate --d: the same D passes, one ulp off fails with what its element is computed from.
  const std::string operands = std::string(" ") + kNvfp4 + " --a " + na.path.string() + " --b " +
                               nb.path.string() + " --scale-a " + nsa.path.string() +
                               " --scale-b " + nsb.path.string();
  Result r = run("validate" + operands + " --d " + out.path.string());
  EXPECT_EQ(r.status, 0) << r.output;
  std::string d = out.slurp();
  const std::vector<std::string> words = words_after_shape(d);
  const auto first = static_cast<std::uint32_t>(std::stoul(words[0], nullptr, 16));
  d.replace(d.find(words[0]), 8, tcemu::to_hex(tcemu::formats::fp32, first ^ 1));
  const TempFile altered("bs_d_altered.txt", d);
  r = run("validate" + operands + " --d " + altered.path.string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "no C; row 0 of A, column 0 of B: K = 80, ")) << r.output;
  EXPECT_TRUE(has(r, " nonzero products (unscaled), |a b| in [")) << r.output;
  // The case lines with their d's validate too.
  std::string recorded, c = cases();
  std::istringstream lines(c);
  std::size_t index = 0;
  for (std::string line; std::getline(lines, line); ++index) {
    recorded += line + " " + words[index] + "\n";
  }
  const TempFile cases_file("bs_cases.txt", recorded);
  r = run(std::string("validate ") + kNvfp4 + " " + cases_file.path.string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, ": 6 cases, 0 mismatches")) << r.output;
}

// Up to K = 64 (one block-scaled instruction) validate --d lists a differing element's case line,
// its scales after c.
TEST(BlockScaledCli, ValidateListsTheCaseLineWithItsScales) {
  const TempFile a("bs1_a.txt", text_matrix(1, 32, std::vector<std::uint32_t>(32, 2))),
      b("bs1_b.txt", text_matrix(32, 1, std::vector<std::uint32_t>(32, 2))),
      sa("bs1_sa.txt", text_matrix(1, 2, {0x38, 0x40})),
      sb("bs1_sb.txt", text_matrix(2, 1, {0x38, 0x38})), d("bs1_d.txt", "1 1\n42400001\n");
  const Result r = run(std::string("validate ") + kNvfp4 + " --a " + a.path.string() + " --b " +
                       b.path.string() + " --scale-a " + sa.path.string() + " --scale-b " +
                       sb.path.string() + " --d " + d.path.string());
  EXPECT_EQ(r.status, 1) << r.output;  // 16 + 2 x 16 = 48 is 42400000: one ulp off
  EXPECT_TRUE(has(r, "case line: 32 " + repeated("2", 64) + "00000000 38 40 38 38")) << r.output;
}

TEST_F(Nvfp4Gemm, ScaleFilesAreCheckedNamingTheFile) {
  const TempFile na("bs_a.npy"), nb("bs_b.npy"), nsa("bs_sa.npy"), nsb("bs_sb.npy"),
      bad("bs_bad.npy"), out("bs_out.npy");
  write_binary(na, npy_bytes("|u1", m, k, a));
  write_binary(nb, npy_bytes("|u1", k, n, b));
  write_binary(nsa, npy_bytes("|u1", m, s, sa));
  write_binary(nsb, npy_bytes("|u1", s, n, sb));
  const std::string ab = std::string(" ") + kNvfp4 + " --a " + na.path.string() + " --b " +
                         nb.path.string() + " --out " + out.path.string();
  Result r = run("matmul" + ab);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r,
                  "the datapath is block-scaled: --scale-a FILE and --scale-b FILE are "
                  "required"))
      << r.output;
  // Four scales a row for K = 80 (one per 16 k needs five).
  write_binary(bad, npy_bytes("|u1", m, s - 1, std::vector<std::uint32_t>(m * (s - 1), 0x38)));
  r = run("matmul" + ab + " --scale-a " + bad.path.string() + " --scale-b " + nsb.path.string());
  EXPECT_EQ(r.status, 2);  // an input error
  EXPECT_TRUE(has(r, "--scale-a " + bad.path.string() +
                         " is 3 x 4, expected 3 x 5 (the rows of --a, one per 16 of the 80 k)"))
      << r.output;
  // ml_dtypes' float8 scales save as '<V1': read only with the format given.
  write_binary(bad, npy_bytes("<V1", m, s, sa));
  r = run("matmul" + ab + " --scale-a " + bad.path.string() + " --scale-b " + nsb.path.string());
  EXPECT_EQ(r.status, 2);  // an input error
  EXPECT_TRUE(has(r,
                  "dtype '<V1' (void items, as ml_dtypes saves float8_e8m0fnu and "
                  "float8_e4m3fn alike) does not say which format its scales are: save "
                  "uint8 codes, or give --scale-format ue4m3 (or --scale-format-a)"))
      << r.output;
  r = run("matmul" + ab + " --scale-a " + bad.path.string() + " --scale-b " + nsb.path.string() +
          " --scale-format-a ue4m3");
  EXPECT_EQ(r.status, 0) << r.output;
  // int8 is no scale dtype.
  write_binary(bad, npy_bytes("|i1", m, s, sa));
  r = run("matmul" + ab + " --scale-a " + bad.path.string() + " --scale-b " + nsb.path.string());
  EXPECT_EQ(r.status, 2);  // an input error
  EXPECT_TRUE(has(r, "dtype '|i1' cannot hold scale codes")) << r.output;
  // A ue4m3 scale byte with bit 7 set (a float8_e4m3fn scale's sign) reads as without it, as the
  // hardware reads it (MMA-Sim 2.1.1).
  std::vector<std::uint32_t> signed_scale = sa;
  signed_scale[4] |= 0x80;
  const auto product_with = [&](const std::vector<std::uint32_t>& scales) {
    write_binary(bad, npy_bytes("|u1", m, s, scales));
    const Result run_result =
        run("matmul" + ab + " --scale-a " + bad.path.string() + " --scale-b " + nsb.path.string());
    EXPECT_EQ(run_result.status, 0) << run_result.output;
    std::ifstream in(out.path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string with_bit_7 = product_with(signed_scale);
  EXPECT_FALSE(with_bit_7.empty());
  EXPECT_EQ(with_bit_7, product_with(sa));
  // A packed FP4 byte (two codes) in A is refused, never read as its low code.
  std::vector<std::uint32_t> packed = a;
  packed[k + 3] = 0x35;
  write_binary(bad, npy_bytes("|u1", m, k, packed));
  r = run(std::string("matmul ") + kNvfp4 + " --a " + bad.path.string() + " --b " +
          nb.path.string() + " --scale-a " + nsa.path.string() + " --scale-b " + nsb.path.string() +
          " --out " + out.path.string());
  EXPECT_EQ(r.status, 2);  // an input error
  EXPECT_TRUE(has(r, "--a " + bad.path.string() +
                         ": element (1, 3) = 35 is not a code of e2m1 (4 bits: at most f); FP4 "
                         "is read one code per byte, not packed two a byte"))
      << r.output;
  // Scales for an unscaled datapath are refused.
  r = run("matmul --arch sm100 --instr tcgen05 --type e2m1 --a " + na.path.string() + " --b " +
          nb.path.string() + " --scale-a " + nsa.path.string() + " --out " + out.path.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r, "--scale-a: the datapath takes no scales")) << r.output;
  // validate exits 2 for the same input errors.
  r = run(std::string("validate ") + kNvfp4 + " --a " + na.path.string() + " --b " +
          nb.path.string() + " --scale-a " + nsa.path.string() + " --scale-b " + nsb.path.string() +
          " --d " + bad.path.string());
  EXPECT_EQ(r.status, 2) << r.output;
}

}  // namespace

namespace {

// tcemu detect --from fits G, F and the zero exponent to recorded NVFP4 results (the preset's
// own, so the fit must reproduce every one), given only the inputs' layout.
TEST(BlockScaledCli, DetectFitsTheBlockScaledFieldsToRecordedCases) {
  const tcemu::Datapath nvfp4 = tcemu::preset("sm100", tcemu::formats::e2m1, tcemu::formats::fp32,
                                              "tcgen05.mxf4nvf4.block16.ue4m3");
  std::string lines;
  // 4000 cases of every scenario: fewer can leave G open (the report then says so).
  for (std::uint64_t i = 0; i < 4000; ++i) {
    tcemu::MmaCase c = tcemu::evidence_case(nvfp4, 7, 1, i);
    c.d = tcemu::mma_case_element(nvfp4, c);
    lines += tcemu::format_case_line(c, nvfp4) + "\n";
  }
  const TempFile file("detect-nvfp4.txt", lines);
  const Result r =
      run("detect --type e2m1 --acc fp32 --scale-block 16 --scale-format ue4m3 --from " +
          file.path.string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "4000 cases, 0 mismatches")) << r.output;
  EXPECT_TRUE(has(r, "--alignment-bits 35")) << r.output;
  EXPECT_TRUE(has(r, "--group-terms 16")) << r.output;
  // The options line runs: `tcemu mma` with it reproduces a recorded line's d.
  const std::size_t options = r.output.find("options: ");
  ASSERT_NE(options, std::string::npos) << r.output;
  const std::string line = r.output.substr(options + 9, r.output.find('\n', options) - options - 9);
  const std::string first = lines.substr(0, lines.find('\n'));
  const std::string without_d = first.substr(0, first.rfind(' '));
  const Result replay = run("mma " + line, without_d + "\n");
  EXPECT_EQ(replay.status, 0) << replay.output;
  EXPECT_EQ(replay.output, first.substr(first.rfind(' ') + 1) + "\n") << replay.output;
  // The inputs' layout must be given: without the scales the lines do not parse.
  const Result unscaled = run("detect --type e2m1 --acc fp32 --from " + file.path.string());
  EXPECT_EQ(unscaled.status, 2) << unscaled.output;
  EXPECT_TRUE(has(unscaled, "line 1")) << unscaled.output;
  const Result without_file = run("detect --type e2m1 --acc fp32 --scale-block 16");
  EXPECT_EQ(without_file.status, 2) << without_file.output;
  EXPECT_TRUE(has(without_file, "--scale-block describes recorded cases")) << without_file.output;
}

}  // namespace

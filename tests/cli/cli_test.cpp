// The tcemu command as a user runs it: exit codes, output lines and error messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "cli_runner.hpp"

namespace {

using tcemu::test::Result;
using tcemu::test::run;
using tcemu::test::run_with_stdin_from;
using tcemu::test::shell;
using tcemu::test::TempFile;

// A 12 x 10 `tcemu gemm --backend gpu` run: with a GPU every element is correctly rounded;
// without one the command fails with status 1 and says why.
void expect_correctly_rounded_on_gpu(const Result& gpu) {
  if (gpu.status == 0) {
    EXPECT_NE(gpu.output.find("elements not correctly rounded 0 of 120"), std::string::npos)
        << gpu.output;
  } else {
    EXPECT_EQ(gpu.status, 1);
    EXPECT_TRUE(gpu.output.find("no CUDA device") != std::string::npos ||
                gpu.output.find("built without the CUDA backend") != std::string::npos)
        << gpu.output;
  }
}

std::string ones(int k, const char* one) {
  std::string s;
  for (int i = 0; i < 2 * k; ++i) s += std::string(" ") + one;
  return s;
}

TEST(Cli, MmaEvaluatesEveryLine) {
  // 16 products of 1 * 1 plus c = 1 is 17; plus c = 2^-30: 16 + 2^-30 truncated (RZ) to 16 on
  // sm90 and kept by nothing: 0x41800000.
  const std::string input =
      "16" + ones(16, "3c00") + " 3f800000\n# comment\n\n16" + ones(16, "3c00") + " 30800000\n";
  const Result r = run("mma --arch sm90 --type fp16 --acc fp32", input);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "41880000\n41800000\n");
}

TEST(Cli, MmaOverridesChangeOneField) {
  // a = 2^-12, b = 1.5 * 2^-12, c = 1: the exact sum is 1 + 0.75 ulp(1). sm90 keeps the product
  // on its grid (2^-25) and truncates the block result: 1.0. Rounding the block to nearest
  // instead gives 1 + 2^-23.
  const std::string input = "1 0c00 0e00 3f800000\n";
  const Result rz = run("mma --arch sm90", input);
  const Result rn = run("mma --arch sm90 --block-rounding rn", input);
  EXPECT_EQ(rz.status, 0);
  EXPECT_EQ(rn.status, 0);
  EXPECT_EQ(rz.output, "3f800000\n");
  EXPECT_EQ(rn.output, "3f800001\n");
}

TEST(Cli, MmaFp16AccumulatorAndFp8) {
  const Result r = run("mma --arch sm89 --type e4m3 --acc fp16", "2 38 38 38 38 3c00\n");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "4200\n");  // 1*1 + 1*1 + 1 = 3
}

TEST(Cli, MalformedLineStopsWithItsLineNumber) {
  const Result r = run("mma", "1 3c00 3c00 3f800000\n1 3c00 3c00\n1 3c00 3c00 3f800000\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(
      r.output,
      "40000000\ntcemu mma: <stdin>: line 2: K = 1 needs 4 fields (K, 1 a, 1 b, c) or 5 with a "
      "recorded d, found 3\n");
}

TEST(Cli, UnknownPresetAndBadOverrideAreUsageErrors) {
  Result r = run("mma --arch sm95");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("unknown architecture preset 'sm95'"), std::string::npos) << r.output;
  r = run("mma --arch sm70 --type bf16");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("sm70 mma.sync has no bf16 MMA"), std::string::npos) << r.output;
  r = run("mma --block-rounding up");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--block-rounding must be one of rz, rn, got 'up'"), std::string::npos);
  r = run("mma --k-group 3");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("k_group must divide block_terms"), std::string::npos) << r.output;
  r = run("mma --frobnicate");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("unknown option --frobnicate"), std::string::npos);
}

TEST(Cli, InstructionShapesAreCheckedAndListed) {
  // A named shape refuses a K that is not a multiple of its own K, naming the shapes there are.
  Result r = run("mma --instr mma.sync.m16n8k16",
                 "8 3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00 "
                 "3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00 00000000\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("line 1: K = 8 is not a multiple of mma.sync.m16n8k16's K = 16; sm90 "
                          "runs fp16 -> fp32 on: mma.sync, mma.sync.m8n8k4, mma.sync.m16n8k8"),
            std::string::npos)
      << r.output;
  // The same case through the k8 shape: 8 * 1 * 1 = 8.
  r = run("mma --instr mma.sync.m16n8k8",
          "8 3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00 "
          "3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00 00000000\n");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "41000000\n");
  r = run("presets --arch sm80 --instr wgmma");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("sm80 has no instruction 'wgmma'; sm80 runs fp16 -> fp32 on: mma.sync"),
            std::string::npos)
      << r.output;
  r = run("presets");
  EXPECT_NE(r.output.find("sm90 wmma.m16n16k8 tf32 -> fp32 = mma.sync.m16n8k4\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("sm90 mma.sync e4m3 -> fp32 = mma.sync.m16n8k32\n"), std::string::npos);
}

TEST(Cli, CapturesReplayWithZeroMismatches) {
  const Result r = run("captures");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("| H100 | sm90 | mma.sync | fp16 | fp32 | 16 | 5000 | 0 |"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("0 mismatches in 240000 cases."), std::string::npos) << r.output;
}

TEST(Cli, PresetsListsAndDescribes) {
  Result r = run("presets");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("sm90 wgmma: input=e4m3"), std::string::npos) << r.output;
  r = run("presets --arch sm80 --type tf32 --block-terms 8 --instruction-k 8");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("input=tf32 accumulator=fp32 instruction_k=8 block_terms=8"),
            std::string::npos)
      << r.output;
}

TEST(Cli, ValidateReportsMismatchesWithTheCraftedName) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("tcemu_validate_" + std::to_string(::getpid()) + ".txt");
  // sm90: 1*2 + 1*2 + 1 = 5 (right); the second case records 6 (wrong).
  std::ofstream(file) << "# a recorded run\n2 3c00 3c00 4000 4000 3f800000 40a00000\n"
                      << "# crafted: wrong-on-purpose\n2 3c00 3c00 4000 4000 3f800000 40c00000\n";
  const Result r = run("validate --arch sm90 " + file.string());
  std::filesystem::remove(file);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("(wrong-on-purpose): recorded 40c00000, emulated 40a00000"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(": 2 cases, 1 mismatches"), std::string::npos) << r.output;
}

TEST(Cli, ValidateNeedsRecordedResults) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("tcemu_validate_nod_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(file) << "2 3c00 3c00 4000 4000 3f800000\n";
  const Result r = run("validate " + file.string());
  std::filesystem::remove(file);
  EXPECT_EQ(r.status, 2);  // an input error
  EXPECT_NE(r.output.find("line 1: no recorded result d to validate against"), std::string::npos)
      << r.output;
}

TEST(Cli, DetectFromRecordedH100Cases) {
  // The H100 mma.sync fp16 -> fp32 results (tests/data/h100-probe) determine the sm90 datapath.
  const Result r = run(std::string("detect --type fp16 --acc fp32 --from ") + TCEMU_H100_PROBE_DIR +
                       "/fp16-fp32.txt");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("5034 cases, 0 mismatches"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--block-terms 16 --k-group 16 --alignment-bits 25"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--block-rounding rz"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--zero-sign positive"), std::string::npos) << r.output;
}

// sm90 m8n8k4 fp16 -> fp16 has no preset: validate replays the H100's cases through the pair-FMA
// emulation, and refuses datapath options for it.
TEST(Cli, ValidateReplaysM8n8k4Fp16ThroughThePairFmaEmulation) {
  const std::string file = std::string(TCEMU_H100_SHAPES_DIR) + "/mma.sync.m8n8k4-fp16-fp16.txt";
  Result r = run("validate --instr mma.sync.m8n8k4 --type fp16 --acc fp16 " + file);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("the fp32 pair-FMA emulation"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3020 cases, 0 mismatches"), std::string::npos) << r.output;
  r = run("validate --instr mma.sync.m8n8k4 --type fp16 --acc fp16 --block-terms 2 " + file);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("has no datapath to adjust"), std::string::npos) << r.output;
}

// tcemu mma computes the same model: one d per case line of the H100's file (without its recorded
// d, which mma refuses), each the GPU's (the line's last field), and the same refusals.
TEST(Cli, MmaRunsM8n8k4Fp16ThroughThePairFmaEmulation) {
  const std::string file = std::string(TCEMU_H100_SHAPES_DIR) + "/mma.sync.m8n8k4-fp16-fp16.txt";
  std::ifstream in(file);
  ASSERT_TRUE(in) << "cannot open " << file;
  std::string cases, expected, text;
  while (std::getline(in, text)) {
    if (text.empty() || text.starts_with('#')) continue;
    cases += text.substr(0, text.find_last_of(' ')) + "\n";
    expected += text.substr(text.find_last_of(' ') + 1) + "\n";
  }
  ASSERT_GE(std::count(expected.begin(), expected.end(), '\n'), 3020);
  Result r = run("mma --instr mma.sync.m8n8k4 --type fp16 --acc fp16", cases);
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.output == expected) << r.output.substr(0, 400);
  r = run("mma --instr mma.sync.m8n8k4 --type fp16 --acc fp16",
          "5 3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output,
            "tcemu mma: <stdin>: line 1: K = 5 is not a multiple of mma.sync.m8n8k4's "
            "K = 4\n");
  r = run("mma --instr mma.sync.m8n8k4 --type fp16 --acc fp16 --alignment-bits 3", "");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--alignment-bits: sm90 mma.sync.m8n8k4 fp16 -> fp16 has no datapath"),
            std::string::npos)
      << r.output;
}

// Occurrences of `what` in `text`.
std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Cli, HelpAndUnknownCommand) {
  const Result help = run("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.output.find("Run 'tcemu COMMAND --help'"), std::string::npos) << help.output;
  EXPECT_EQ(count(help.output, "--block-rounding"), 0u) << help.output;
  EXPECT_EQ(run("mma --help").status, 0);
  const Result r = run("frobnicate");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("unknown command 'frobnicate'"), std::string::npos);
}

TEST(Cli, GemmOnMatrixFiles) {
  // [1 2; 3 4] [5 6; 7 8] = [19 22; 43 50]; with C = I, alpha = 2, beta = -1: [37 44; 86 99].
  const TempFile a("tcemu_a",
                   "2 2\n3ff0000000000000 4000000000000000\n"
                   "4008000000000000 4010000000000000\n");
  const TempFile b("tcemu_b",
                   "2 2\n4014000000000000 4018000000000000\n"
                   "401c000000000000 4020000000000000\n");
  const TempFile c("tcemu_c",
                   "2 2\n3ff0000000000000 0000000000000000\n"
                   "0000000000000000 3ff0000000000000\n");
  const TempFile out("tcemu_out");
  for (const char* backend : {"emulator", "cpu64"}) {
    for (const char* mode : {"dp", "cr"}) {
      const Result r = run(std::string("gemm --scheme dgemm-tc --backend ") + backend + " --mode " +
                           mode + " --a " + a.path.string() + " --b " + b.path.string() + " --c " +
                           c.path.string() + " --alpha 2 --beta -1 --out " + out.path.string());
      EXPECT_EQ(r.status, 0) << r.output;
      EXPECT_EQ(out.slurp(),
                "2 2\n4042800000000000 4046000000000000\n"
                "4055800000000000 4058c00000000000\n")
          << backend << " " << mode;
    }
  }
  // fp32 files for sgemm-tc: [1 2] [3; 4] = 11.
  const TempFile a32("tcemu_a32", "1 2\n3f800000 40000000\n");
  const TempFile b32("tcemu_b32", "2 1\n40400000\n40800000\n");
  const Result r = run("gemm --scheme sgemm-tc --a " + a32.path.string() + " --b " +
                       b32.path.string() + " --out " + out.path.string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(out.slurp(), "1 1\n41300000\n");
}

TEST(Cli, GemmFileErrorsNameFileAndLine) {
  const TempFile a("tcemu_bad_a",
                   "2 2\n3ff0000000000000 4000000000000000\n4008 4010000000000000\n");
  const TempFile b("tcemu_bad_b",
                   "2 2\n3ff0000000000000 4000000000000000\n"
                   "4008000000000000 4010000000000000\n");
  const TempFile out("tcemu_bad_out");
  const Result r = run("gemm --scheme dgemm-tc --a " + a.path.string() + " --b " + b.path.string() +
                       " --out " + out.path.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(
      r.output.find(a.path.string() + ":3: column 1: expected 16 hex digits (fp64), got '4008'"),
      std::string::npos)
      << r.output;
}

// Issue 18: a ROWS x COLS over int64 gave SIGSEGV; a header far larger than its file was
// allocated and zeroed before the short row was reported (here 8 TB: std::bad_alloc); '2+3' and
// '1-0' were read as 2 x 3 and 1 x 0. Each is refused naming the file and line.
TEST(Cli, GemmMatrixFileHeadersAreCheckedBeforeAllocating) {
  const TempFile b("tcemu_hdr_b", "1 1\n3ff0000000000000\n");
  const TempFile out("tcemu_hdr_out");
  const auto error_of = [&](const std::string& header, const std::string& rows) {
    const TempFile a("tcemu_hdr_a", "# a\n" + header + "\n" + rows);
    const Result r = run("gemm --scheme dgemm-tc --a " + a.path.string() + " --b " +
                         b.path.string() + " --out " + out.path.string());
    EXPECT_EQ(r.status, 2) << header << ": " << r.output;
    const auto at = r.output.find(a.path.string() + ":");
    return at == std::string::npos ? r.output : r.output.substr(at + a.path.string().size());
  };
  const std::string row = "3ff0000000000000\n";
  EXPECT_EQ(error_of("4294967296 4294967296", row),
            ":2: ROWS x COLS = 4294967296 x 4294967296 overflows int64\n");
  EXPECT_EQ(error_of("1000000 1000000", row), ":3: 1 columns, expected 1000000\n");
  for (const char* header : {"2+3", "1-0", "2 +1", "-0 1", "1 1 1", "1 0x1", "1"}) {
    EXPECT_EQ(error_of(header, row),
              ":2: expected 'ROWS COLS', got '" + std::string(header) + "'\n");
  }
}

// Issue 18: an R x 0 product written with --out could not be read back (nor a K x 0 operand).
TEST(Cli, GemmZeroColumnMatricesRoundTrip) {
  const TempFile a("tcemu_zc_a", "2 1\n3ff0000000000000\n4000000000000000\n");
  const TempFile b("tcemu_zc_b", "1 0\n");
  const TempFile out("tcemu_zc_out");
  const TempFile again("tcemu_zc_again");
  const std::string operands =
      "gemm --scheme dgemm-tc --a " + a.path.string() + " --b " + b.path.string();
  const Result first = run(operands + " --out " + out.path.string());
  EXPECT_EQ(first.status, 0) << first.output;
  EXPECT_EQ(out.slurp(), "2 0\n");
  const Result second =
      run(operands + " --c " + out.path.string() + " --out " + again.path.string());
  EXPECT_EQ(second.status, 0) << second.output;
  EXPECT_EQ(again.slurp(), "2 0\n");
}

// fuzz/fuzz_matrix_file: reading an R x 0 header looped over its R rows, doing nothing; with
// R = 9e18 it never ended in an unoptimised build (-O0, or the fuzzer's instrumented one; -O2
// removes the empty loop, so this test hangs only there). The read follows the data.
TEST(Cli, GemmZeroColumnMatrixWithHugeRowCountIsReadAtOnce) {
  const TempFile a("tcemu_zc_huge_a", "9000000000000000000 0\n");
  const TempFile b("tcemu_zc_huge_b", "1 1\n3ff0000000000000\n");
  const TempFile out("tcemu_zc_huge_out");
  const Result r = run("gemm --scheme dgemm-tc --a " + a.path.string() + " --b " + b.path.string() +
                       " --out " + out.path.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("A is 9000000000000000000 x 0 but B has 1 rows"), std::string::npos)
      << r.output;
}

// Issue 18: a directory given as FILE (or as standard input) was read as an empty file and the
// command succeeded; it fails naming the path.
TEST(Cli, DirectoryAsFileIsAnErrorNamingIt) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tcemu_dir_" + std::to_string(::getpid()));
  std::filesystem::create_directory(dir);
  const std::string d = dir.string();
  const std::string expected = "cannot read " + d + ": it is a directory\n";
  const TempFile b("tcemu_dir_b", "1 1\n3ff0000000000000\n");
  const TempFile out("tcemu_dir_out");
  const std::string gemm = "gemm --scheme dgemm-tc --out " + out.path.string();
  for (const std::string& arguments :
       {"mma " + d, "mma --arch sm90 " + d + " -", "validate --arch sm90 " + d,
        "detect --type fp16 --acc fp32 --from " + d, gemm + " --a " + d + " --b " + b.path.string(),
        gemm + " --a " + b.path.string() + " --b " + b.path.string() + " --c " + d}) {
    const Result r = run(arguments);
    const std::string command = arguments.substr(0, arguments.find(' '));
    // An input error is exit 2 in every command (validate's 1 means that results differ).
    EXPECT_EQ(r.status, 2) << arguments << ": " << r.output;
    // validate prints its datapath first; the error is the last line.
    const std::string error = "tcemu " + command + ": " + expected;
    EXPECT_TRUE(r.output.size() >= error.size() &&
                r.output.compare(r.output.size() - error.size(), error.size(), error) == 0)
        << arguments << ": " << r.output;
  }
  for (const char* arguments : {"mma", "mma -"}) {
    const Result r = run_with_stdin_from(arguments, d);
    EXPECT_EQ(r.status, 2) << arguments << ": " << r.output;
    EXPECT_EQ(r.output, "tcemu mma: cannot read <stdin>: it is a directory\n") << arguments;
  }
  std::filesystem::remove(dir);
}

TEST(Cli, GemmRunsTheErrorCorrectedSgemmSchemes) {
  // halfhalf on the RN datapath: SGEMM-level accuracy against the correctly rounded product.
  const Result r = run("gemm --scheme halfhalf --arch exact-rn --m 20 --n 10 --k 64");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("max relative error"), std::string::npos) << r.output;
  const Result tf32 = run("gemm --scheme tf32tf32 --m 8 --n 8 --k 16 --block-rounding rn");
  EXPECT_EQ(tf32.status, 0) << tf32.output;
  EXPECT_NE(tf32.output.find("tf32"), std::string::npos) << tf32.output;
  // --takeout N: hi*hi leaves the Tensor Core every N instructions; the corrections stay inside.
  const Result every2 = run("gemm --scheme tf32tf32 --takeout 2 --m 8 --n 8 --k 40");
  EXPECT_EQ(every2.status, 0) << every2.output;
  EXPECT_NE(every2.output.find("acc0 = 0*0 out every 2 instr; acc1 = 0*1 1*0"), std::string::npos)
      << every2.output;
  const Result inside = run("gemm --scheme 3xtf32 --takeout 2 --m 8 --n 8 --k 16");
  EXPECT_EQ(inside.status, 2) << inside.output;
  EXPECT_NE(inside.output.find("no accumulator group leaves the Tensor Core"), std::string::npos)
      << inside.output;
  EXPECT_EQ(run("gemm --scheme halfhalf --takeout 0 --m 8 --n 8 --k 16").status, 2);
}

TEST(Cli, GemmGeneratedInputsReportAccuracy) {
  const Result cr = run("gemm --scheme dgemm-tc --mode cr --m 12 --n 10 --k 30 --phi 2");
  EXPECT_EQ(cr.status, 0) << cr.output;
  EXPECT_NE(cr.output.find("elements not correctly rounded 0 of 120"), std::string::npos)
      << cr.output;
  // On a machine with a GPU the GPU backend gives the correctly rounded product as well; without
  // one the command says why.
  expect_correctly_rounded_on_gpu(
      run("gemm --scheme dgemm-tc --backend gpu --mode cr --m 12 --n 10 --k 30"));
  const Result bad = run("gemm --scheme dgemm-tc --mode fast");
  EXPECT_EQ(bad.status, 2);
  const Result unknown = run("gemm --scheme no-such-scheme");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.output.find("dgemm-tc, sgemm-tc"), std::string::npos) << unknown.output;
  EXPECT_NE(unknown.output.find("halfhalf"), std::string::npos) << unknown.output;
}

// Ozaki-I on int8 slices: dgemm-int8 in CR mode is correctly rounded on the emulator (and the
// GPU where there is one), DP and tunable run, sgemm-int8 multiplies fp32 files; bad modes and
// a --splits outside tunable's range are refused.
TEST(Cli, GemmInt8SchemesRun) {
  const Result cr = run("gemm --scheme dgemm-int8 --mode cr --m 12 --n 10 --k 30 --phi 4");
  EXPECT_EQ(cr.status, 0) << cr.output;
  EXPECT_NE(cr.output.find("elements not correctly rounded 0 of 120"), std::string::npos)
      << cr.output;
  EXPECT_NE(cr.output.find("(6 bits each)"), std::string::npos) << cr.output;
  expect_correctly_rounded_on_gpu(
      run("gemm --scheme dgemm-int8 --backend gpu --mode cr --m 12 --n 10 --k 30"));
  const Result tunable =
      run("gemm --scheme dgemm-int8 --mode tunable --splits 3 --m 8 --n 8 --k 16");
  EXPECT_EQ(tunable.status, 0) << tunable.output;
  EXPECT_NE(tunable.output.find("GEMMs: 6,"), std::string::npos) << tunable.output;
  EXPECT_EQ(run("gemm --scheme dgemm-int8 --mode tunable --splits 0 --m 4 --n 4 --k 4").status, 2);
  const TempFile a32("tcemu_a32", "1 2\n3f800000 40000000\n");
  const TempFile b32("tcemu_b32", "2 1\n40400000\n40800000\n");
  const TempFile out("tcemu_out");
  const Result s = run("gemm --scheme sgemm-int8 --a " + a32.path.string() + " --b " +
                       b32.path.string() + " --out " + out.path.string());
  EXPECT_EQ(s.status, 0) << s.output;
  EXPECT_EQ(out.slurp(), "1 1\n41300000\n");  // [1 2] [3; 4] = 11
}

// --rounding (issue 37): every dgemm and sgemm scheme in mode cr gives the exact product rounded
// upward, downward or toward zero to its precision, compared bit for bit with MPFR's rounded so
// (which differs from round-to-nearest's in many elements at phi 4: an ignored direction would
// fail).
TEST(Cli, GemmDirectedRounding) {
  for (const std::string scheme :
       {"dgemm-crt", "dgemm-tc", "dgemm-int8", "sgemm-crt", "sgemm-tc", "sgemm-int8"}) {
    for (const std::string d : {"upward", "downward", "toward-zero"}) {
      const Result r = run("gemm --scheme " + scheme + " --mode cr --rounding " + d +
                           " --m 12 --n 10 --k 30 --phi 4");
      EXPECT_EQ(r.status, 0) << r.output;
      EXPECT_NE(r.output.find("against A B rounded " + d + ":"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("elements not correctly rounded 0 of 120"), std::string::npos)
          << r.output;
    }
  }
}

// Ozaki scheme II: dgemm-crt is correctly rounded in mode cr on the emulator (and the GPU where
// there is one); dp takes the norm scaling's 15 moduli at phi 1 (its bound of |A||B| asks for no
// more) and more at phi 4, and says what its bound asked; tunable takes --moduli, sgemm-crt
// multiplies fp32 files.
TEST(Cli, GemmCrtSchemesRun) {
  const Result cr = run("gemm --scheme dgemm-crt --mode cr --m 12 --n 10 --k 30 --phi 4");
  EXPECT_EQ(cr.status, 0) << cr.output;
  EXPECT_NE(cr.output.find("elements not correctly rounded 0 of 120"), std::string::npos)
      << cr.output;
  const Result dp = run("gemm --scheme dgemm-crt --m 12 --n 10 --k 30 --phi 1");
  EXPECT_EQ(dp.status, 0) << dp.output;
  EXPECT_NE(dp.output.find("moduli: 15,"), std::string::npos) << dp.output;
  EXPECT_NE(dp.output.find("int8 GEMMs: 16,"), std::string::npos) << dp.output;
  EXPECT_NE(dp.output.find("dp's bound of |A||B|: norm bits"), std::string::npos) << dp.output;
  const Result spread = run("gemm --scheme dgemm-crt --m 12 --n 10 --k 30 --phi 4");
  EXPECT_EQ(spread.status, 0) << spread.output;
  EXPECT_EQ(spread.output.find("moduli: 15,"), std::string::npos) << spread.output;
  EXPECT_NE(spread.output.find("dp's bound of |A||B|"), std::string::npos) << spread.output;
  expect_correctly_rounded_on_gpu(
      run("gemm --scheme dgemm-crt --mode cr --backend gpu --m 12 --n 10 --k 30"));
  const Result tunable =
      run("gemm --scheme dgemm-crt --mode tunable --moduli 5 --m 8 --n 8 --k 16");
  EXPECT_EQ(tunable.status, 0) << tunable.output;
  EXPECT_NE(tunable.output.find("moduli: 5,"), std::string::npos) << tunable.output;
  EXPECT_EQ(run("gemm --scheme dgemm-crt --mode tunable --moduli 49 --m 4 --n 4 --k 4").status, 2);
  EXPECT_EQ(run("gemm --scheme dgemm-crt --mode tunable --m 4 --n 4 --k 4").status, 2);
  const TempFile a32("tcemu_a32", "1 2\n3f800000 40000000\n");
  const TempFile b32("tcemu_b32", "2 1\n40400000\n40800000\n");
  const TempFile out("tcemu_out");
  const Result s = run("gemm --scheme sgemm-crt --a " + a32.path.string() + " --b " +
                       b32.path.string() + " --out " + out.path.string());
  EXPECT_EQ(s.status, 0) << s.output;
  EXPECT_EQ(out.slurp(), "1 1\n41300000\n");  // [1 2] [3; 4] = 11
}

// The accuracy report compares with what the scheme computes: alpha times the correctly rounded
// product (a correctly rounded scheme is then exact with --alpha 2, not "64 of 64" wrong); a NaN
// shows in the maximum as NaN, and the oracle's NaN agrees with a scheme's NaN of another sign.
TEST(Cli, GemmAccuracyReportHonoursAlphaAndNaN) {
  for (const char* scheme : {"--scheme exblas --backend cpu64", "--scheme dgemm-tc --mode cr"}) {
    const Result two = run(std::string("gemm ") + scheme + " --m 8 --n 8 --k 8 --alpha 2");
    EXPECT_EQ(two.status, 0) << two.output;
    EXPECT_NE(two.output.find("max relative error 0, elements not correctly rounded 0 of 64"),
              std::string::npos)
        << two.output;
    EXPECT_NE(two.output.find("RN(alpha x correctly rounded A B)"), std::string::npos)
        << two.output;
    const Result nan = run(std::string("gemm ") + scheme + " --m 8 --n 8 --k 8 --alpha nan");
    EXPECT_EQ(nan.status, 0) << nan.output;
    EXPECT_NE(nan.output.find("max relative error nan, elements not correctly rounded 0 of 64"),
              std::string::npos)
        << nan.output;
  }
  const Result one = run("gemm --scheme dgemm-tc --mode cr --m 8 --n 8 --k 8");
  EXPECT_NE(one.output.find("against the correctly rounded A B: max relative error 0, elements "
                            "not correctly rounded 0 of 64"),
            std::string::npos)
      << one.output;
}

// DP refuses a --max-splits its operands need more than (it printed a 128% error), like CR.
TEST(Cli, GemmDpRefusesTooFewMaxSplits) {
  const Result r = run("gemm --scheme dgemm-tc --mode dp --max-splits 1 --m 8 --n 8 --k 8");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("DP mode needs more than 1 slices"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("raise max_splits"), std::string::npos) << r.output;
}

// A size that cannot be allocated is named (it ended in a bare std::bad_alloc): the address
// space is limited to 4 GiB so that C of 100000 x 100000 (80 GB) cannot be had on any machine.
TEST(Cli, GemmOutOfMemoryNamesTheSize) {
#if defined(__SANITIZE_ADDRESS__)
  // libasan's operator new reports and aborts where the plain one throws std::bad_alloc, whatever
  // ASAN_OPTIONS says, so the path under test does not exist in this build; the plain build runs
  // it.
  GTEST_SKIP() << "under AddressSanitizer operator new aborts instead of throwing std::bad_alloc";
#endif
  // C takes 80 GB, more than the 4 GB address-space limit allows.
  const Result r = shell("ulimit -v 4000000; " + std::string(TCEMU_CLI) +
                         " gemm --scheme dgemm-tc --m 100000 --n 100000 --k 1 2>&1");
  const std::string& output = r.output;
  EXPECT_EQ(r.status, 1) << output;
  EXPECT_NE(output.find("could not allocate C, 100000 x 100000"), std::string::npos) << output;
  EXPECT_NE(output.find("80000000000 bytes"), std::string::npos) << output;
}

// A NUL byte in a file's text is shown escaped in the message, which it used to cut short.
TEST(Cli, ErrorMessagesShowANulByteEscaped) {
  const TempFile a("nul_a.txt", std::string("1 1\n3f80") + '\0' + "000 tail\n");
  const TempFile b("nul_b.txt", "1 1\n3f800000\n");
  const TempFile out("nul_out.txt");
  const Result r = run("gemm --scheme sgemm-tc --a " + a.path.string() + " --b " + b.path.string() +
                       " --out " + out.path.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("got '3f80\\x00000'\n"), std::string::npos) << r.output;
  const Result mma = run("mma", std::string("1 3c") + '\0' + "0 3c00 3f800000\n");
  EXPECT_EQ(mma.status, 2) << mma.output;
  EXPECT_NE(mma.output.find("'3c\\x000' is not hexadecimal"), std::string::npos) << mma.output;
}

TEST(Cli, GemmRunsDot2AndExblas) {
  const Result exact = run("gemm --scheme exblas --backend cpu64 --m 15 --n 9 --k 200 --phi 8");
  EXPECT_EQ(exact.status, 0) << exact.output;
  EXPECT_NE(exact.output.find("elements not correctly rounded 0 of 135"), std::string::npos)
      << exact.output;
  const Result dot2 = run("gemm --scheme dot2 --backend cpu64 --m 15 --n 9 --k 200 --phi 1");
  EXPECT_EQ(dot2.status, 0) << dot2.output;
  EXPECT_NE(dot2.output.find("max relative error"), std::string::npos) << dot2.output;
  // The same file format as every scheme: [1 2; 3 4] [5 6; 7 8] = [19 22; 43 50], in 16-digit
  // fp64 patterns for dot2 and exblas and 8-digit fp32 ones for their -fp32 forms.
  const TempFile a("tcemu_xa",
                   "2 2\n3ff0000000000000 4000000000000000\n"
                   "4008000000000000 4010000000000000\n");
  const TempFile b("tcemu_xb",
                   "2 2\n4014000000000000 4018000000000000\n"
                   "401c000000000000 4020000000000000\n");
  const TempFile af("tcemu_xaf", "2 2\n3f800000 40000000\n40400000 40800000\n");
  const TempFile bf("tcemu_xbf", "2 2\n40a00000 40c00000\n40e00000 41000000\n");
  const TempFile out("tcemu_xout");
  struct FileCase {
    const char* scheme;
    const TempFile& a;
    const TempFile& b;
    const char* product;
  };
  const char* fp64_product =
      "2 2\n4033000000000000 4036000000000000\n4045800000000000 4049000000000000\n";
  const char* fp32_product = "2 2\n41980000 41b00000\n422c0000 42480000\n";
  for (const FileCase& f :
       {FileCase{"dot2", a, b, fp64_product}, FileCase{"exblas", a, b, fp64_product},
        FileCase{"dot2-fp32", af, bf, fp32_product},
        FileCase{"exblas-fp32", af, bf, fp32_product}}) {
    const Result r =
        run(std::string("gemm --scheme ") + f.scheme + " --backend cpu64 --a " + f.a.path.string() +
            " --b " + f.b.path.string() + " --out " + out.path.string());
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(out.slurp(), f.product) << f.scheme;
  }
  // Generated fp32 inputs, correctly rounded to binary32.
  const Result exact32 =
      run("gemm --scheme exblas-fp32 --backend cpu64 --m 15 --n 9 --k 200 --phi 4");
  EXPECT_EQ(exact32.status, 0) << exact32.output;
  EXPECT_NE(exact32.output.find("elements not correctly rounded 0 of 135"), std::string::npos)
      << exact32.output;
  expect_correctly_rounded_on_gpu(run("gemm --scheme exblas --backend gpu --m 12 --n 10 --k 30"));
}

TEST(Cli, ExplainSumsDpModesPairsOnlyAndMarksTheOthers) {
  // x has 6 slices, y 5: DP mode (d = 6, fast) takes the levels p + q <= 7, CR every pair.
  const Result r = run("explain --x 1,1e-20,3 --y 1e-30,1,1");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("   A6 B1:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("   A3 B5 (CR only):"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("   A2 B5 (CR only):"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("FP64 in level order (DP mode):    3 (0x1.8p+1)"), std::string::npos)
      << r.output;
}

TEST(Cli, IntegerAndNumberOptionsAreRefusedOutOfRangeWithTheValue) {
  // Each was accepted as another value before: 2^32 + 1 as 1, -3 as 0, 2^44 MiB as 0 bytes, --5
  // as 5.
  const Result splits = run("explain --splits 4294967297");
  EXPECT_NE(splits.status, 0);
  EXPECT_NE(splits.output.find("--splits must be in [1, 64], got 4294967297"), std::string::npos)
      << splits.output;
  const Result takeout = run("gemm --scheme halfhalf --m 4 --n 4 --k 4 --takeout -3");
  EXPECT_NE(takeout.status, 0);
  EXPECT_NE(takeout.output.find("--takeout must be >= 1 (instructions), got -3"), std::string::npos)
      << takeout.output;
  const Result mib = run("gemm --scheme dgemm-tc --m 4 --n 4 --k 4 --workspace-mib 17592186044416");
  EXPECT_NE(mib.status, 0);
  EXPECT_NE(mib.output.find("--workspace-mib must be in [1, 8796093022207], got 17592186044416"),
            std::string::npos)
      << mib.output;
  const Result twice = run("explain --x=--5,1 --y 1,1");
  EXPECT_NE(twice.status, 0);
  EXPECT_NE(twice.output.find("--x: not a number: '--5'"), std::string::npos) << twice.output;
  const Result hex = run("explain --x -0x1p3,1 --y 1,1");
  EXPECT_EQ(hex.status, 0) << hex.output;
}

TEST(Cli, ExplainShowsTheStepsAndTheCorrectlyRoundedResult) {
  const Result r = run("explain");
  EXPECT_EQ(r.status, 0) << r.output;
  // 1e16 + 1 - 1e16 + 0.3: the plain dot product loses the 1, CR keeps it (1.3 is
  // 3ff4cccccccccccd).
  EXPECT_NE(r.output.find("bits: CR 3ff4cccccccccccd, MPFR 3ff4cccccccccccd"), std::string::npos)
      << r.output;
  const Result two = run("explain --a 1,2,3,4 --b 0.5,0.25,1,2 --arch sm80");
  EXPECT_EQ(two.status, 0) << two.output;
  EXPECT_NE(two.output.find("A1 B1"), std::string::npos);
}

// Every command's help prints the datapath block once, and says what RN block rounding leaves
// alone (gemm's used to repeat it for each library and part format).
TEST(Cli, DatapathHelpOnceAndWhatRnBlockRoundingChanges) {
  for (const char* command : {"mma", "matmul", "validate", "presets", "explain", "gemm"}) {
    const Result r = run(std::string(command) + " --help");
    EXPECT_EQ(r.status, 0) << command;
    EXPECT_EQ(count(r.output, "--block-rounding R"), 1u) << command << ":\n" << r.output;
    EXPECT_NE(r.output.find("the\n                         truncation to the alignment grid stays"),
              std::string::npos)
        << command << ":\n"
        << r.output;
  }
}

TEST(Cli, GemmReferenceNoneSkipsTheReport) {
  const Result none = run("gemm --scheme dgemm-tc --m 8 --n 8 --k 8 --reference none");
  EXPECT_EQ(none.status, 0) << none.output;
  EXPECT_NE(none.output.find("dgemm-tc on emulator: 8 x 8 x 8"), std::string::npos) << none.output;
  EXPECT_EQ(none.output.find("against"), std::string::npos) << none.output;
  // The long accumulator gives MPFR's bits: the same report.
  const Result mpfr = run("gemm --scheme dgemm-tc --m 8 --n 8 --k 8 --phi 3");
  const Result exact = run("gemm --scheme dgemm-tc --m 8 --n 8 --k 8 --phi 3 --reference exact");
  const auto report = [](const std::string& output) { return output.substr(output.find("phi 3")); };
  EXPECT_EQ(mpfr.status, 0) << mpfr.output;
  EXPECT_EQ(exact.status, 0) << exact.output;
  EXPECT_NE(mpfr.output.find("phi 3: against the correctly rounded A B"), std::string::npos)
      << mpfr.output;
  EXPECT_EQ(report(mpfr.output), report(exact.output));
  const Result bad = run("gemm --scheme dgemm-tc --m 8 --n 8 --k 8 --reference exactly");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("--reference must be mpfr, exact or none, got 'exactly'"),
            std::string::npos)
      << bad.output;
}

TEST(Cli, GemmReferenceOnMatrixFiles) {
  // [1 2; 3 4] [5 6; 7 8] = [19 22; 43 50]: the output file is written with or without a report.
  const TempFile a("tcemu_ref_a",
                   "2 2\n3ff0000000000000 4000000000000000\n"
                   "4008000000000000 4010000000000000\n");
  const TempFile b("tcemu_ref_b",
                   "2 2\n4014000000000000 4018000000000000\n"
                   "401c000000000000 4020000000000000\n");
  const std::string product =
      "2 2\n4033000000000000 4036000000000000\n"
      "4045800000000000 4049000000000000\n";
  const std::string files =
      "gemm --scheme dgemm-tc --a " + a.path.string() + " --b " + b.path.string() + " --out ";
  for (const char* reference : {"", " --reference none", " --reference exact"}) {
    const TempFile out("tcemu_ref_out");
    const Result r = run(files + out.path.string() + reference);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(out.slurp(), product) << reference;
    const bool report = std::string(reference) == " --reference exact";
    EXPECT_EQ(r.output.find("against the correctly rounded A B: max relative error 0, elements "
                            "not correctly rounded 0 of 4") != std::string::npos,
              report)
        << reference << ": " << r.output;
  }
  const TempFile out("tcemu_ref_out");
  const Result beta =
      run(files + out.path.string() + " --reference mpfr --c " + a.path.string() + " --beta 1");
  EXPECT_EQ(beta.status, 2) << beta.output;
  EXPECT_NE(beta.output.find("--reference mpfr needs --beta 0"), std::string::npos) << beta.output;
}

// Progress goes to stderr: a line per 10% when stderr is not a terminal, for the scheme's slice
// products and for the reference; nothing with --progress never or in a short run by default.
TEST(Cli, GemmProgressLinesOnStderr) {
  // One thread: the reference goes in 10 blocks of 4 columns.
  const std::string gemm =
      std::string(TCEMU_CLI) + " gemm --scheme dgemm-tc --m 40 --n 40 --k 40 --threads 1";
  const Result always = shell(gemm + " --progress always 2>&1 >/dev/null");
  EXPECT_EQ(always.status, 0) << always.output;
  std::string expected;
  for (const char* phase : {"dgemm-tc", "MPFR reference"}) {
    for (int percent = 0; percent <= 100; percent += 10) {
      if (percent == 0 && std::string(phase) == "MPFR reference") continue;
      expected += std::string(phase) + ": " + std::to_string(percent) + "%\n";
    }
  }
  EXPECT_EQ(always.output, expected);
  for (const char* quiet : {" --progress never", ""}) {
    const Result r = shell(gemm + quiet + " 2>&1 >/dev/null");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output, "") << quiet;
  }
  const Result bad = run("gemm --scheme dgemm-tc --progress sometimes");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("--progress must be auto, always or never"), std::string::npos)
      << bad.output;
}
}  // namespace

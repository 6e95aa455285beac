// What the commands refuse rather than ignore or echo: a field or option nothing reads, a value
// that cannot mean anything, a missing option value, and binary input quoted in a message.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_runner.hpp"

namespace {

using tcemu::test::Result;
using tcemu::test::run;
using tcemu::test::TempFile;

bool contains(const Result& r, const std::string& text) {
  return r.output.find(text) != std::string::npos;
}

// tcemu mma computes d: a recorded d after c (the 7th field of a K = 2 line) is refused, naming
// the file and line, in every kind of case line (it was ignored).
TEST(Refusals, MmaRefusesARecordedD) {
  const TempFile dense("rd_dense", "# K = 2\n2 3c00 3c00 4000 4000 3f800000 40a00000\n");
  Result r = run("mma " + dense.path.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(r.output, "tcemu mma: " + dense.path.string() +
                          ": line 2: K = 2 takes 6 fields; field 7, a recorded d, is for tcemu "
                          "validate\n");
  r = run("mma --type s8 --acc s32", "1 01 01 00000000 00000001\n");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r, "<stdin>: line 1: K = 1 takes 4 fields; field 5, a recorded d"))
      << r.output;
  std::string sparse = "16 3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00 01230123";
  for (int i = 0; i < 16; ++i) sparse += " 3c00";
  r = run("mma --instr mma.sp.m16n8k16", sparse + " 00000000 41000000\n");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r, "line 1: K = 16 takes 27 fields; field 28, a recorded d")) << r.output;
  // The same lines without d are evaluated.
  EXPECT_EQ(run("mma", "2 3c00 3c00 4000 4000 3f800000\n").output, "40a00000\n");
  EXPECT_EQ(run("mma --instr mma.sp.m16n8k16", sparse + " 00000000\n").output, "41000000\n");
}

// An option that takes a value, followed by another option, lacks its value: it does not take
// the next option as its value ("--type: unknown format '--acc'").
TEST(Refusals, AMissingOptionValueIsNamed) {
  for (const std::string arguments :
       {"mma --type --acc fp32", "mma --type", "validate --show --allow-empty x",
        "matmul --a --b B --out D", "gemm --scheme --help"}) {
    const Result r = run(arguments);
    const std::string option = arguments.substr(
        arguments.find("--"), arguments.find(' ', arguments.find("--")) - arguments.find("--"));
    EXPECT_EQ(r.status, 2) << arguments << ": " << r.output;
    EXPECT_TRUE(contains(r, ": " + option + " needs a value\n")) << arguments << ": " << r.output;
  }
  // A value that merely starts with "--" and names no option is a value.
  const Result r = run("mma --type --fp16");
  EXPECT_TRUE(contains(r, "unknown format '--fp16'")) << r.output;
}

// Control bytes and bytes above 0x7e from a command line or a file are escaped in messages, and a
// long word is cut with its length (they were echoed raw, whole).
TEST(Refusals, BinaryInputIsEscapedAndCutInMessages) {
  Result r = run(std::string("mma --type '\x1b[31mred\xff'"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r, "--type: unknown format '\\x1b[31mred\\xff'")) << r.output;
  r = run("mma", "1 3c" + std::string(3000, 'z') + " 3c00 3f800000\n");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(
      r, "a_0 '3c" + std::string(98, 'z') + "... (3002 bytes)' must be 4 hex digits (fp16)\n"))
      << r.output;
  r = run("gemm --scheme dgemm-tc --progress \"$(printf '\\001\\200')\"");
  EXPECT_TRUE(contains(r, "got '\\x01\\x80'")) << r.output;
}

// tcemu gemm: --splits and --moduli only in tunable mode, the mode that reads them (as the
// LD_PRELOAD libraries' TCEMU_PRELOAD_SPLITS), and only there required; --phi finite and >= 0;
// the options of generated inputs not with matrix files. Each was ignored or ran on NaNs.
TEST(Refusals, GemmOptionsNothingReads) {
  const std::string gemm = "gemm --m 8 --n 8 --k 8 --scheme ";
  const auto refused = [](const std::string& arguments, const std::string& message) {
    const Result r = run(arguments);
    EXPECT_EQ(r.status, 2) << arguments << ": " << r.output;
    EXPECT_TRUE(contains(r, "tcemu gemm: " + message + "\n")) << arguments << ": " << r.output;
  };
  refused(gemm + "dgemm-tc --splits 3", "--splits 3 is not used outside --mode tunable");
  refused(gemm + "sgemm-tc --mode cr --splits 3", "--splits 3 is not used outside --mode tunable");
  refused(gemm + "dgemm-crt --moduli 20", "--moduli 20 is not used outside --mode tunable");
  refused(gemm + "dgemm-tc --mode tunable",
          "--splits is missing: an integer in [1, 1000], which --mode tunable needs");
  refused(gemm + "dgemm-tc --mode tunable --splits 0",
          "--splits 0 is not an integer in [1, 1000], which --mode tunable needs");
  EXPECT_EQ(run(gemm + "dgemm-tc --mode tunable --splits 3").status, 0);
  // --rounding: a known direction, in mode cr, for C := A B, against MPFR's reference.
  refused(gemm + "dgemm-crt --mode cr --rounding up",
          "--rounding must be nearest, upward, downward or toward-zero, got 'up'");
  refused(gemm + "dgemm-crt --rounding upward",
          "--rounding upward needs --mode cr and C := A B (--alpha 1, --beta 0)");
  refused(gemm + "dgemm-tc --mode cr --rounding downward --alpha 2",
          "--rounding downward needs --mode cr and C := A B (--alpha 1, --beta 0)");
  refused(gemm + "dgemm-int8 --mode cr --rounding upward --reference exact",
          "--reference exact rounds to nearest only: use --reference mpfr with --rounding");
  EXPECT_EQ(run(gemm + "sgemm-tc --mode tunable --splits 2 --rounding upward").status, 2);
  for (const std::string phi : {"nan", "inf", "-inf", "-1"}) {
    refused(gemm + "dgemm-tc --phi " + phi, "--phi must be a finite number >= 0, got " + phi);
  }
  const TempFile b("rg_b", "1 1\n3ff0000000000000\n"), out("rg_out");
  refused("gemm --scheme dgemm-tc --a " + b.path.string() + " --b " + b.path.string() + " --out " +
              out.path.string() + " --phi 2",
          "--phi is for generated inputs, not with --a and --b");
}

// gemm and detect, as validate, exit 2 for an input error and say so in --help.
TEST(Refusals, GemmAndDetectExit2ForInputErrors) {
  const TempFile bad("rx_bad", "1 1\nzz\n"), out("rx_out");
  Result r = run("gemm --scheme dgemm-tc --a " + bad.path.string() + " --b " + bad.path.string() +
                 " --out " + out.path.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r, bad.path.string() + ":2: column 1")) << r.output;
  r = run("detect --type fp16 --acc fp32 --from " + bad.path.string());
  EXPECT_EQ(r.status, 2) << r.output;
  r = run("detect --type fp16 --acc fp32 --from /nonexistent/cases.txt");
  EXPECT_EQ(r.status, 2) << r.output;
  for (const std::string command : {"gemm", "detect", "matmul", "mma"}) {
    r = run(command + " --help");
    EXPECT_TRUE(contains(r, "Exit status:")) << command;
    EXPECT_TRUE(contains(r, "2 a usage or input error")) << command;
  }
}

}  // namespace

// The Blackwell probe names refuse every GPU but the one they need, naming it, with status 1 (as
// probe's other refusals): here no GPU ("no CUDA device (...); NAME needs an sm_100a GPU"), on a
// GPU without them "NAME needs an sm_100a GPU (...); this is NVIDIA H200 (compute capability
// 9.0)", or a build without the CUDA backend. They never launch a kernel there.
TEST(Refusals, BlackwellProbeNamesNameTheGpuTheyNeed) {
  const struct {
    const char* instr;
    const char* needs;
  } names[] = {
      {"tcgen05", "needs an sm_100a GPU (B200, GB200; compute capability 10.0)"},
      {"tcgen05.mxf8f6f4.block32", "needs an sm_100a GPU"},
      {"tcgen05.mxf4.block32", "needs an sm_100a GPU"},
      {"tcgen05.mxf4nvf4.block32", "needs an sm_100a GPU"},
      {"tcgen05.mxf4nvf4.block16.ue8m0", "needs an sm_100a GPU"},
      {"tcgen05.mxf4nvf4.block16.ue4m3", "needs an sm_100a GPU"},
      {"mma.sync.m16n8k32.mxf8f6f4.block32",
       "needs an sm_120a GPU (RTX 50, RTX PRO 6000 Blackwell; compute capability 12.0)"},
      {"mma.sync.m16n8k64.mxf4.block32", "needs an sm_120a GPU"},
      {"mma.sync.m16n8k64.mxf4nvf4.block32", "needs an sm_120a GPU"},
      {"mma.sync.m16n8k64.mxf4nvf4.block16.ue8m0", "needs an sm_120a GPU"},
      {"mma.sync.m16n8k64.mxf4nvf4.block16.ue4m3", "needs an sm_120a GPU"},
  };
  // The refusal comes before the output folder is made.
  const TempFile dir("blackwell_probe_dir", "");
  const std::string commands[] = {"probe --out-dir " + dir.path.string(), "detect"};
  for (const auto& [instr, needs] : names) {
    for (const std::string& command : commands) {
      const Result r = run(command + " --instr " + instr + " --random 10");
      EXPECT_EQ(r.status, 1) << command << " " << instr << ": " << r.output;
      if (contains(r, "built without the CUDA backend")) continue;
      EXPECT_TRUE(contains(r, std::string(instr) + " " + needs)) << instr << ": " << r.output;
      EXPECT_TRUE(contains(r, "no CUDA device (") || contains(r, "; this is "))
          << instr << ": " << r.output;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path));
}

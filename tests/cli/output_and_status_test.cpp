// What the tcemu command says about its outputs and inputs: a write that fails (a full device, a
// file size limit) is an error naming the output, never a silent success; an input without cases
// is an error unless --allow-empty; a line longer than any valid one, or a read error, is an input
// error, never a grown process or an early end; tcemu validate's exit status tells results that
// differ (1) from a usage or input error (2), which is exit 2 in every command.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace {

using tcemu::test::Result;
using tcemu::test::run;
using tcemu::test::shell;
using tcemu::test::TempFile;

const std::string kCli = TCEMU_CLI;

// One fp16 -> fp32 case with its result: 1 * 2 + 1 * 2 + 1 = 5.
const std::string kCase = "2 3c00 3c00 4000 4000 3f800000 40a00000\n";

// `tcemu ARGUMENTS` with standard output to /dev/full; the result holds its standard error.
Result to_full_device(const std::string& arguments) {
  return shell(kCli + " " + arguments + " 2>&1 >/dev/full");
}

bool contains(const Result& r, const std::string& text) {
  return r.output.find(text) != std::string::npos;
}

// A rows x cols hex text matrix of fp16 ones.
std::string ones(int rows, int cols) {
  std::string text = std::to_string(rows) + " " + std::to_string(cols) + "\n";
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) text += j == 0 ? "3c00" : " 3c00";
    text += '\n';
  }
  return text;
}

TEST(CliOutput, AFullDeviceIsAnErrorNamingTheOutput) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "this system has no /dev/full";
  const TempFile a("wf_a", ones(2, 2)), b("wf_b", ones(2, 3));
  const TempFile dgemm_b("wf_dgemm_b", "1 1\n3ff0000000000000\n");
  const TempFile cases("wf_cases", kCase);
  const TempFile mma_cases("wf_mma_cases", kCase.substr(0, kCase.rfind(' ')) + "\n");  // no d
  // Files the command writes.
  const Result matmul = run("matmul --arch sm90 --a " + a.path.string() + " --b " +
                            b.path.string() + " --out /dev/full");
  EXPECT_EQ(matmul.status, 1) << matmul.output;
  EXPECT_TRUE(contains(matmul, "tcemu matmul: error writing /dev/full")) << matmul.output;
  const Result gemm = run("gemm --scheme dgemm-tc --a " + dgemm_b.path.string() + " --b " +
                          dgemm_b.path.string() + " --out /dev/full");
  EXPECT_EQ(gemm.status, 1) << gemm.output;
  EXPECT_TRUE(contains(gemm, "tcemu gemm: error writing /dev/full")) << gemm.output;
  // Standard output, whatever the command and however little it writes.
  for (const std::string& arguments : std::vector<std::string>{
           "mma " + mma_cases.path.string(), "validate " + cases.path.string(), "explain twosum",
           "presets", "presets --arch sm90", "validate --help", "--help"}) {
    const Result r = to_full_device(arguments);
    // validate's 1 says that results differ: an output error is its 2.
    EXPECT_EQ(r.status, arguments.starts_with("validate") ? 2 : 1) << arguments << ": " << r.output;
    const std::string command =
        arguments.starts_with("--") ? "" : " " + arguments.substr(0, arguments.find(' '));
    EXPECT_TRUE(contains(r, "tcemu" + command + ": error writing standard output"))
        << arguments << ": " << r.output;
  }
}

// A file that could not be written whole (here: past the file size limit, SIGXFSZ ignored) is
// removed, not left truncated.
TEST(CliOutput, APartialOutputFileIsRemoved) {
  const TempFile a("pf_a", ones(32, 32)), out("pf_out.txt");
  const Result r =
      shell("trap '' XFSZ; ulimit -f 1; " + kCli + " matmul --arch sm90 --a " + a.path.string() +
            " --b " + a.path.string() + " --out " + out.path.string() + " 2>&1");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r, "tcemu matmul: error writing " + out.path.string() + ": File too large"))
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(out.path)) << out.slurp().size() << " bytes left";
}

// A case file without cases (empty, or only comments) checks nothing: an error naming it unless
// --allow-empty, for validate (float, sparse, pair-FMA and integer cases) and mma.
TEST(Validate, AnInputWithoutCasesIsAnErrorUnlessAllowed) {
  const TempFile comments("ne_comments", "# tcemu probe: nothing recorded\n\n# more\n");
  for (const std::string& file : {std::string("/dev/null"), comments.path.string()}) {
    for (const std::string& options :
         {std::string("--arch sm90"), std::string("--instr mma.sp.m16n8k16"),
          std::string("--instr mma.sync.m8n8k4 --type fp16 --acc fp16"),
          std::string("--type s8 --acc s32")}) {
      const Result r = run("validate " + options + " " + file);
      EXPECT_EQ(r.status, 2) << options << " " << file << ": " << r.output;
      EXPECT_TRUE(contains(r, "tcemu validate: " + file + ": no cases (--allow-empty"))
          << options << " " << file << ": " << r.output;
      const Result allowed = run("validate --allow-empty " + options + " " + file);
      EXPECT_EQ(allowed.status, 0) << options << " " << file << ": " << allowed.output;
      EXPECT_TRUE(contains(allowed, file + ": 0 cases, 0 mismatches")) << allowed.output;
    }
    for (const std::string& options :
         {std::string("--arch sm90"), std::string("--type s8 --acc s32")}) {
      const Result mma = run("mma " + options + " " + file);
      EXPECT_EQ(mma.status, 2) << options << " " << file << ": " << mma.output;
      EXPECT_EQ(mma.output,
                "tcemu mma: " + file + ": no cases (--allow-empty accepts an input without any)\n");
      const Result allowed = run("mma --allow-empty " + options + " " + file);
      EXPECT_EQ(allowed.status, 0) << allowed.output;
      EXPECT_EQ(allowed.output, "");
    }
  }
  const Result from_stdin = run("mma", "# nothing\n");
  EXPECT_EQ(from_stdin.status, 2) << from_stdin.output;
  EXPECT_TRUE(contains(from_stdin, "tcemu mma: <stdin>: no cases")) << from_stdin.output;
}

// tcemu captures on a directory without capture sets replays nothing: an input error.
TEST(Validate, CapturesOfAnEmptyDirectoryAreAnError) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tcemu_no_captures_" + std::to_string(::getpid()));
  std::filesystem::create_directory(dir);
  const Result r = run("captures " + dir.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(r.output, "tcemu captures: " + dir.string() +
                          ": no cases (--allow-empty accepts an input without any)\n");
  const Result allowed = run("captures --allow-empty " + dir.string());
  EXPECT_EQ(allowed.status, 0) << allowed.output;
  EXPECT_TRUE(contains(allowed, "0 mismatches in 0 cases.")) << allowed.output;
  std::filesystem::remove(dir);
}

// 0: equal, 1: results differ, 2: usage or input error, with messages naming the file or option.
TEST(Validate, ExitStatusTellsDifferencesFromInputErrors) {
  const TempFile equal("vs_equal", kCase),
      differs("vs_differs", "2 3c00 3c00 4000 4000 3f800000 40a00001\n");
  const TempFile malformed("vs_malformed", "2 3c00 3c00 4000\n");
  EXPECT_EQ(run("validate " + equal.path.string()).status, 0);
  EXPECT_EQ(run("validate " + differs.path.string()).status, 1);
  for (const std::string& arguments : std::vector<std::string>{
           "validate /nonexistent/cases.txt", "validate " + malformed.path.string(),
           "validate --frobnicate " + equal.path.string(),
           "validate --type fp7 " + equal.path.string(), "validate"}) {
    const Result r = run(arguments);
    EXPECT_EQ(r.status, 2) << arguments << ": " << r.output;
  }
  // Whole matrices: A 2 x 2, B 2 x 3, D must be 2 x 3 fp32.
  const TempFile a("vs_a", ones(2, 2)), b("vs_b", ones(2, 3));
  const TempFile d("vs_d", "2 3\n40000000 40000000 40000000\n40000000 40000000 40000000\n");
  const TempFile d_off("vs_d_off", "2 3\n40000000 40000000 40000000\n40000000 40000000 40000001\n");
  const TempFile d_shape("vs_d_shape", "2 2\n40000000 40000000\n40000000 40000000\n");
  const TempFile d_type("vs_d_type", "2 3\n4000 4000 4000\n4000 4000 4000\n");
  const std::string operands = "validate --arch sm90 --a " + a.path.string() + " --b ";
  EXPECT_EQ(run(operands + b.path.string() + " --d " + d.path.string()).status, 0);
  EXPECT_EQ(run(operands + b.path.string() + " --d " + d_off.path.string()).status, 1);
  const Result shape = run(operands + b.path.string() + " --d " + d_shape.path.string());
  EXPECT_EQ(shape.status, 2) << shape.output;
  EXPECT_TRUE(contains(shape, "tcemu validate: --d " + d_shape.path.string() +
                                  " is 2 x 2, expected 2 x 3 (the rows of --a and the columns "
                                  "of --b)\n"))
      << shape.output;
  EXPECT_FALSE(contains(shape, "emulated_gemm")) << shape.output;
  EXPECT_EQ(run(operands + d_shape.path.string() + " --d " + d.path.string()).status, 2);
  const Result inner = run("validate --arch sm90 --a " + b.path.string() + " --b " +
                           b.path.string() + " --d " + d.path.string());
  EXPECT_EQ(inner.status, 2) << inner.output;
  EXPECT_TRUE(contains(inner, "tcemu validate: --b " + b.path.string() +
                                  " is 2 x 3, expected 3 rows (the columns of --a)\n"))
      << inner.output;
  EXPECT_FALSE(contains(inner, "emulated_gemm")) << inner.output;
  const Result c_shape = run(operands + b.path.string() + " --c " + d_shape.path.string() +
                             " --beta 1 --d " + d.path.string());
  EXPECT_EQ(c_shape.status, 2) << c_shape.output;
  EXPECT_TRUE(contains(c_shape, "tcemu validate: --c " + d_shape.path.string() +
                                    " is 2 x 2, expected 2 x 3 (the rows of --a and the columns "
                                    "of --b)\n"))
      << c_shape.output;
  const Result type = run(operands + b.path.string() + " --d " + d_type.path.string());
  EXPECT_EQ(type.status, 2) << type.output;
  EXPECT_EQ(run(operands + b.path.string() + " --d /nonexistent/D.npy").status, 2);
  // --help says so.
  const Result help = run("validate --help");
  EXPECT_TRUE(contains(help, "Exit status: 0 every case or element is equal; 1 some differ"))
      << help.output;
  EXPECT_TRUE(contains(help, "2 a usage, input or output error")) << help.output;
}

// An input without a newline (/dev/zero) is refused at its first line, under an address-space
// limit it would otherwise exhaust (it was read whole, and the failed allocation taken for the end
// of the input: "0 cases"); a read error (/proc/self/mem at offset 0: EIO) is an error too.
TEST(CliInput, EveryTextInputIsReadWithABoundedLine) {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer reserves its shadow memory beyond any such limit: the sanitizer build runs
  // without it, and the timeout alone catches an unbounded read.
  const std::string limit;
#else
  const std::string limit = "ulimit -v 1000000; ";
#endif
  const TempFile b("bl_b", "1 1\n3ff0000000000000\n"), out("bl_out");
  const std::string too_long =
      "/dev/zero:1: line longer than 1048576 bytes (the longest a line may be); not read further";
  for (const std::string& arguments :
       {std::string("mma /dev/zero"), std::string("mma --type s8 /dev/zero"),
        std::string("mma --instr mma.sp.m16n8k16 /dev/zero"), std::string("validate /dev/zero"),
        std::string("validate --type s8 /dev/zero"),
        std::string("validate --instr mma.sp.m16n8k16 /dev/zero"),
        std::string("detect --type fp16 --acc fp32 --from /dev/zero"),
        "matmul --a /dev/zero --b " + b.path.string() + " --out " + out.path.string(),
        "gemm --scheme dgemm-tc --a /dev/zero --b " + b.path.string() + " --out " +
            out.path.string()}) {
    const Result r = shell(limit + "timeout 60 " + kCli + " " + arguments + " 2>&1");
    EXPECT_EQ(r.status, 2) << arguments << ": " << r.output;
    EXPECT_TRUE(contains(r, too_long)) << arguments << ": " << r.output;
  }
  if (::access("/proc/self/mem", R_OK) != 0) GTEST_SKIP() << "no /proc/self/mem to fail a read";
  for (const std::string arguments : {"mma /proc/self/mem", "validate /proc/self/mem"}) {
    const Result r = shell(kCli + " " + arguments + " 2>&1");
    EXPECT_EQ(r.status, 2) << arguments << ": " << r.output;
    EXPECT_TRUE(contains(r, "/proc/self/mem: read error after line 0")) << r.output;
  }
}

// A matrix row may be as long as its columns need, and no longer than that by more than the
// bound: a 1 x 3 matrix of a 3 MB row is refused at that row.
TEST(CliInput, AMatrixRowIsBoundedByItsColumns) {
  const TempFile a("br_a", "1 3\n" + std::string(3000000, '1') + "\n"), b("br_b", ones(3, 1));
  const TempFile out("br_out");
  const Result r = run("matmul --a " + a.path.string() + " --b " + b.path.string() + " --out " +
                       out.path.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r, a.path.string() + ":2: line longer than 1048591 bytes")) << r.output;
  // A row of 300000 columns (1.5 MB, over the bound of other lines) is read.
  std::string wide = "1 300000\n";
  for (int j = 0; j < 300000; ++j) wide += j == 0 ? "3c00" : " 3c00";
  const TempFile wide_a("br_wide_a", wide + "\n"), wide_b("br_wide_b", ones(300000, 1));
  const Result ok = run("matmul --a " + wide_a.path.string() + " --b " + wide_b.path.string() +
                        " --out " + out.path.string());
  EXPECT_EQ(ok.status, 0) << ok.output;
}

}  // namespace

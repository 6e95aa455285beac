// `tcemu matmul` and `tcemu validate --d` on whole matrices, in hex text and .npy files.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/format.hpp>

#include "cli_runner.hpp"

namespace {

using tcemu::test::Result;
using tcemu::test::run;
using tcemu::test::TempFile;

std::string hex(std::uint32_t bits, int digits) {
  char text[16];
  std::snprintf(text, sizeof text, "%0*x", digits, bits);
  return text;
}

// A rows x cols text matrix of the given bit patterns (row major).
std::string text_matrix(int rows, int cols, const std::vector<std::uint32_t>& bits, int digits) {
  std::string s = std::to_string(rows) + " " + std::to_string(cols) + "\n";
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) s += (j ? " " : "") + hex(bits[i * cols + j], digits);
    s += '\n';
  }
  return s;
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

std::string little_endian(const std::vector<std::uint32_t>& bits, int bytes) {
  std::string s;
  for (const std::uint32_t v : bits) {
    for (int b = 0; b < bytes; ++b) s += static_cast<char>((v >> (8 * b)) & 0xff);
  }
  return s;
}

void write_binary(const TempFile& f, const std::string& bytes) {
  std::ofstream(f.path, std::ios::binary) << bytes;
}

std::vector<std::uint32_t> random_fp16(int count, std::mt19937& rng) {
  std::uniform_int_distribution<std::uint32_t> exponent(10, 20), fraction(0, 1023), sign(0, 1);
  std::vector<std::uint32_t> v(count);
  for (auto& x : v) x = sign(rng) << 15 | exponent(rng) << 10 | fraction(rng);
  return v;
}

// The d's of a text matrix file, row major.
std::vector<std::string> elements(const std::string& text) {
  std::istringstream in(text);
  std::string word;
  std::vector<std::string> words;
  in >> word >> word;  // ROWS COLS
  while (in >> word) words.push_back(word);
  return words;
}

// Every element of `tcemu matmul` is the `tcemu mma` chain of its row of A and column of B:
// from +0 with C in the epilogue (beta 0), from C with --c-input initial. sm70 (blocks of 4,
// truncated), K = 37 with a partial last instruction.
TEST(Matmul, EveryElementIsTheMmaChainOfItsRowAndColumn) {
  const int m = 5, n = 4, k = 37;
  std::mt19937 rng(3);
  const auto a = random_fp16(m * k, rng), b = random_fp16(k * n, rng);
  std::vector<std::uint32_t> c(m * n);
  std::uniform_int_distribution<std::uint32_t> any(0, 0x3fffffff);
  for (auto& x : c) x = any(rng);  // positive fp32 values below 2
  const TempFile fa("mm_a", text_matrix(m, k, a, 4)), fb("mm_b", text_matrix(k, n, b, 4)),
      fc("mm_c", text_matrix(m, n, c, 8)), out("mm_d");
  for (const bool initial : {false, true}) {
    const Result r =
        run("matmul --arch sm70 --a " + fa.path.string() + " --b " + fb.path.string() + " --out " +
            out.path.string() + (initial ? " --c " + fc.path.string() + " --c-input initial" : ""));
    ASSERT_EQ(r.status, 0) << r.output;
    const auto d = elements(out.slurp());
    ASSERT_EQ(d.size(), static_cast<std::size_t>(m * n));
    std::string cases;
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        tcemu::MmaCase e;
        for (int p = 0; p < k; ++p) {
          e.a.push_back(a[i * k + p]);
          e.b.push_back(b[p * n + j]);
        }
        e.c = initial ? c[i * n + j] : 0;
        cases += tcemu::format_case_line(e, tcemu::formats::fp16, tcemu::formats::fp32) + '\n';
      }
    }
    const Result chains = run("mma --arch sm70", cases);
    ASSERT_EQ(chains.status, 0) << chains.output;
    EXPECT_EQ(elements("0 0\n" + chains.output), d) << (initial ? "initial" : "epilogue");
  }
}

// The same product from text, C-order .npy, Fortran-order .npy and uint16 bit patterns (with
// --type); D as
// .npy is float32, row major, with the text result's bits.
TEST(Matmul, NpyFilesInEveryOrderGiveTheTextFilesBits) {
  const int m = 3, k = 20, n = 2;
  std::mt19937 rng(5);
  const auto a = random_fp16(m * k, rng), b = random_fp16(k * n, rng);
  std::vector<std::uint32_t> b_column_major(k * n);
  for (int p = 0; p < k; ++p) {
    for (int j = 0; j < n; ++j) b_column_major[j * k + p] = b[p * n + j];
  }
  const TempFile ta("np_ta", text_matrix(m, k, a, 4)), tb("np_tb", text_matrix(k, n, b, 4));
  const TempFile na("np_a.npy"), nb("np_b.npy"), nbf("np_bf.npy"), nbu("np_bu.npy");
  write_binary(
      na, npy("{'descr': '<f2', 'fortran_order': False, 'shape': (3, 20), }", little_endian(a, 2)));
  write_binary(
      nb, npy("{'descr': '<f2', 'fortran_order': False, 'shape': (20, 2), }", little_endian(b, 2)));
  write_binary(nbf, npy("{'descr': '<f2', 'fortran_order': True, 'shape': (20, 2), }",
                        little_endian(b_column_major, 2)));
  write_binary(nbu, npy("{'descr': '<u2', 'fortran_order': False, 'shape': (20, 2), }",
                        little_endian(b, 2)));
  const TempFile text_out("np_d"), npy_out("np_d.npy");
  ASSERT_EQ(run("matmul --a " + ta.path.string() + " --b " + tb.path.string() + " --out " +
                text_out.path.string())
                .status,
            0);
  const auto expected = elements(text_out.slurp());
  std::vector<std::uint32_t> expected_bits;
  for (const auto& e : expected)
    expected_bits.push_back(static_cast<std::uint32_t>(std::stoul(e, nullptr, 16)));
  const std::string expected_npy =
      npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }",
          little_endian(expected_bits, 4));
  for (const TempFile* b_file : {&nb, &nbf, &nbu}) {
    // uint16 bit patterns say no format: --type gives it.
    const Result r =
        run("matmul --a " + na.path.string() + " --b " + b_file->path.string() +
            (b_file == &nbu ? " --type fp16" : "") + " --out " + npy_out.path.string());
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(npy_out.slurp(), expected_npy) << b_file->path;
  }
}

// A recorded D with planted differences: validate names each (row, column), its distance in
// ulps, the histogram, and exits 1; the unchanged D passes with exit 0.
TEST(ValidateMatrices, ReportsPlantedDifferencesWithTheirPlaceAndDistance) {
  const int m = 4, k = 8, n = 3;
  std::mt19937 rng(11);
  const auto a = random_fp16(m * k, rng), b = random_fp16(k * n, rng);
  const TempFile fa("va_a", text_matrix(m, k, a, 4)), fb("va_b", text_matrix(k, n, b, 4)),
      d("va_d");
  const std::string operands = " --a " + fa.path.string() + " --b " + fb.path.string();
  ASSERT_EQ(run("matmul" + operands + " --out " + d.path.string()).status, 0);
  const Result same = run("validate" + operands + " --d " + d.path.string());
  EXPECT_EQ(same.status, 0) << same.output;
  EXPECT_NE(same.output.find("0 of 12 elements (4 x 3, fp32) differ"), std::string::npos)
      << same.output;
  auto bits = elements(d.slurp());
  std::vector<std::uint32_t> planted;
  for (const auto& e : bits)
    planted.push_back(static_cast<std::uint32_t>(std::stoul(e, nullptr, 16)));
  const std::uint32_t expected_12 = planted[1 * n + 2];
  planted[1 * n + 2] += 3;           // (1, 2): 3 ulps
  planted[3 * n + 0] ^= 0x80000000;  // (3, 0): the sign
  const TempFile recorded("va_recorded", text_matrix(m, n, planted, 8));
  const Result r = run("validate" + operands + " --d " + recorded.path.string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("2 of 12 elements (4 x 3, fp32) differ (16.7%)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("ulps 2-3: 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(1, 2): expected 0x" + hex(expected_12, 8)), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("3 ulps\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(3, 0): expected"), std::string::npos) << r.output;
  // K = 8: each listed element carries its case line.
  EXPECT_NE(r.output.find("case line: 8 "), std::string::npos) << r.output;
  const Result mixed = run("validate" + operands + " --d " + d.path.string() + " cases.txt");
  EXPECT_EQ(mixed.status, 2) << mixed.output;
  const Result needs_d = run("validate --a " + fa.path.string() + " cases.txt");
  EXPECT_EQ(needs_d.status, 2) << needs_d.output;
  EXPECT_NE(needs_d.output.find("--a needs --d"), std::string::npos) << needs_d.output;
}

// Damaged or unfit .npy files are refused with the file and what is wrong, before any
// allocation the file's size does not back.
TEST(Matmul, NpyErrorsNameTheFileAndTheProblem) {
  const TempFile b("ne_b", "1 1\n3c00\n"), out("ne_out");
  const auto error_of = [&](const std::string& bytes) {
    const TempFile a("ne_a.npy");
    write_binary(a, bytes);
    const Result r = run("matmul --a " + a.path.string() + " --b " + b.path.string() + " --out " +
                         out.path.string());
    EXPECT_EQ(r.status, 2) << r.output;
    const auto at = r.output.find(a.path.string() + ": ");
    return at == std::string::npos ? r.output : r.output.substr(at + a.path.string().size() + 2);
  };
  const std::string one = little_endian({0x3c00}, 2);
  const auto dict = [](const std::string& descr, const std::string& shape) {
    return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  };
  EXPECT_EQ(error_of("PK\x03\x04 not npy"), "not a .npy file (no \\x93NUMPY magic)\n");
  EXPECT_EQ(error_of(npy(dict("<f2", "(1, 1, 1)"), one)),
            "the array is 3-D; a matrix file is 2-D\n");
  EXPECT_EQ(error_of(npy(dict("<f4", "(1, 1)"), one + one)),
            "dtype '<f4' cannot hold fp16 elements: 4-byte items, fp16 needs 2 (--type gives the "
            "format; its default is fp16)\n");
  EXPECT_EQ(error_of(npy(dict(">f2", "(1, 1)"), one)),
            "dtype '>f2' cannot hold fp16 elements: big endian; save it as little endian "
            "(astype('<...'))\n");
  EXPECT_EQ(error_of(npy(dict("<f2", "(1000000, 1000000)"), one)),
            "shape (1000000, 1000000) of fp16 needs 2000000000000 data bytes, the file has 2\n");
  EXPECT_EQ(error_of(npy(dict("<f2", "(1, 1)"), one + one)),
            "shape (1, 1) of fp16 needs 2 data bytes, the file has more\n");
  EXPECT_EQ(error_of(npy(dict("<f2", "(4611686018427387904, 4)"), one)),
            "shape (4611686018427387904, 4) overflows a byte count\n");
  EXPECT_NE(error_of(npy("{'descr': '<f2', 'shape': (1, 1), }", one))
                .find(".npy header lacks 'fortran_order'"),
            std::string::npos);
  EXPECT_NE(error_of(npy("{'descr': '<f2', 'fortran_order': Maybe, 'shape': (1, 1), }", one))
                .find("fortran_order is neither True nor False"),
            std::string::npos);
  std::string huge_header = "\x93NUMPY\x02";
  huge_header += std::string("\0\xff\xff\xff\x7f", 5);
  EXPECT_EQ(error_of(huge_header), ".npy header of 2147483647 bytes (at most 65536 expected)\n");
}

// A dtype of bit patterns (ml_dtypes' void items, integers) does not say which format its
// elements are: it is read only as the format the command line gives, and A and B whose dtypes
// name two formats (float16 and ml_dtypes' bfloat16) are refused whatever --type says. (Before,
// bfloat16 arrays were multiplied as fp16 without a word, and int16 arrays taken as fp16.)
TEST(Matmul, NpyBitPatternsNeedTheFormatGiven) {
  // bf16 1, 2, 3, 4 as ml_dtypes saves them ('<V2'); the same product from hex text.
  const std::vector<std::uint32_t> bf16 = {0x3f80, 0x4000, 0x4040, 0x4080};
  const auto dict = [](const std::string& descr) {
    return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2, 2), }";
  };
  const TempFile va("bp_va.npy"), vb("bp_vb.npy"), fb("bp_fb.npy"), ia("bp_ia.npy");
  const TempFile ta("bp_ta", text_matrix(2, 2, bf16, 4)), out("bp_out"), text_out("bp_text_out");
  write_binary(va, npy(dict("<V2"), little_endian(bf16, 2)));
  write_binary(vb, npy(dict("<V2"), little_endian(bf16, 2)));
  write_binary(fb, npy(dict("<f2"), little_endian({0x3c00, 0x4000, 0x4200, 0x4400}, 2)));
  write_binary(ia, npy(dict("<i2"), little_endian(bf16, 2)));
  const auto matmul = [&](const std::string& arguments) {
    return run("matmul " + arguments + " --out " + out.path.string());
  };
  const std::string va_path = va.path.string(), vb_path = vb.path.string();
  Result r = matmul("--a " + va_path + " --b " + vb_path);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(r.output, "tcemu matmul: " + va_path +
                          ": dtype '<V2' (2-byte void items, as ml_dtypes saves bfloat16) does "
                          "not say which format its elements are; give it with --type (the "
                          "default fp16 is taken only from NumPy's float16)\n");
  r = matmul("--a " + ia.path.string() + " --b " + vb_path);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("dtype '<i2' (int16 bit patterns) does not say which format"),
            std::string::npos)
      << r.output;
  // Given, the bits are those of the same bf16 matrices as hex text.
  ASSERT_EQ(run("matmul --type bf16 --a " + ta.path.string() + " --b " + ta.path.string() +
                " --out " + text_out.path.string())
                .status,
            0);
  r = matmul("--type bf16 --a " + va_path + " --b " + vb_path);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(out.slurp(), text_out.slurp());
  EXPECT_EQ(text_out.slurp(), "2 2\n40e00000 41200000\n41700000 41b00000\n");
  // bfloat16 A and float16 B: two formats, even where --type names one of them.
  r = matmul("--type fp16 --a " + va_path + " --b " + fb.path.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("tcemu matmul: --a " + va_path +
                          " holds 2-byte void items, as ml_dtypes saves bfloat16, --b " +
                          fb.path.string() +
                          " holds float16: A and B of different formats (the datapath takes one "
                          "input format, fp16)"),
            std::string::npos)
      << r.output;
  // D (and C) in bit patterns need --acc.
  const TempFile fa("bp_fa.npy"), d("bp_d.npy");
  write_binary(fa, npy(dict("<f2"), little_endian({0x3c00, 0x4000, 0x4200, 0x4400}, 2)));
  write_binary(
      d, npy(dict("<u4"), little_endian({0x40e00000, 0x41200000, 0x41700000, 0x41b00000}, 4)));
  const std::string operands =
      " --a " + fa.path.string() + " --b " + fb.path.string() + " --d " + d.path.string();
  r = run("validate" + operands);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("give it with --acc (the default fp32 is taken only from NumPy's "
                          "float32)"),
            std::string::npos)
      << r.output;
  r = run("validate --acc fp32" + operands);
  EXPECT_EQ(r.status, 0) << r.output;
}

}  // namespace

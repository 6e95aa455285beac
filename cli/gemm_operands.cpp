#include "gemm_operands.hpp"

#include <limits>
#include <stdexcept>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/input_error.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/emulator/mma.hpp>

#include "npy_file.hpp"

namespace tcemu::cli {

namespace {

// Throws unless every element of `m` is a bit pattern of `format`: the formats narrower than their
// byte (FP6, FP4, ue4m3) would otherwise be read modulo their width (a packed FP4 byte as its low
// code), a silent wrong number.
void check_codes(const std::string& option, const std::string& path, const BitMatrix& m,
                 const FloatFormat& format) {
  // Only formats narrower than their byte get here (m.type.bits is 8): a code is 2 hex digits.
  const int bits = code_bits(format);
  if (bits >= m.type.bits) return;
  for (std::int64_t i = 0; i < m.rows; ++i) {
    for (std::int64_t j = 0; j < m.cols; ++j) {
      const std::uint64_t code = m.get(i, j);
      if (code >> bits == 0) continue;
      throw InputError(
          "--" + option + " " + path + ": element (" + std::to_string(i) + ", " +
          std::to_string(j) + ") = " + to_hex(formats::ue8m0, static_cast<std::uint32_t>(code)) +
          " is not a code of " + std::string(format.name) + " (" + std::to_string(bits) +
          " bits: at most " + to_hex(format, (std::uint32_t{1} << bits) - 1) + ")" +
          (format == formats::e2m1 ? "; FP4 is read one code per byte, not packed two a byte"
                                   : ""));
    }
  }
}

// The scales of one operand from its file (check_scales).
BitMatrix read_scales(const session::Arguments& args, const std::string& option,
                      const FloatFormat& format, std::int64_t rows, std::int64_t cols,
                      const std::string& why) {
  const std::string path = *args.value(option);
  const BitMatrix m = read_bit_matrix_file(path, element_type(format));
  const bool format_given = args.value("scale-format") ||
                            args.value(option == "scale-a" ? "scale-format-a" : "scale-format-b");
  check_scales(option, path, m, format, format_given, rows, cols, why);
  return m;
}

}  // namespace

void check_scales(const std::string& option, const std::string& path, const BitMatrix& m,
                  const FloatFormat& format, bool format_given, std::int64_t rows,
                  std::int64_t cols, const std::string& why) {
  const std::string format_option = option == "scale-a" ? "scale-format-a" : "scale-format-b";
  if (m.npy_dtype.size() >= 2 && m.npy_dtype[1] == 'V' && !format_given) {
    throw InputError(
        "--" + option + " " + path + ": dtype '" + m.npy_dtype +
        "' (void items, as ml_dtypes saves float8_e8m0fnu and float8_e4m3fn alike) does not say "
        "which format its scales are: save uint8 codes, or give --scale-format " +
        std::string(format.name) + " (or --" + format_option + ")");
  }
  if (m.npy_dtype.size() >= 2 && m.npy_dtype[1] != 'u' && m.npy_dtype[1] != 'V') {
    throw InputError("--" + option + " " + path + ": dtype '" + m.npy_dtype +
                     "' cannot hold scale codes: uint8 (or ml_dtypes' 1-byte void items)");
  }
  check_matrix_shape(option, path, m, rows, cols, why);
  check_codes(option, path, m, format);
}
std::set<std::string> gemm_operand_option_names() {
  return {"a", "b", "c", "alpha", "beta", "c-input", "takeout", "threads", "scale-a", "scale-b"};
}

std::string gemm_operand_options_help() {
  return R"(GEMM operands (matrix files: hex text, or .npy by the name):
  --a FILE --b FILE       A (M x K) and B (K x N) in the input format: hex bit patterns of it,
                          or .npy of its NumPy float (float16; float32 for tf32) or of bit
                          patterns (uint8/uint16/uint32, ml_dtypes' bfloat16 and float8), which
                          do not say their format: read only with --type given (--b-type for
                          B where given, --acc for C and --d); A and B whose dtypes name two
                          formats are refused unless --b-type gives B its own. FP6 and FP4 one
                          code a byte (uint8, ml_dtypes' float6/float4; hex text: the byte's 2
                          digits). B in --b-type's format where given
  --scale-a FILE          a block-scaled datapath's scales of A (M x S) and of B (S x N),
  --scale-b FILE          S = ceil(K / scale block): one code a byte of the scale format, uint8
                          (ml_dtypes' float8_e8m0fnu or float8_e4m3fn only with
                          --scale-format, since their dtype '<V1' does not say which) or hex
                          text of 2 digits; scale s of row i covers A's k = s * block onwards
  --c FILE                C (M x N) in the accumulator format (needed when --beta is not 0 or C
                          is the initial accumulator)
  --alpha x --beta y      D = alpha A B + beta C (defaults 1 and 0)
  --c-input MODE          epilogue (default: the tensor cores accumulate A B from +0, then
                          D = fma(alpha, acc, beta C) in fp32, as cuBLAS and CUTLASS do) or
                          initial (C is the first instruction's accumulator, as a kernel's chain
                          of mma instructions; alpha and beta must be 1, and --beta defaults
                          to 1)
  --takeout KB            add the tensor-core accumulation to an fp32 register every KB values
                          of k (a multiple of the instruction's k; default 0: never)
  --threads N             host threads (default: all)
)";
}

ElementType element_type_of_option(const session::Arguments& args, const std::string& option,
                                   const FloatFormat& format) {
  ElementType type = element_type(format);
  type.option = "--" + option;
  type.given = args.value(option).has_value();
  return type;
}

GemmOperands gemm_operands_from(const session::Arguments& args, const Datapath& datapath) {
  const auto a_file = args.value("a"), b_file = args.value("b"), c_file = args.value("c");
  if (!a_file || !b_file) throw session::UsageError("--a and --b are required");
  const std::string c_input = args.value_or("c-input", "epilogue");
  if (c_input != "initial" && c_input != "epilogue") {
    throw session::UsageError("--c-input must be epilogue or initial, got '" + printable(c_input) +
                              "'");
  }
  const bool initial = c_input == "initial";
  // alpha and beta are binary32 numbers, as cuBLAS's and CUTLASS's fp32 epilogue takes them.
  GemmOptions options{
      .alpha = static_cast<float>(args.number_or("alpha", 1.0)),
      .beta = static_cast<float>(args.number_or("beta", initial ? 1.0 : 0.0)),
      .c_input = initial ? CInput::initial_accumulator : CInput::epilogue,
      .takeout_every_k = args.integer_or("takeout", 0, 0, std::numeric_limits<std::int32_t>::max()),
      .threads = static_cast<int>(args.integer_or("threads", 0, 0, 4096))};
  const ElementType input = element_type_of_option(args, "type", datapath.input);
  const ElementType input_b =
      element_type_of_option(args, args.value("b-type") ? "b-type" : "type", datapath.b_format());
  GemmOperands operands{.a = read_bit_matrix_file(*a_file, input),
                        .b = read_bit_matrix_file(*b_file, input_b),
                        .c = std::nullopt,
                        .options = options,
                        .scale_a = std::nullopt,
                        .scale_b = std::nullopt};
  const BitMatrix& a = operands.a;
  // One input format for both (unless --b-type gives B its own): dtypes that name two formats
  // (float16 and ml_dtypes' bfloat16, both read as 2-byte bit patterns) are two formats, whatever
  // --type says.
  if (!datapath.has_input_b && npy_dtypes_differ_in_format(a.npy_dtype, operands.b.npy_dtype)) {
    throw InputError("--a " + *a_file + " holds " + describe_npy_dtype(a.npy_dtype) + ", --b " +
                     *b_file + " holds " + describe_npy_dtype(operands.b.npy_dtype) +
                     ": A and B of different formats (the datapath takes one input format, " +
                     input.name + ")");
  }
  if (operands.b.rows != a.cols) {
    throw InputError("--b " + *b_file + " is " + std::to_string(operands.b.rows) + " x " +
                     std::to_string(operands.b.cols) + ", expected " + std::to_string(a.cols) +
                     " rows (the columns of --a)");
  }
  check_codes("a", *a_file, a, datapath.input);
  check_codes("b", *b_file, operands.b, datapath.b_format());
  if (datapath.block_scaled()) {
    if (!args.value("scale-a") || !args.value("scale-b")) {
      throw session::UsageError(
          "the datapath is block-scaled: --scale-a FILE and --scale-b FILE "
          "are required");
    }
    const auto s =
        static_cast<std::int64_t>(scale_count(datapath, static_cast<std::size_t>(a.cols)));
    const std::string per = "one per " + std::to_string(datapath.block_scaling.scale_block) +
                            " of the " + std::to_string(a.cols) + " k";
    operands.scale_a = read_scales(args, "scale-a", datapath.block_scaling.scale_a, a.rows, s,
                                   "the rows of --a, " + per);
    operands.scale_b = read_scales(args, "scale-b", datapath.block_scaling.scale_b, s,
                                   operands.b.cols, per + ", the columns of --b");
  } else {
    for (const char* option : {"scale-a", "scale-b"}) {
      if (args.value(option)) {
        throw session::UsageError("--" + std::string(option) +
                                  ": the datapath takes no scales (a block-scaled --instr or "
                                  "--scale-block N)");
      }
    }
  }
  if (c_file) {
    operands.c =
        read_bit_matrix_file(*c_file, element_type_of_option(args, "acc", datapath.accumulator));
    check_matrix_shape("c", *c_file, *operands.c, a.rows, operands.b.cols,
                       "the rows of --a and the columns of --b");
  }
  return operands;
}

void check_matrix_shape(const std::string& option, const std::string& path, const BitMatrix& m,
                        std::int64_t rows, std::int64_t cols, const std::string& why) {
  if (m.rows != rows || m.cols != cols) {
    throw InputError("--" + option + " " + path + " is " + std::to_string(m.rows) + " x " +
                     std::to_string(m.cols) + ", expected " + std::to_string(rows) + " x " +
                     std::to_string(cols) + " (" + why + ")");
  }
}

}  // namespace tcemu::cli

#include "gemm_operands.hpp"

#include <limits>
#include <stdexcept>

#include <tcemu/cases/input_error.hpp>
#include <tcemu/cases/printable.hpp>

#include "npy_file.hpp"

namespace tcemu::cli {

std::set<std::string> gemm_operand_option_names() {
  return {"a", "b", "c", "alpha", "beta", "c-input", "takeout", "threads"};
}

std::string gemm_operand_options_help() {
  return R"(GEMM operands (matrix files: hex text, or .npy by the name):
  --a FILE --b FILE       A (M x K) and B (K x N) in the input format: hex bit patterns of it,
                          or .npy of its NumPy float (float16; float32 for tf32) or of bit
                          patterns (uint8/uint16/uint32, ml_dtypes' bfloat16 and float8), which
                          do not say their format: read only with --type given (--acc for C
                          and --d); A and B whose dtypes name two formats are refused
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
  GemmOperands operands{.a = read_bit_matrix_file(*a_file, input),
                        .b = read_bit_matrix_file(*b_file, input),
                        .c = std::nullopt,
                        .options = options};
  const BitMatrix& a = operands.a;
  // One input format for both: dtypes that name two formats (float16 and ml_dtypes' bfloat16, both
  // read as 2-byte bit patterns) are two formats, whatever --type says.
  if (npy_dtypes_differ_in_format(a.npy_dtype, operands.b.npy_dtype)) {
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

#include "gemm_operands.hpp"

#include <charconv>

namespace tcemu::cli {
namespace {

float scalar(const Arguments& args, const std::string& name, float fallback) {
  const auto text = args.value(name);
  if (!text) return fallback;
  float v = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (error != std::errc() || end != text->data() + text->size()) {
    throw UsageError("--" + name + " expects a binary32 number, got '" + *text + "'");
  }
  return v;
}

}  // namespace

std::set<std::string> gemm_operand_option_names() {
  return {"a", "b", "c", "alpha", "beta", "c-input", "takeout", "threads"};
}

std::string gemm_operand_options_help() {
  return R"(GEMM operands (matrix files: hex text, or .npy by the name):
  --a FILE --b FILE       A (M x K) and B (K x N) in the input format: hex bit patterns of it,
                          or .npy of its NumPy float (float16; float32 for tf32) or of bit
                          patterns (uint8/uint16/uint32, ml_dtypes' bfloat16 and float8)
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

GemmOperands gemm_operands_from(const Arguments& args, const Datapath& datapath) {
  const auto a_file = args.value("a"), b_file = args.value("b"), c_file = args.value("c");
  if (!a_file || !b_file) throw UsageError("--a and --b are required");
  const std::string c_input = args.value_or("c-input", "epilogue");
  if (c_input != "initial" && c_input != "epilogue") {
    throw UsageError("--c-input must be epilogue or initial, got '" + c_input + "'");
  }
  const bool initial = c_input == "initial";
  GemmOptions options{.alpha = scalar(args, "alpha", 1.0f),
                      .beta = scalar(args, "beta", initial ? 1.0f : 0.0f),
                      .c_input = initial ? CInput::initial_accumulator : CInput::epilogue};
  const long long takeout = args.integer("takeout").value_or(0);
  if (takeout < 0) throw UsageError("--takeout must be 0 or positive");
  options.takeout_every_k = takeout;
  const long long threads = args.integer("threads").value_or(0);
  if (threads < 0 || threads > 4096) throw UsageError("--threads must be in [0, 4096]");
  options.threads = static_cast<int>(threads);
  GemmOperands operands{.a = read_bit_matrix_file(*a_file, element_type(datapath.input)),
                        .b = read_bit_matrix_file(*b_file, element_type(datapath.input)),
                        .c = std::nullopt,
                        .options = options};
  if (c_file) operands.c = read_bit_matrix_file(*c_file, element_type(datapath.accumulator));
  return operands;
}

}  // namespace tcemu::cli

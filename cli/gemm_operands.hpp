// The operands and options of an emulated GEMM on the command line, shared by `tcemu matmul`
// and `tcemu validate --d`: matrix files A, B and C (matrix_file.hpp: hex text or .npy) and the
// GemmOptions (tcemu/emulator/gemm.hpp) alpha, beta, how C enters, take-out and threads.
#pragma once

#include <optional>
#include <set>
#include <string>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/session/arguments.hpp>

#include "matrix_file.hpp"

namespace tcemu::cli {

std::set<std::string> gemm_operand_option_names();
std::string gemm_operand_options_help();

struct GemmOperands {
  BitMatrix a, b;
  std::optional<BitMatrix> c;
  GemmOptions options;
  // A block-scaled datapath's scales (--scale-a, --scale-b): M x S and S x N codes of its scale
  // formats, S = scale_count(datapath, K); absent otherwise.
  std::optional<BitMatrix> scale_a, scale_b;

  ConstMatrixView a_view(const Datapath& dp) const { return a.view(dp.input); }
  ConstMatrixView b_view(const Datapath& dp) const { return b.view(dp.b_format()); }
  std::optional<BlockScales> scales(const Datapath& dp) const {
    if (!scale_a || !scale_b) return std::nullopt;
    return BlockScales{scale_a->view(dp.block_scaling.scale_a),
                       scale_b->view(dp.block_scaling.scale_b)};
  }
  std::optional<ConstMatrixView> c_view(const Datapath& dp) const {
    return c ? std::optional(c->view(dp.accumulator)) : std::nullopt;
  }
};

// The element type of a file in `format`, chosen by `option` ("type" for A, "b-type" for B,
// "acc" for C and D): a .npy of bit patterns is read only where the command line gave the option.
ElementType element_type_of_option(const session::Arguments& args, const std::string& option,
                                   const FloatFormat& format);

// Reads --a, --b (required) and --c in the datapath's formats (B in b_format()), --scale-a and
// --scale-b (required exactly for a block-scaled datapath) and the GEMM options; throws
// UsageError for a missing or malformed option, InputError naming a bad file, one whose shape
// does not fit A's ("--b B.npy is 9 x 8, expected 8 rows (the columns of --a)"), A and B whose
// dtypes name different formats, an element that is not a code of its format (an e2m1 byte above
// 0f: FP4 is read one code per byte), or scales saved as ml_dtypes' void items without
// --scale-format (uint8 codes say what they are).
GemmOperands gemm_operands_from(const session::Arguments& args, const Datapath& datapath);

// Throws InputError naming --OPTION ("scale-a" or "scale-b") and PATH unless `m`, read from that
// file in element_type(format), holds one operand's scales: rows x cols (WHY says why) codes of
// `format`, from hex text or a .npy of uint8 codes or, where `format_given` (--scale-format or
// --scale-format-a/-b: a void dtype does not say which format it holds), ml_dtypes' 1-byte void
// items.
void check_scales(const std::string& option, const std::string& path, const BitMatrix& m,
                  const FloatFormat& format, bool format_given, std::int64_t rows,
                  std::int64_t cols, const std::string& why);

// Throws InputError "--OPTION PATH is R x C, expected ROWS x COLS (WHY)" unless `m` is
// rows x cols.
void check_matrix_shape(const std::string& option, const std::string& path, const BitMatrix& m,
                        std::int64_t rows, std::int64_t cols, const std::string& why);

}  // namespace tcemu::cli

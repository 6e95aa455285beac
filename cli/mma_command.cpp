// tcemu mma: evaluates case files through a datapath (case_file.hpp has the format).
#include <fstream>
#include <iostream>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/cases/sparse_case.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/pair_fma_emulation.hpp>
#include <tcemu/emulator/sparse_presets.hpp>

#include "case_lines.hpp"
#include "commands.hpp"
#include "datapath_options.hpp"
#include "fp64_commands.hpp"
#include "input_file.hpp"
#include "integer_commands.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage = R"(usage: tcemu mma [options] [FILE ...]

Reads MMA cases from each FILE (or standard input when there is none or FILE is -), one per
line, and writes one result per line to standard output:

  K a_0 ... a_{K-1} b_0 ... b_{K-1} c

Operands are hex bit patterns of their format without prefix (fp16/bf16: 4 digits, tf32: the
8-digit fp32 container, e4m3/e5m2: 2 digits, e3m2/e2m3 (FP6): 2 digits up to 3f, e2m1 (FP4): 1
digit; c and the result: 8 digits for an fp32 accumulator, 4 for fp16; integer formats: 2
digits per s8/u8 operand, 1 per s4/u4, 8 for an s32 c and result; fp64: 16 digits for every
operand, c and result); the b's are in --b-type's
format where it is given. A line is one output element of one MMA instruction with that K; a
larger K runs as a chain of instructions. Blank lines and lines starting with # are skipped. A
recorded result d after c (as `tcemu probe` writes it) is refused: `tcemu validate` checks it.
A malformed line stops the run with an error naming the file and line, and so does a line
longer than 1 MiB (none is valid), a read error, and an input without any case (empty, or only
comments) unless --allow-empty is given.

Exit status: 0 every case evaluated; 2 a usage or input error (an unknown or malformed option, a
file that is missing, unreadable or malformed, an input without cases); 1 standard output that
could not be written.

Block-scaled MMA (an --instr such as tcgen05.mxf4nvf4.block16.ue4m3, or --scale-block): after
c come the scales of A's row and of B's column, S = ceil(K / scale_block) of each, 2 hex digits
in the scale format (ue8m0: 2^(code - 127), ff NaN; ue4m3: 00 to 7f, 7f NaN), scale j covering
k = j * scale_block onwards:

  K a_0 ... a_{K-1} b_0 ... b_{K-1} c sa_0 ... sa_{S-1} sb_0 ... sb_{S-1}

(tcemu validate reads a recorded d after them.) A line with another number of scales is refused
with the count it needs. Example (NVFP4, 64 products of 1 x 1 in e2m1 with every scale 1, ue4m3
38; 64 = 42800000):
  echo "64 $(printf '2 %.0s' {1..128})00000000 38 38 38 38 38 38 38 38" \
    | tcemu mma --arch sm100 --instr tcgen05.mxf4nvf4.block16.ue4m3 --type e2m1

Sparse MMA (--instr mma.sp.m16n8k16 or mma.sp.m16n8k32: PTX mma.sp, 2:4 structured sparsity of
A; sm90, fp16 -> fp32, fp16 -> fp16, bf16 -> fp32; tf32 -> fp32 on mma.sp.m16n8k8 and
mma.sp.m16n8k16, 1:2 sparse; e4m3, e5m2 -> fp32 on mma.sp.m16n8k64): every line is

  K a_0 ... a_{K/2-1} METADATA b_0 ... b_{K-1} c

with K the shape's K (8, 16, 32 or 64: a sparse shape takes exactly its K), the K/2 values of A's
row that are kept, METADATA one word of K/2 digits 0-3, the position of each kept value in its
group of four consecutive k (two per group, increasing: 01 02 03 12 13 23; PTX's 2-bit metadata
indices), and all K values of B's
column (tf32: one index of each group in 0-1, one in 2-3: 02 03 12 13). The kept value a_j
multiplies b_k, k = 4 (j / 2) + METADATA_j; B's other rows are not
read (NaN there changes nothing). The datapath is that of the K/2 kept products in the order
of their positions: on the H100 one block of K/2 terms, the dense sm90 mma.sync shape of K/2
(m16n8k4, m16n8k8, m16n8k16; fp8 m16n8k32's two interleaved halves), measured with 10^6 random and the crafted cases per shape and format
(docs/presets.md). Example:
  echo "16 3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00 01230123 $(printf '3c00 %.0s' {1..16})00000000" \
    | tcemu mma --instr mma.sp.m16n8k16        # 8 kept products of 1 x 1: 41000000

sm90 mma.sync.m8n8k4 with an fp16 accumulator (--instr mma.sync.m8n8k4 --type fp16 --acc fp16)
has no tensor-core instruction: ptxas emulates it in fp32 (pairs of products by FMUL + FFMA,
c + p01 + p23 by FADD, one rounding to fp16). It has no preset; its cases run through that exact
model (emulator pair_fma_emulation.hpp, measured on the H100), and datapath options are refused.

)";

// Evaluates every case of `in`; returns false (after printing the error) on a malformed line.
bool run_stream(std::istream& in, const std::string& name, bool allow_empty,
                const session::Arguments& args, const Datapath& dp) {
  return for_each_case_line(
      in, "mma", name, allow_empty, [&](const std::string& text, std::size_t line) {
        const auto c = parse_case_line(text, line, dp);
        if (!c) return false;
        const std::size_t k = c->a.size();
        const std::size_t scales = dp.block_scaled() ? 2 * scale_count(dp, k) : 0;
        refuse_recorded_d(c->d.has_value(), k, 2 + 2 * k + scales, line);
        check_case_k(args, dp, k, line);
        std::cout << to_hex(dp.accumulator, mma_case_element(dp, *c)) << '\n';
        return true;
      });
}

// The same for sparse case lines through a sparse shape's datapath.
bool run_sparse_stream(std::istream& in, const std::string& name, bool allow_empty, std::size_t k,
                       const Datapath& dp) {
  return for_each_case_line(
      in, "mma", name, allow_empty, [&](const std::string& text, std::size_t line) {
        const auto c = parse_sparse_case_line(text, line, dp.input, dp.accumulator);
        if (!c) return false;
        // K, the K/2 kept values of A, the metadata, the K values of B, c.
        refuse_recorded_d(c->d.has_value(), c->b.size(), 3 + c->b.size() / 2 + c->b.size(), line);
        if (c->b.size() != k) {
          throw CaseFileError(line, "K = " + std::to_string(c->b.size()) +
                                        ", but the sparse shape takes K = " + std::to_string(k));
        }
        std::cout << to_hex(dp.accumulator, sparse_mma_element(dp, *c)) << '\n';
        return true;
      });
}

// The same for sm90 mma.sync.m8n8k4 fp16 -> fp16 through its pair-FMA model (K a multiple of 4).
bool run_pair_fma_stream(std::istream& in, const std::string& name, bool allow_empty) {
  return for_each_case_line(
      in, "mma", name, allow_empty, [&](const std::string& text, std::size_t line) {
        const auto c = parse_case_line(text, line, formats::fp16, formats::fp16);
        if (!c) return false;
        refuse_recorded_d(c->d.has_value(), c->a.size(), 2 + 2 * c->a.size(), line);
        if (c->a.size() % 4 != 0) {
          throw CaseFileError(line, "K = " + std::to_string(c->a.size()) +
                                        " is not a multiple of mma.sync.m8n8k4's K = 4");
        }
        std::cout << to_hex(formats::fp16, sm90_m8n8k4_fp16_element(c->a, c->b, c->c)) << '\n';
        return true;
      });
}

}  // namespace

int mma_command(const std::vector<std::string>& words) {
  auto names = datapath_option_names();
  names.merge(integer_value_option_names());
  names.merge(fp64_value_option_names());
  auto flags = integer_flag_names();
  flags.insert("help");
  flags.insert("allow-empty");
  const session::Arguments args(words, names, flags);
  if (args.flag("help")) {
    std::cout << kUsage << datapath_options_help() << '\n'
              << integer_options_help() << '\n'
              << fp64_options_help();
    return 0;
  }
  if (integer_requested(args)) return integer_mma(args);
  if (fp64_requested(args)) return fp64_mma(args);
  const bool pair_fma = pair_fma_requested(args);
  const bool sparse = sparse_requested(args);
  const Datapath dp = pair_fma ? Datapath{} : sparse_or_dense_datapath_from(args);
  const std::size_t sparse_k =
      sparse ? static_cast<std::size_t>(sparse_instruction_k(*args.value("instr"))) : 0;
  const auto run = [&](std::istream& in, const std::string& name) {
    const bool allow_empty = args.flag("allow-empty");
    if (pair_fma) return run_pair_fma_stream(in, name, allow_empty);
    return sparse ? run_sparse_stream(in, name, allow_empty, sparse_k, dp)
                  : run_stream(in, name, allow_empty, args, dp);
  };
  return run_each_input(args.positional(), run);
}

}  // namespace tcemu::cli

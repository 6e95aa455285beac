// tcemu: the command-line face of the emulator.
#include <iostream>
#include <string>
#include <vector>

#include <tcemu/cases/printable.hpp>
#include <tcemu/session/arguments.hpp>
#include "commands.hpp"

namespace {

constexpr const char* kUsage = R"(usage: tcemu COMMAND [options]

Bit-exact emulation of NVIDIA Tensor Core MMA.

Commands:
  mma        evaluate MMA case files through a datapath (validate your own kernels)
  matmul     the emulated GEMM of whole matrices (hex text or .npy) through any datapath
  captures   replay the capture sets recorded on real GPUs through the presets
  presets    print the datapath presets and their fields
  probe      record the present GPU's mma.sync results on random and crafted cases
  validate   compare recorded cases or a whole recorded D with the emulator; report mismatches
  detect     infer the present GPU's datapath (or that of recorded cases) as preset options
  gemm       run a GEMM scheme (Ozaki, error-corrected SGEMM, Dot2, ExBLAS) on a backend, with
             its accuracy against the correctly rounded product
  explain    show error-free transformations step by step: TwoSum, TwoProd, Dot2, the long
             accumulator, the Ozaki and Markidis splits, one tensor-core block, one
             block-scaled (MX, NVFP4) block

Run 'tcemu COMMAND --help' for the options of a command.
)";

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> all(argv + 1, argv + argc);
  if (all.empty() || all[0] == "--help" || all[0] == "-h" || all[0] == "help") {
    return tcemu::session::run_reporting("tcemu", [&] {
      std::cout << kUsage;
      return all.empty() ? 2 : 0;
    });
  }
  const std::string command = all[0];
  const std::vector<std::string> words(all.begin() + 1, all.end());
  return tcemu::session::run_reporting(
      "tcemu " + command,
      [&] {
        if (command == "mma") return tcemu::cli::mma_command(words);
        if (command == "matmul") return tcemu::cli::matmul_command(words);
        if (command == "captures") return tcemu::cli::captures_command(words);
        if (command == "presets") return tcemu::cli::presets_command(words);
        if (command == "probe") return tcemu::cli::probe_command(words);
        if (command == "validate") return tcemu::cli::validate_command(words);
        if (command == "detect") return tcemu::cli::detect_command(words);
        if (command == "gemm") return tcemu::cli::gemm_command(words);
        if (command == "explain") return tcemu::cli::explain_command(words);
        std::cerr << "tcemu: unknown command '" << tcemu::printable(command) << "'\n\n" << kUsage;
        return 2;
      },
      command == "validate" ? 2 : 1);
}

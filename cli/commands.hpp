// The subcommands of `tcemu`. Each takes its words after the subcommand name and returns the
// process exit status; usage errors are thrown as UsageError.
#pragma once

#include <string>
#include <vector>

namespace tcemu::cli {

int mma_command(const std::vector<std::string>& words);
int matmul_command(const std::vector<std::string>& words);
int captures_command(const std::vector<std::string>& words);
int presets_command(const std::vector<std::string>& words);
int validate_command(const std::vector<std::string>& words);
int probe_command(const std::vector<std::string>& words);
int detect_command(const std::vector<std::string>& words);
int gemm_command(const std::vector<std::string>& words);
int explain_command(const std::vector<std::string>& words);

}  // namespace tcemu::cli

#include "input_file.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace tcemu::cli {

std::ifstream open_input(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw std::runtime_error("cannot read " + path + ": it is a directory");
  }
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return in;
}

void check_stdin_is_not_a_directory() {
  struct stat info {};
  if (::fstat(0, &info) == 0 && S_ISDIR(info.st_mode)) {
    throw std::runtime_error("cannot read <stdin>: it is a directory");
  }
}

}  // namespace tcemu::cli

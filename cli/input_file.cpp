#include "input_file.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <tcemu/cases/input_error.hpp>

namespace tcemu::cli {

std::ifstream open_input(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw InputError("cannot read " + path + ": it is a directory");
  }
  std::ifstream in(path);
  if (!in) throw InputError("cannot open " + path);
  return in;
}

void check_stdin_is_not_a_directory() {
  struct stat info {};
  if (::fstat(0, &info) == 0 && S_ISDIR(info.st_mode)) {
    throw InputError("cannot read <stdin>: it is a directory");
  }
}

}  // namespace tcemu::cli

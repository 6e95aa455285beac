#include <tcemu/session/output_file.hpp>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace tcemu::session {
namespace {

// ": REASON" from errno, or nothing when no error was recorded.
std::string reason(int error) {
  return error != 0 ? std::string(": ") + std::strerror(error) : std::string();
}

}  // namespace

OutputFile::OutputFile(std::filesystem::path path) : path_(std::move(path)) {
  std::error_code error;
  if (std::filesystem::is_directory(path_, error)) {
    throw std::runtime_error("cannot write " + path_.string() + ": it is a directory");
  }
  errno = 0;
  out_.open(path_, std::ios::binary);
  if (!out_) {
    throw std::runtime_error("cannot write " + path_.string() + reason(errno));
  }
}

OutputFile::~OutputFile() {
  if (!done_) remove_partial();
}

void OutputFile::print(const char* format, ...) {
  std::va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int size = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  if (size > 0) {
    std::string text(static_cast<std::size_t>(size) + 1, '\0');
    std::vsnprintf(text.data(), text.size(), format, again);
    out_.write(text.data(), size);
  }
  va_end(again);
}

void OutputFile::close() {
  // A write that failed earlier left its errno; otherwise the flush and the close may fail now.
  bool written = out_.good();
  int error = errno;
  if (written) {
    errno = 0;
    out_.flush();
    written = out_.good();
    error = errno;
  }
  out_.close();
  if (written && out_.fail()) {
    written = false;
    error = errno;
  }
  done_ = true;
  if (!written) {
    remove_partial();
    throw std::runtime_error("error writing " + path_.string() + reason(error));
  }
}

void OutputFile::remove_partial() {
  if (out_.is_open()) out_.close();
  // Only a regular file is ours to remove (not /dev/full, a pipe or a terminal).
  std::error_code error;
  if (std::filesystem::is_regular_file(path_, error)) std::filesystem::remove(path_, error);
}

}  // namespace tcemu::session

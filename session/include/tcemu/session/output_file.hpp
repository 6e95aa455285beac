// Writing the output files of the programs (tcemu matmul --out, gemm --out, the probe files, the
// experiments' CSV files): every write is checked, closing included; a file that could not be
// written whole is removed and the error names its path.
#pragma once

#include <filesystem>
#include <fstream>

namespace tcemu::session {

class OutputFile {
 public:
  // Opens `path` for writing (binary); throws std::runtime_error naming it when it cannot.
  explicit OutputFile(std::filesystem::path path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Removes the file unless close() succeeded (an exception left it partial).
  ~OutputFile();

  std::ostream& stream() { return out_; }
  // Writes std::printf's formatting of the arguments to stream().
  void print(const char* format, ...) __attribute__((format(printf, 2, 3)));
  // Flushes and closes the file; throws std::runtime_error "error writing PATH: REASON" and
  // removes it when any write or the close failed.
  void close();

 private:
  void remove_partial();

  std::filesystem::path path_;
  std::ofstream out_;
  bool done_ = false;
};

}  // namespace tcemu::session

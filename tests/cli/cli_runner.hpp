// Running the tcemu command (or any command line) from a test as a user runs it: exit status and
// the output (stdout and stderr together), with standard input from a file; and temporary files
// for its arguments.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace tcemu::test {

struct Result {
  int status;          // the exit status, -1 when the command did not exit normally
  std::string output;  // what it wrote to stdout (stdout and stderr together where the command
                       // line says 2>&1, as run and run_with_stdin_from do)
};

// A shell command line, run as a user would run it.
inline Result shell(const std::string& command) {
  Result r{-1, ""};
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe))
    r.output += buffer.data();
  const int raw = ::pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

// `tcemu ARGUMENTS` with standard input from `stdin_path`.
inline Result run_with_stdin_from(const std::string& arguments, const std::string& stdin_path) {
  return shell(std::string(TCEMU_CLI) + " " + arguments + " < " + stdin_path + " 2>&1");
}

inline Result run(const std::string& arguments, const std::string& input = "") {
  const auto dir = std::filesystem::temp_directory_path();
  const auto in_file = dir / ("tcemu_cli_test_in_" + std::to_string(::getpid()));
  std::ofstream(in_file) << input;
  const Result r = run_with_stdin_from(arguments, in_file.string());
  std::filesystem::remove(in_file);
  return r;
}

// A file in the temporary directory, removed at the end of the test; the process id goes before
// the name's extension ("a.npy" -> "a_1234.npy").
struct TempFile {
  explicit TempFile(const std::string& name, const std::string& text = "")
      : path(std::filesystem::temp_directory_path() /
             (std::filesystem::path(name).stem().string() + "_" + std::to_string(::getpid()) +
              std::filesystem::path(name).extension().string())) {
    if (!text.empty()) std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
  std::string slurp() const {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::filesystem::path path;
};

}  // namespace tcemu::test

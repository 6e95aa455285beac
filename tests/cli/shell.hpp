// Runs a shell command line as a user would and collects what it printed.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace tcemu::test {

struct Result {
  int status;          // the exit status, -1 when the command did not exit normally
  std::string output;  // what it wrote to stdout (append 2>&1 to the command for stderr too)
};

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

}  // namespace tcemu::test

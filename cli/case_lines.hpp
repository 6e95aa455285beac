// Reading case files line by line, for the commands that evaluate or check MMA cases (mma,
// validate; float, integer and sparse cases alike).
#pragma once

#include <cstddef>
#include <iostream>
#include <string>

#include <tcemu/cases/case_file.hpp>

namespace tcemu::cli {

// Calls `evaluate(text, line)` for every line of `in` (line numbers from 1). A CaseFileError
// thrown by it stops the reading: "tcemu COMMAND: NAME: line L: ..." goes to stderr after what
// was already printed to stdout, and the result is false; otherwise true.
template <typename Evaluate>
bool for_each_case_line(std::istream& in, const std::string& command, const std::string& name,
                        Evaluate&& evaluate) {
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    try {
      evaluate(text, line);
    } catch (const CaseFileError& e) {
      std::cout.flush();
      std::cerr << "tcemu " << command << ": " << name << ": " << e.what() << '\n';
      return false;
    }
  }
  return true;
}

}  // namespace tcemu::cli

// Reading case files line by line, for the commands that evaluate or check MMA cases (mma,
// validate; float, integer and sparse cases alike).
#pragma once

#include <cstddef>
#include <iostream>
#include <string>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/line_reader.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/session/arguments.hpp>

namespace tcemu::cli {

// Throws session::InputError "NAME: no cases (...)" when `cases` is 0, unless `allow_empty`
// (--allow-empty): an input without cases is an error of every command that reads cases.
inline void check_not_empty(const std::string& name, std::size_t cases, bool allow_empty) {
  if (cases == 0 && !allow_empty) {
    throw session::InputError(name + ": no cases (--allow-empty accepts an input without any)");
  }
}

// tcemu mma computes d from K, a, b and c: a line with one field more, a recorded d, is refused
// rather than ignored (tcemu validate checks it). `fields` counts the line's fields before d.
inline void refuse_recorded_d(bool has_d, std::size_t k, std::size_t fields, std::size_t line) {
  if (has_d) {
    throw CaseFileError(line, "K = " + std::to_string(k) + " takes " + std::to_string(fields) +
                                  " fields; field " + std::to_string(fields + 1) +
                                  ", a recorded d, is for tcemu validate");
  }
}

// Calls `evaluate(text, line)` for every line of `in` (line numbers from 1; read by a
// LineReader); it returns whether the line was a case. A CaseFileError thrown by it, a line too
// long or a read error, or an input without cases (unless `allow_empty`), stops the reading: "tcemu
// COMMAND: NAME: line L: ..." goes to stderr after what was already printed to stdout, and the
// result is false; otherwise true.
template <typename Evaluate>
bool for_each_case_line(std::istream& in, const std::string& command, const std::string& name,
                        bool allow_empty, Evaluate&& evaluate) {
  std::string text;
  std::size_t cases = 0;
  try {
    LineReader lines(in, name);
    while (lines.next(text)) {
      if (evaluate(text, lines.line())) ++cases;
    }
    check_not_empty(name, cases, allow_empty);
  } catch (const CaseFileError& e) {
    std::cout.flush();
    std::cerr << "tcemu " << command << ": " << printable_message(name + ": " + e.what()) << '\n';
    return false;
  } catch (const session::InputError& e) {
    std::cout.flush();
    std::cerr << "tcemu " << command << ": " << printable_message(e.what()) << '\n';
    return false;
  }
  return true;
}

}  // namespace tcemu::cli

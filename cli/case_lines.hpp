// Reading case files line by line, for the commands that evaluate or check MMA cases (mma,
// validate; float, integer and sparse cases alike).
#pragma once

#include <cstddef>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/line_reader.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/session/arguments.hpp>

#include "input_file.hpp"

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

// Runs `run(in, name)` on each input of tcemu mma: the FILE arguments, or standard input for none
// and for "-". A file that cannot be opened stops the command with "tcemu mma: ..." on stderr, as
// does a run that returns false (it reported why): 2 then, else 0.
template <typename Run>
int run_each_input(std::vector<std::string> files, Run&& run) {
  if (files.empty()) files.push_back("-");
  for (const std::string& file : files) {
    if (file == "-") {
      check_stdin_is_not_a_directory();
      if (!run(std::cin, std::string("<stdin>"))) return 2;
      continue;
    }
    std::ifstream in;
    try {
      in = open_input(file);
    } catch (const std::runtime_error& e) {
      std::cout.flush();
      std::cerr << "tcemu mma: " << printable_message(e.what()) << '\n';
      return 2;
    }
    if (!run(in, file)) return 2;
  }
  return 0;
}

// What tcemu validate found in one file.
struct Counts {
  std::size_t cases = 0;
  std::size_t mismatches = 0;
};

// One case checked: whether the emulator gives the recorded d and, where it does not,
// "recorded X, emulated Y\n  CASE LINE".
struct Verdict {
  bool same;
  std::string mismatch;
};

// tcemu validate's reading of one case file: `check(text, line)` on every line gives nothing for
// a line without a case, else its Verdict (it throws a CaseFileError for a bad line). The first
// `show` mismatches are printed as "FILE:LINE (NAME): ...", NAME from a "# crafted: NAME" line
// just before the case.
template <typename Check>
Counts validate_case_lines(std::istream& in, const std::string& file, std::size_t show,
                           Check&& check) {
  Counts counts;
  std::string text, name;
  LineReader lines(in, file);
  while (lines.next(text)) {
    const std::size_t line = lines.line();
    if (text.starts_with("# crafted: ")) {
      name = text.substr(11);
      continue;
    }
    const std::optional<Verdict> verdict = check(text, line);
    if (!verdict) continue;
    ++counts.cases;
    if (!verdict->same && counts.mismatches++ < show) {
      std::cout << file << ":" << line << (name.empty() ? "" : " (" + printable(name) + ")") << ": "
                << verdict->mismatch << '\n';
    }
    name.clear();
  }
  return counts;
}

// tcemu validate over its FILE arguments: `count(in, file)` gives each file's Counts (a
// CaseFileError from it becomes "FILE: line L: ..."); a file without cases is an error unless
// --allow-empty; "FILE: N cases, M mismatches" for each. 0 when no case differs, else 1.
template <typename Count>
int validate_each_file(const session::Arguments& args, Count&& count) {
  std::size_t total = 0;
  for (const std::string& file : args.positional()) {
    std::ifstream in = open_input(file);
    Counts counts;
    try {
      counts = count(in, file);
    } catch (const CaseFileError& e) {
      throw std::runtime_error(file + ": " + e.what());
    }
    check_not_empty(file, counts.cases, args.flag("allow-empty"));
    std::cout << file << ": " << counts.cases << " cases, " << counts.mismatches << " mismatches\n";
    total += counts.mismatches;
  }
  return total == 0 ? 0 : 1;
}

}  // namespace tcemu::cli

// The command-line parser of every program (the tcemu command, the experiments, the benchmarks):
// `--name value`, `--name=value`, `--flag` and positional words. Every option a program reads
// must be declared; anything else is an error naming it. run_program is the common main: --help,
// usage and input errors (exit 2), other failures (exit 1) and a standard output that could not
// be written (exit 1) alike in every program.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/cases/input_error.hpp>

namespace tcemu::session {

// A usage error: the message says what is wrong; the program prints it with a pointer to --help.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An input error (tcemu/cases/input_error.hpp: a file that is missing, unreadable, malformed,
// empty or of the wrong shape or type), for a program whose exit status tells it apart from its
// result (tcemu validate: 0 equal, 1 differs, 2 usage or input error). The message names the
// file or option; reported as "PROGRAM: message".
using InputError = tcemu::InputError;

class Arguments {
 public:
  // `value_options` take a value, `flags` do not. An option that takes a value followed by
  // nothing or by a declared option ("--type --acc fp32") is a UsageError "--type needs a
  // value"; words quoted in messages go through printable().
  Arguments(const std::vector<std::string>& words, const std::set<std::string>& value_options,
            const std::set<std::string>& flags);

  std::optional<std::string> value(const std::string& name) const;
  std::string value_or(const std::string& name, const std::string& fallback) const;
  bool flag(const std::string& name) const { return flags_.contains(name); }
  const std::vector<std::string>& positional() const { return positional_; }

  // The value of `name` as an integer, or nothing; a malformed value is a UsageError.
  std::optional<long long> integer(const std::string& name) const;
  // The value of `name` as an integer in [low, high], `fallback` when it is not given; a
  // malformed or out-of-range value is a UsageError naming the range.
  long long integer_or(const std::string& name, long long fallback, long long low,
                       long long high) const;
  // The value of `name` as a number (std::from_chars' syntax: "1e-3", "inf", "nan"), `fallback`
  // when it is not given; a malformed value is a UsageError.
  double number_or(const std::string& name, double fallback) const;
  // The items of `name`'s comma-separated value (comma_list), those of `fallback` when it is not
  // given.
  std::vector<std::string> list_or(const std::string& name, const std::string& fallback) const;

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
  std::vector<std::string> positional_;
};

// The items of a comma-separated value ("halfhalf,tf32tf32"), empty items dropped.
std::vector<std::string> comma_list(const std::string& text);

// `text` as an integer in [low, high]; `what` names it in the UsageError otherwise.
long long integer_in(const std::string& what, const std::string& text, long long low,
                     long long high);
// `text` as a number; `what` names it in the UsageError otherwise.
double number_in(const std::string& what, const std::string& text);

// A program's command line: the options it declares and its --help text.
struct Program {
  std::string name;  // as messages name it: "ozaki_experiments", "tcemu gemm"
  std::string usage;
  std::set<std::string> value_options;
  std::set<std::string> flags;
};

// Prints "PROGRAM: message" and a pointer to "PROGRAM --help" on stderr; returns 2, the exit
// status of a usage error.
int usage_failure(const std::string& program, const std::string& message);

// Returns body's status, or reports what it throws: a UsageError by usage_failure (2), an
// InputError as "PROGRAM: message" (2), any other exception as "PROGRAM: message" (1). Then
// flushes standard output (std::cout and stdout): if it could not be written, says so as
// "PROGRAM: error writing standard output: REASON" and returns at least `output_error_status`
// (tcemu validate passes 2, since its 1 means that results differ).
int run_reporting(const std::string& program, const std::function<int()>& body,
                  int output_error_status = 1);

// A program's main: with --help (or -h) anywhere, prints the usage on stdout and returns 0;
// otherwise parses the words after argv[0] and returns body's status; both through
// run_reporting.
int run_program(const Program& program, int argc, char** argv,
                const std::function<int(const Arguments&)>& body);

}  // namespace tcemu::session

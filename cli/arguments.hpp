// A small command-line parser: `--name value`, `--name=value`, `--flag` and positional words.
// Every option a command reads must be declared; anything else is an error naming it.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcemu::cli {

// A usage error: the message says what is wrong; the command prints it with its usage.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Arguments {
 public:
  // `value_options` take a value, `flags` do not.
  Arguments(const std::vector<std::string>& words, const std::set<std::string>& value_options,
            const std::set<std::string>& flags);

  std::optional<std::string> value(const std::string& name) const;
  std::string value_or(const std::string& name, const std::string& fallback) const;
  bool flag(const std::string& name) const { return flags_.contains(name); }
  const std::vector<std::string>& positional() const { return positional_; }

  // The value of `name` as an integer, or nothing; a malformed value is a UsageError.
  std::optional<long long> integer(const std::string& name) const;

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
  std::vector<std::string> positional_;
};

}  // namespace tcemu::cli

#include <tcemu/session/arguments.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <limits>
#include <sstream>

#include <tcemu/cases/printable.hpp>

namespace tcemu::session {

namespace {

// `word` is an option the program declares (`--type`, `--acc=fp32`, `--help`): after an option
// that takes a value, it means that the value is missing, not that the value is `word`.
bool declares(const std::string& word, const std::set<std::string>& value_options,
              const std::set<std::string>& flags) {
  if (word.size() < 3 || !word.starts_with("--")) return false;
  const std::string name = word.substr(2, word.find('=') - 2);
  return name == "help" || value_options.contains(name) || flags.contains(name);
}

}  // namespace

Arguments::Arguments(const std::vector<std::string>& words,
                     const std::set<std::string>& value_options,
                     const std::set<std::string>& flags) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.size() < 3 || !word.starts_with("--")) {
      positional_.push_back(word);
      continue;
    }
    std::string name = word.substr(2);
    std::optional<std::string> inline_value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (flags.contains(name)) {
      if (inline_value) throw UsageError("--" + printable(name) + " takes no value");
      flags_.insert(name);
    } else if (value_options.contains(name)) {
      if (inline_value) {
        values_[name] = *inline_value;
      } else if (i + 1 < words.size() && !declares(words[i + 1], value_options, flags)) {
        values_[name] = words[++i];
      } else {
        throw UsageError("--" + name + " needs a value");
      }
    } else {
      throw UsageError("unknown option --" + printable(name));
    }
  }
}

std::optional<std::string> Arguments::value(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Arguments::value_or(const std::string& name, const std::string& fallback) const {
  return value(name).value_or(fallback);
}

std::optional<long long> Arguments::integer(const std::string& name) const {
  const auto text = value(name);
  if (!text) return std::nullopt;
  return integer_in("--" + name, *text, std::numeric_limits<long long>::min(),
                    std::numeric_limits<long long>::max());
}

long long Arguments::integer_or(const std::string& name, long long fallback, long long low,
                                long long high) const {
  const auto text = value(name);
  return text ? integer_in("--" + name, *text, low, high) : fallback;
}

double Arguments::number_or(const std::string& name, double fallback) const {
  const auto text = value(name);
  return text ? number_in("--" + name, *text) : fallback;
}

std::vector<std::string> Arguments::list_or(const std::string& name,
                                            const std::string& fallback) const {
  return comma_list(value_or(name, fallback));
}

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

long long integer_in(const std::string& what, const std::string& text, long long low,
                     long long high) {
  long long v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v, 10);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw UsageError(what + " expects an integer, got '" + printable(text) + "'");
  }
  if (v < low || v > high) {
    throw UsageError(what + " must be in [" + std::to_string(low) + ", " + std::to_string(high) +
                     "], got " + printable(text));
  }
  return v;
}

double number_in(const std::string& what, const std::string& text) {
  double v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw UsageError(what + " expects a number, got '" + printable(text) + "'");
  }
  return v;
}

int usage_failure(const std::string& program, const std::string& message) {
  std::cerr << program << ": " << printable_message(message) << "\n(see '" << program
            << " --help')\n";
  return 2;
}

int run_reporting(const std::string& program, const std::function<int()>& body,
                  int output_error_status) {
  int status = 1;
  try {
    status = body();
  } catch (const UsageError& e) {
    status = usage_failure(program, e.what());
  } catch (const InputError& e) {
    std::cerr << program << ": " << printable_message(e.what()) << '\n';
    status = 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": " << printable_message(e.what()) << '\n';
    status = 1;
  }
  // A write that failed earlier left its errno; otherwise the flush may fail now.
  bool written = std::cout.good() && !std::ferror(stdout);
  int error = errno;
  if (written) {
    errno = 0;
    std::cout.flush();
    written = std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout);
    error = errno;
  }
  if (!written) {
    std::cerr << program << ": error writing standard output"
              << (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) << '\n';
    status = std::max(status, output_error_status);
  }
  return status;
}

int run_program(const Program& program, int argc, char** argv,
                const std::function<int(const Arguments&)>& body) {
  const std::vector<std::string> words(argv + 1, argv + argc);
  return run_reporting(program.name, [&] {
    for (const std::string& word : words) {
      if (word == "--help" || word == "-h") {
        std::cout << program.usage;
        return 0;
      }
    }
    return body(Arguments(words, program.value_options, program.flags));
  });
}

}  // namespace tcemu::session

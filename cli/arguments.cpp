#include "arguments.hpp"

#include <charconv>

namespace tcemu::cli {

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
      if (inline_value) throw UsageError("--" + name + " takes no value");
      flags_.insert(name);
    } else if (value_options.contains(name)) {
      if (inline_value) {
        values_[name] = *inline_value;
      } else if (i + 1 < words.size()) {
        values_[name] = words[++i];
      } else {
        throw UsageError("--" + name + " needs a value");
      }
    } else {
      throw UsageError("unknown option --" + name);
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
  long long v = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), v, 10);
  if (error != std::errc() || end != text->data() + text->size()) {
    throw UsageError("--" + name + " expects an integer, got '" + *text + "'");
  }
  return v;
}

}  // namespace tcemu::cli

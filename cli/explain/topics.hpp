// The topics of `tcemu explain` (explain_command.cpp dispatches to them): each reads its values
// and options and returns the document that shows, step by step, what the library code does.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include <tcemu/session/arguments.hpp>
#include "document.hpp"

namespace tcemu::cli::explain {

struct Topic {
  std::string name;
  std::string summary;  // one line, for `tcemu explain --help`
  std::string usage;    // `tcemu explain TOPIC --help`
  std::set<std::string> value_options;
  std::function<Document(const session::Arguments&)> run;
  bool takes_values = false;  // positional values; otherwise a positional word is a usage error
};

Topic twosum_topic();
Topic twoprod_topic();
Topic dot2_topic();
Topic long_accumulator_topic();
Topic markidis_topic();
Topic block_topic();
Topic block_scaled_topic();

// The common options of every topic, for the usage texts.
inline constexpr const char* kCommonOptions =
    R"(  --format F     text (default), markdown or html: the same content for a handout
Values: decimal (0.1, -2.5e-3), C hex floats (0x1.8p-3) or bit patterns bits:HEX in the topic's
format (bits:3ff0000000000000 is binary64 1).
)";

// The positional values of a topic that takes `count` of them (none: `fallback`).
std::vector<std::string> positional_values(const session::Arguments& args, std::size_t count,
                                           const std::vector<std::string>& fallback);

}  // namespace tcemu::cli::explain

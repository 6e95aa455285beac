// libFuzzer target: the CLI option parser (tcemu/session/arguments.hpp: Arguments, integer()) and
// the datapath options (cli/datapath_options.hpp: datapath_from) on arbitrary words.
//
// Input: words separated by newlines (a word may hold any other byte, NUL included). A usage
// error (UsageError, a std::runtime_error) is a normal outcome. A datapath that parses must pass
// validate() and survive the round trip through datapath_options: its words parse to the same
// datapath.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/emulator/mma.hpp>
#include <tcemu/session/arguments.hpp>

#include "datapath_options.hpp"

namespace {

std::set<std::string> value_options() {
  std::set<std::string> names = tcemu::cli::datapath_option_names();
  names.insert({"threads", "splits", "takeout", "workspace-mib", "out", "x"});
  return names;
}

const std::set<std::string> kValueOptions = value_options();
const std::set<std::string> kFlags = {"help", "verbose", "exact"};

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "cli options: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> words;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    words.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  try {
    const tcemu::session::Arguments args(words, kValueOptions, kFlags);
    for (const std::string& name : kValueOptions) {
      try {
        (void)args.integer(name);
      } catch (const tcemu::session::UsageError&) {
      }
    }
    const tcemu::Datapath dp = tcemu::cli::datapath_from(args);
    tcemu::validate(dp);  // datapath_from validates: this must not throw
    const std::string arch = args.value_or("arch", "sm90");
    std::istringstream line(tcemu::cli::datapath_options(arch, dp) + " --instr " +
                            args.value_or("instr", "mma.sync"));
    std::vector<std::string> again;
    for (std::string word; line >> word;) again.push_back(word);
    const tcemu::session::Arguments args_again(again, kValueOptions, kFlags);
    if (!(tcemu::cli::datapath_from(args_again) == dp)) {
      finding("datapath_options does not give back the datapath: " + line.str());
    }
  } catch (const std::runtime_error&) {  // UsageError
  } catch (const std::invalid_argument&) {
  }
  return 0;
}

// mmasim_cases: the cases of the MMA-Sim 2.1.1 evidence (tcemu/cases/mmasim_evidence.hpp) for
// scripts/mmasim_reference.py, and the check of MMA-Sim's results against tcemu. Run with --help.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/cases/mmasim_evidence.hpp>
#include <tcemu/emulator/presets.hpp>

namespace {

constexpr std::string_view kUsage = R"(usage: mmasim_cases list
       mmasim_cases write --out DIR [--count N] [--seed S] [--sets NAME,...]
       mmasim_cases check --results DIR [--count N] [--show M] [--threads T]

The bit-for-bit evidence against MMA-Sim 2.1.1 (tests/data/mmasim/README.md): every Blackwell
instruction with FP6/FP4 inputs or block scaling, one case set per distinct datapath.

  list    print each set: its name, K, its scenarios (case i is of scenario i mod their
          count), the preset rows that share its datapath and the MMA-Sim instructions that
          model them
  write   write N cases of every set (or of the sets named) for scripts/mmasim_reference.py:
          DIR/NAME.a, NAME.b (uint8 codes, N x K), NAME.c (fp32/fp16 bits, little-endian),
          NAME.scale_a, NAME.scale_b (uint8, N x K/scale_block) and DIR/cases.tsv
          (default N = 10000, S = 1)
  check   regenerate the cases of every set, run them through tcemu (mma_element) and compare
          with MMA-Sim's d in DIR (results.tsv and NAME.d, written by mmasim_reference.py); prints
          a table and the first M mismatches of each set (default 5); --count N checks the first N
          cases only. Exit status 0 when every set has results and every result agrees, 1 when
          not, 2 for a usage error.
)";

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "mmasim_cases: " << what << "\n" << kUsage;
  std::exit(2);
}

std::uint64_t number(std::string_view option, const std::string& text) {
  std::size_t used = 0;
  std::uint64_t value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || text[0] == '-') {
    usage_error(std::string(option) + " takes a non-negative integer, got '" + text + "'");
  }
  return value;
}

struct Options {
  std::string dir;
  std::uint64_t count = 0;
  bool has_count = false;
  std::uint64_t seed = tcemu::kEvidenceSeed;
  std::uint64_t show = 5;
  int threads = 0;
  std::vector<std::string> sets;
};

Options parse(const std::vector<std::string>& args, std::string_view dir_option,
              const std::vector<std::string_view>& allowed) {
  Options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (std::find(allowed.begin(), allowed.end(), arg) == allowed.end() && arg != dir_option) {
      usage_error("unknown option '" + arg + "'");
    }
    if (i + 1 >= args.size()) usage_error(arg + " needs a value");
    const std::string& value = args[++i];
    if (arg == dir_option) {
      o.dir = value;
    } else if (arg == "--count") {
      o.count = number(arg, value);
      o.has_count = true;
    } else if (arg == "--seed") {
      o.seed = number(arg, value);
    } else if (arg == "--show") {
      o.show = number(arg, value);
    } else if (arg == "--threads") {
      o.threads = static_cast<int>(std::min<std::uint64_t>(number(arg, value), 1024));
    } else if (arg == "--sets") {
      std::istringstream in(value);
      for (std::string name; std::getline(in, name, ',');) o.sets.push_back(name);
    }
  }
  if (o.dir.empty()) usage_error(std::string(dir_option) + " DIR is required");
  return o;
}

int list() {
  for (const tcemu::EvidenceSet& set : tcemu::mmasim_evidence_sets()) {
    std::cout << set.name << "  K=" << set.datapath.instruction_k << "\n  scenarios:";
    for (const std::string_view s : tcemu::evidence_scenarios(set.datapath)) std::cout << " " << s;
    std::cout << "\n  rows:";
    for (const std::string& row : set.rows) std::cout << "  " << row << ";";
    std::cout << "\n  MMA-Sim:";
    for (const tcemu::MmaSimInstruction& m : set.mmasim) {
      std::cout << "  " << m.cls << "('" << m.arch << "', '" << m.shape_and_type << "');";
    }
    std::cout << "\n";
  }
  return 0;
}

int write(const Options& o) {
  std::vector<tcemu::EvidenceSet> sets = tcemu::mmasim_evidence_sets();
  for (const std::string& name : o.sets) {
    if (std::none_of(sets.begin(), sets.end(),
                     [&](const tcemu::EvidenceSet& s) { return s.name == name; })) {
      usage_error("--sets: no set '" + name + "' (mmasim_cases list names them)");
    }
  }
  std::filesystem::create_directories(o.dir);
  const std::string manifest_path = o.dir + "/cases.tsv";
  std::ofstream manifest(manifest_path);
  if (!manifest) throw std::runtime_error(manifest_path + ": cannot open for writing");
  manifest << "# mmasim_cases write --count " << (o.has_count ? o.count : 10000) << " --seed "
           << o.seed << "\n"
           << tcemu::evidence_manifest_header() << "\n";
  for (const tcemu::EvidenceSet& set : sets) {
    if (!o.sets.empty() && std::find(o.sets.begin(), o.sets.end(), set.name) == o.sets.end()) {
      continue;
    }
    manifest << tcemu::write_evidence_cases(set, o.seed, o.has_count ? o.count : 10000, o.dir)
             << "\n";
  }
  manifest.close();
  if (!manifest) throw std::runtime_error(manifest_path + ": write error");
  return 0;
}

int check(const Options& o) {
  const std::vector<tcemu::EvidenceSetResult> results =
      tcemu::check_evidence_folder(o.dir, o.count, o.show, o.threads);
  std::uint64_t cases = 0;
  std::uint64_t mismatches = 0;
  std::size_t failed_sets = 0;
  std::cout << "| set | preset rows | MMA-Sim instructions | cases | mismatches |\n"
               "|---|---|---|---|---|\n";
  for (const tcemu::EvidenceSetResult& r : results) {
    std::cout << "| " << r.set.name << " | " << r.set.rows.size() << " | " << r.set.mmasim.size()
              << " | ";
    if (!r.error.empty()) {
      std::cout << "- | " << r.error << " |\n";
      ++failed_sets;
      continue;
    }
    std::cout << r.check.cases << " | " << r.check.mismatches << " |\n";
    cases += r.check.cases;
    mismatches += r.check.mismatches;
    if (r.check.mismatches > 0) ++failed_sets;
  }
  std::cout << "\n"
            << mismatches << " mismatches in " << cases << " cases of " << results.size()
            << " sets";
  if (failed_sets > 0) std::cout << "; " << failed_sets << " sets failed";
  std::cout << ".\n";
  for (const tcemu::EvidenceSetResult& r : results) {
    for (const tcemu::EvidenceMismatch& m : r.check.first) {
      std::cout << tcemu::describe_mismatch(r.set, r.seed, m) << "\n";
    }
  }
  return failed_sets == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) usage_error("no command");
  if (std::find(args.begin(), args.end(), "--help") != args.end() ||
      std::find(args.begin(), args.end(), "-h") != args.end()) {
    std::cout << kUsage;
    return 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    if (args[0] == "list") {
      if (!rest.empty()) usage_error("list takes no options");
      return list();
    }
    if (args[0] == "write") return write(parse(rest, "--out", {"--count", "--seed", "--sets"}));
    if (args[0] == "check") {
      return check(parse(rest, "--results", {"--count", "--show", "--threads"}));
    }
  } catch (const std::exception& e) {
    std::cerr << "mmasim_cases: " << e.what() << "\n";
    return 1;
  }
  usage_error("unknown command '" + args[0] + "'");
}

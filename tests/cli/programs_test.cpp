// Every program a user runs besides tcemu (the experiments and the benchmarks, TCEMU_PROGRAMS)
// answers --help and refuses an unknown option the same way, before it computes anything,
// touches a GPU or writes a file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.hpp"

namespace {

using tcemu::test::Result;
using tcemu::test::shell;

std::vector<std::string> programs() {
  std::vector<std::string> paths;
  std::stringstream in(TCEMU_PROGRAMS);
  for (std::string path; std::getline(in, path, ',');) {
    if (!path.empty()) paths.push_back(path);
  }
  return paths;
}

// An empty folder to run a program in, removed at the end of the test.
struct Folder {
  Folder()
      : path(std::filesystem::temp_directory_path() /
             ("tcemu_programs_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directory(path);
  }
  ~Folder() { std::filesystem::remove_all(path); }
  bool empty() const { return std::filesystem::is_empty(path); }
  // `program ARGUMENTS` run in the folder, stdout and stderr together.
  Result run(const std::string& program, const std::string& arguments) const {
    return shell("cd " + path.string() + " && " + program + " " + arguments + " 2>&1");
  }
  std::filesystem::path path;
};

TEST(Programs, AllAreListed) {
  // The experiments at least; the GPU programs and benchmarks where the build has them.
  EXPECT_GE(programs().size(), 4u);
}

TEST(Programs, HelpPrintsTheUsageAndExitsZero) {
  for (const std::string& program : programs()) {
    const std::string name = std::filesystem::path(program).filename().string();
    for (const char* help : {"--help", "-h"}) {
      const Folder folder;
      const Result r = folder.run(program, help);
      EXPECT_EQ(r.status, 0) << name << " " << help << ": " << r.output;
      EXPECT_TRUE(r.output.starts_with("usage: " + name)) << name << ": " << r.output;
      EXPECT_NE(r.output.find("\n\n"), std::string::npos) << name << ": no description";
      EXPECT_TRUE(folder.empty()) << name << " " << help << " wrote a file";
    }
  }
}

TEST(Programs, UnknownOptionIsAUsageErrorNamingIt) {
  for (const std::string& program : programs()) {
    const std::string name = std::filesystem::path(program).filename().string();
    const Folder folder;
    const Result r = folder.run(program, "--bogus 1");
    EXPECT_EQ(r.status, 2) << name << ": " << r.output;
    EXPECT_EQ(r.output, name + ": unknown option --bogus\n(see '" + name + " --help')\n");
    EXPECT_TRUE(folder.empty()) << name << " wrote a file";
  }
}

TEST(Programs, ExperimentsCheckTheirWordsBeforeWritingAFile) {
  const std::string dir = std::filesystem::path(programs().front()).parent_path().string();
  const Folder folder;
  // The experiment's name used to become the CSV's: "--help.csv", "bogus.csv".
  Result r = folder.run(dir + "/ozaki_experiments", "bogus");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("unknown experiment 'bogus' (table, phi, size, repro)"),
            std::string::npos)
      << r.output;
  r = folder.run(dir + "/ozaki_experiments", "size --sizes 16,x");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--sizes expects an integer, got 'x'"), std::string::npos) << r.output;
  r = folder.run(dir + "/accurate_experiments", "table --n 0");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--n must be in [1, 1000000], got 0"), std::string::npos) << r.output;
  r = folder.run(dir + "/markidis_accuracy", "--dists type9");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("unknown distribution 'type9'"), std::string::npos) << r.output;
  r = folder.run(dir + "/markidis_split", "--samples");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--samples needs a value"), std::string::npos) << r.output;
  EXPECT_TRUE(folder.empty());
}

TEST(Programs, MarkidisSplitWritesItsTables) {
  const std::string dir = std::filesystem::path(programs().front()).parent_path().string();
  const Folder folder;
  const Result r = folder.run(dir + "/markidis_split", "--samples 100 --out=tables");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(folder.path / "tables" / "markidis-split-bits.csv"));
  EXPECT_TRUE(std::filesystem::exists(folder.path / "tables" / "markidis-split-underflow.csv"));
}

// A CSV that could not be written whole (past a file size limit of 0, SIGXFSZ ignored) is an
// error naming it, exit 1, and no partial file is left (it was a silent exit 0).
TEST(Programs, ExperimentsCheckTheirCsvWrites) {
  const std::string dir = std::filesystem::path(programs().front()).parent_path().string();
  for (const auto& [command, csv] : std::vector<std::pair<std::string, std::string>>{
           {"ozaki_experiments table --n 4 --out t.csv", "t.csv"},
           {"accurate_experiments condition --n 10 --out c.csv", "c.csv"},
           {"markidis_split --samples 100 --out tables", "tables/markidis-split-bits.csv"},
           {"markidis_accuracy --size 4 --k 16 --schemes markidis --archs sm90 --out acc",
            "acc/markidis-accuracy.csv"}}) {
    const Folder folder;
    const Result r = folder.run("trap '' XFSZ; ulimit -f 0;", dir + "/" + command);
    EXPECT_EQ(r.status, 1) << command << ": " << r.output;
    EXPECT_NE(r.output.find(": error writing " + csv + ": File too large"), std::string::npos)
        << command << ": " << r.output;
    EXPECT_FALSE(std::filesystem::exists(folder.path / csv)) << command;
  }
}

}  // namespace

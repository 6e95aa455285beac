// The integer mma.sync results we recorded on the H100 (tests/data/h100-imma) replay through the
// sm90 integer presets with zero mismatches: every shape, every pair of operand formats, with and
// without .satfinite. Each file's header names its datapath (the `tcemu validate` line).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <tcemu/cases/integer_case_file.hpp>
#include <tcemu/emulator/integer_presets.hpp>

namespace tcemu {
namespace {

// The datapath of the header line "# validate: tcemu validate --arch A --instr I --type T
// --b-type B --acc s32 [--satfinite] FILE".
IntegerDatapath header_datapath(const std::string& line, std::string& instruction) {
  std::istringstream words(line);
  std::string word, arch, a, b;
  bool satfinite = false;
  while (words >> word) {
    if (word == "--arch") words >> arch;
    if (word == "--instr") words >> instruction;
    if (word == "--type") words >> a;
    if (word == "--b-type") words >> b;
    satfinite |= word == "--satfinite";
  }
  return integer_preset(arch, *integer_format_by_name(a), *integer_format_by_name(b), instruction,
                        satfinite);
}

TEST(H100ImmaProbe, EveryRecordedCaseReplaysThroughTheSm90Preset) {
  std::set<std::string> variants;
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TCEMU_H100_IMMA_DIR)) {
    if (entry.path().extension() != ".txt") continue;
    ++files;
    std::ifstream in(entry.path());
    std::string text, instruction;
    std::optional<IntegerDatapath> dp;
    std::size_t cases = 0, crafted = 0, mismatches = 0;
    for (std::size_t line = 1; std::getline(in, text); ++line) {
      if (text.starts_with("# validate: ")) dp = header_datapath(text, instruction);
      if (text.starts_with("# crafted: ")) ++crafted;
      if (!dp) continue;
      const auto c = parse_integer_case_line(text, line, dp->a_format, dp->b_format);
      if (!c) continue;
      ASSERT_TRUE(c->d.has_value()) << entry.path() << ":" << line;
      ++cases;
      const std::int32_t got = integer_mma_element(*dp, c->a, c->b, c->c);
      if (got != *c->d && ++mismatches <= 3) {
        ADD_FAILURE() << entry.path().filename() << ":" << line << ": H100 "
                      << to_hex(integer_formats::s32, *c->d) << ", emulator "
                      << to_hex(integer_formats::s32, got);
      }
    }
    ASSERT_TRUE(dp.has_value()) << entry.path() << " has no '# validate:' header";
    EXPECT_GE(cases, 100u) << entry.path();
    EXPECT_GE(crafted, 30u) << entry.path();
    EXPECT_EQ(mismatches, 0u) << entry.path() << " through " << describe(*dp);
    variants.insert(instruction + " " + std::string(dp->a_format.name) + " " +
                    std::string(dp->b_format.name) + " " + std::string(name_of(dp->overflow)));
  }
  // Six mma.sync shapes and wgmma x four format pairs x wrap / .satfinite, one file each.
  EXPECT_EQ(files, 56u);
  EXPECT_EQ(variants.size(), 56u);
}

}  // namespace
}  // namespace tcemu

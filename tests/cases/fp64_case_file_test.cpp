// The fp64 case line (fp64_case_file.hpp) and the DMMA probe cases (fp64_probe_cases.hpp): the
// crafted cases must tell apart every pair of the datapath variants the probe compares (k order
// ascending or descending, fused or unfused steps), and say so in the results their names give.
#include <gtest/gtest.h>

#include <bit>
#include <set>
#include <string>

#include <tcemu/cases/fp64_probe_cases.hpp>
#include <tcemu/emulator/fp64_presets.hpp>

namespace tcemu {
namespace {

template <typename F>
std::string case_error(F&& f) {
  try {
    f();
  } catch (const CaseFileError& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(Fp64CaseFile, LinesRoundTripAndBadWordsAreNamed) {
  const std::string text =
      "2 3ff0000000000000 bff0000000000000 4000000000000000 7ff8000000000001 0000000000000000 "
      "8000000000000000";
  const auto c = parse_fp64_case_line(text, 1);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->a, (std::vector<std::uint64_t>{0x3FF0000000000000ull, 0xBFF0000000000000ull}));
  EXPECT_EQ(c->b[1], 0x7FF8000000000001ull);
  EXPECT_EQ(c->c, 0u);
  EXPECT_EQ(c->d, 0x8000000000000000ull);
  EXPECT_EQ(format_fp64_case_line(*c), text);
  EXPECT_FALSE(parse_fp64_case_line("# comment", 2));
  EXPECT_FALSE(parse_fp64_case_line("  ", 3));
  EXPECT_EQ(case_error([] { parse_fp64_case_line("1 3ff0 3ff0000000000000 0000000000000000", 4); }),
            "line 4: a_0 '3ff0' must be 16 hex digits (fp64)");
  EXPECT_EQ(case_error([] {
              parse_fp64_case_line("1 3ff000000000000g 3ff0000000000000 0000000000000000", 5);
            }),
            "line 5: a_0 '3ff000000000000g' is not hexadecimal");
  EXPECT_EQ(case_error([] { parse_fp64_case_line("2 3ff0000000000000 0000000000000000", 6); }),
            "line 6: K = 2 needs 2K + 2 fields (K, 2 a, 2 b, c) or 2K + 3 with a recorded d, "
            "found 3");
  EXPECT_EQ(fp64_hex(1), "0000000000000001");
}

std::vector<Fp64Datapath> variants(int k) {
  std::vector<Fp64Datapath> out;
  for (const Fp64Order o : {Fp64Order::ascending, Fp64Order::descending}) {
    for (const Fp64Step s : {Fp64Step::fused, Fp64Step::unfused}) {
      out.push_back({k, o, s, kFp64PresetNan});
    }
  }
  return out;
}

TEST(Fp64ProbeCases, CraftedCasesTellEveryPairOfVariantsApart) {
  for (const int k : {4, 8, 16}) {
    const Fp64ProbeCases crafted = fp64_crafted_cases(k);
    ASSERT_EQ(crafted.cases.size(), crafted.names.size());
    const std::vector<Fp64Datapath> v = variants(k);
    for (std::size_t x = 0; x < v.size(); ++x) {
      for (std::size_t y = x + 1; y < v.size(); ++y) {
        std::size_t differing = 0;
        for (const Fp64MmaCase& c : crafted.cases) {
          differing +=
              fp64_mma_element(v[x], c.a, c.b, c.c) != fp64_mma_element(v[y], c.a, c.b, c.c);
        }
        EXPECT_GT(differing, 0u) << "K = " << k << ": variants " << x << " and " << y;
      }
    }
  }
}

TEST(Fp64ProbeCases, TheOrderCasesGiveTheResultsTheirNamesSay) {
  const int k = 8;
  const Fp64ProbeCases crafted = fp64_crafted_cases(k);
  const Fp64Datapath up = fp64_preset("sm90", "mma.sync.m16n8k8");
  Fp64Datapath down = up;
  down.order = Fp64Order::descending;
  const std::uint64_t tiny = std::bit_cast<std::uint64_t>(0x1p-60);
  std::size_t order_cases = 0, up_tiny = 0, down_tiny = 0, c_first_zero = 0, c_cases = 0;
  std::size_t fused_cases = 0, fused_tiny = 0;
  for (std::size_t i = 0; i < crafted.cases.size(); ++i) {
    const Fp64MmaCase& c = crafted.cases[i];
    const std::uint64_t u = fp64_mma_element(up, c.a, c.b, c.c);
    const std::uint64_t d = fp64_mma_element(down, c.a, c.b, c.c);
    if (crafted.names[i].starts_with("order:")) {
      ++order_cases;
      up_tiny += u == tiny;
      down_tiny += d == tiny;
      EXPECT_NE(u, d) << crafted.names[i];
      EXPECT_TRUE(u == tiny || u == 0) << crafted.names[i];
    } else if (crafted.names[i].starts_with("c entry:")) {
      ++c_cases;
      c_first_zero += u == 0 && d == 0;
    } else if (crafted.names[i].starts_with("fusion:")) {
      ++fused_cases;
      fused_tiny += u == tiny;
    } else if (crafted.names[i].starts_with("roundings:")) {
      EXPECT_EQ(u, std::bit_cast<std::uint64_t>(1.0)) << crafted.names[i];
    }
  }
  EXPECT_EQ(order_cases, static_cast<std::size_t>(k * (k - 1)));
  EXPECT_EQ(up_tiny, order_cases / 2);  // exactly the pairs with -1 first
  EXPECT_EQ(down_tiny, order_cases / 2);
  EXPECT_EQ(c_first_zero, c_cases);
  EXPECT_EQ(fused_tiny, static_cast<std::size_t>(k));
}

TEST(Fp64ProbeCases, RandomCasesAreAFunctionOfSeedAndIndex) {
  const Fp64ProbeCases one = fp64_probe_cases(16, 3000, 7, 1);
  const Fp64ProbeCases all = fp64_probe_cases(16, 3000, 7, 0);
  ASSERT_EQ(one.cases.size(), all.cases.size());
  std::set<std::uint64_t> results;
  std::size_t nan_results = 0;
  const Fp64Datapath dp = fp64_preset("sm90");
  for (std::size_t i = 0; i < one.cases.size(); ++i) {
    EXPECT_EQ(format_fp64_case_line(one.cases[i]), format_fp64_case_line(all.cases[i]));
    const Fp64MmaCase& c = one.cases[i];
    ASSERT_EQ(c.a.size(), 16u);
    const std::uint64_t d = fp64_mma_element(dp, c.a, c.b, c.c);
    results.insert(d);
    nan_results += d == kFp64PresetNan;
  }
  EXPECT_GT(results.size(), 1500u);  // varied results (the special-value quarter is mostly NaN)
  EXPECT_GT(nan_results, 0u);        // the special-value scenario reaches NaN
  EXPECT_NE(format_fp64_case_line(fp64_probe_cases(16, 1, 8).cases[0]),
            format_fp64_case_line(one.cases[0]));
}

}  // namespace
}  // namespace tcemu

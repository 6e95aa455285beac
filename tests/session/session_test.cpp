// tcemu::session: the backend and engine tables, the products a backend implies, and the DGEMM
// checks and log lines of the LD_PRELOAD libraries (the option parser and the probe pipeline are
// exercised through the tcemu command, tests/cli/).
#include <gtest/gtest.h>

#include <cfenv>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/backends.hpp>
#include <tcemu/session/preload_route.hpp>
#include <tcemu/session/products.hpp>

namespace tcemu::session {
namespace {

TEST(BackendTable, NamesItsWordsAndRefusesOthersListingThem) {
  EXPECT_EQ(backend_names(), (std::vector<std::string>{"emulator", "cpu64", "gpu"}));
  EXPECT_EQ(engine_names(),
            (std::vector<std::string>{"fastest", "mma_sync", "wgmma", "cublas", "emulated"}));
  EXPECT_EQ(find_backend_choice("tpu"), nullptr);
  try {
    backend_choice("tpu");
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--backend must be emulator, cpu64 or gpu, got 'tpu'");
  }
  EXPECT_THROW(engine_choice("tensor"), UsageError);
  EXPECT_EQ(word_list({"a", "b", "c"}, "'"), "'a', 'b' or 'c'");
}

TEST(BackendTable, SaysWhatEachWordImpliesAndWhetherThisBuildHasIt) {
  const BackendChoice cpu64 = backend_choice("cpu64");  // a copy: GCC 13 warns of a reference
  EXPECT_EQ(cpu64.products, SliceProducts::binary64);
  EXPECT_FALSE(cpu64.gpu);
  const BackendChoice gpu = backend_choice("gpu");
  EXPECT_TRUE(gpu.gpu);
  EXPECT_EQ(gpu.built, gpu_built());
  EXPECT_TRUE(backend_choice("emulator").built);
  EXPECT_NE(make_backend(backend_choice("emulator"), {.threads = 1}), nullptr);
  if (!gpu.built) {
    try {
      make_backend(gpu);
      FAIL() << "no NotBuilt";
    } catch (const NotBuilt& e) {
      EXPECT_NE(std::string(e.what()).find("built without the CUDA backend"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Products, FollowTheSlicesThenTheBackend) {
  const Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  const auto tc = [&] { return dp; };
  const auto never = []() -> Datapath { throw std::logic_error("no datapath wanted"); };
  EXPECT_TRUE(std::holds_alternative<ozaki::CrtProducts>(
      ozaki_products(SliceProducts::binary64, OzakiSlices::crt, never)));
  EXPECT_TRUE(std::holds_alternative<ozaki::IntegerProducts>(
      ozaki_products(SliceProducts::tensor_cores, OzakiSlices::int8, never)));
  EXPECT_TRUE(std::holds_alternative<ozaki::Fp64Products>(
      ozaki_products(SliceProducts::binary64, OzakiSlices::floating, never)));
  const ozaki::Products on_tc =
      ozaki_products(SliceProducts::tensor_cores, OzakiSlices::floating, tc);
  ASSERT_TRUE(std::holds_alternative<ozaki::TensorCoreProducts>(on_tc));
  EXPECT_EQ(std::get<ozaki::TensorCoreProducts>(on_tc).datapath, dp);
}

TEST(PreloadRoute, ReadsTheVariablesAndFlagsOnlyABadValue) {
  std::map<std::string, std::string> env;
  const PreloadVariables variable = [&](const char* name) -> std::optional<std::string_view> {
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string_view>(it->second);
  };
  std::string why;
  bool bad = true;
  EXPECT_EQ(routing_from_variables(variable, why, bad), std::nullopt);
  EXPECT_EQ(why, "TCEMU_PRELOAD_SCHEME unset");
  EXPECT_FALSE(bad);
  env = {{"TCEMU_PRELOAD_SCHEME", "dgemm-crt"},
         {"TCEMU_PRELOAD_MODE", "tunable"},
         {"TCEMU_PRELOAD_MODULI", "14"},
         {"TCEMU_PRELOAD_WORKSPACE_GROW", "0"}};
  bad = true;
  EXPECT_EQ(routing_from_variables(variable, why, bad), (Routing{.scheme = Scheme::dgemm_crt,
                                                                 .mode = ozaki::Mode::tunable,
                                                                 .count = 14,
                                                                 .workspace_grows = false}));
  EXPECT_FALSE(bad);
  env["TCEMU_PRELOAD_MIN_SIZE"] = "-1";
  EXPECT_EQ(routing_from_variables(variable, why, bad), std::nullopt);
  EXPECT_TRUE(bad);
  EXPECT_EQ(why,
            "TCEMU_PRELOAD_MIN_SIZE='-1' is not a non-negative integer; calls fall through to the "
            "BLAS");
}

TEST(PreloadRoute, ChecksADgemmInTheBlasOrderThenTheMinimumSize) {
  const Routing r{.min_size = 8};
  const DgemmCall ok{"dgemm_", 'N', 'T', 10, 9, 8, 10, 9, 10};
  EXPECT_EQ(refusal(ok, r), std::nullopt);
  DgemmCall bad = ok;
  bad.transa = 0;
  bad.m = -1;
  EXPECT_EQ(refusal(bad, r), "an operation other than N, T, C");
  bad.transa = 'N';
  bad.lda = 0;
  EXPECT_EQ(refusal(bad, r), "a negative dimension");
  bad.m = 10;
  EXPECT_EQ(refusal(bad, r), "a leading dimension too small");
  EXPECT_EQ(refusal(ok, r, true), "a null alpha or beta");
  DgemmCall small = ok;
  small.k = 7;
  EXPECT_EQ(refusal(small, r), "below TCEMU_PRELOAD_MIN_SIZE=8");
  // B is op(B) = B^T: n x k stored, so ldb must hold n rows.
  DgemmCall short_b = ok;
  short_b.ldb = 8;
  EXPECT_EQ(refusal(short_b, r), "a leading dimension too small");
}

TEST(PreloadRoute, WritesTheLogLinesOfBothLibraries) {
  const DgemmCall call{"cblas_dgemm", 'T', 0, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(call_shape(call), "cblas_dgemm T? m 4 n 5 k 6 lda 7 ldb 8 ldc 9");
  EXPECT_EQ(fell_through_line(call, "the BLAS", "why"),
            "cblas_dgemm T? m 4 n 5 k 6 lda 7 ldb 8 ldc 9: fell through to the BLAS (why)");
  ozaki::Report report;
  report.slices_a = 14;
  report.slices_b = 14;
  report.gemms = 14;
  report.blocks = 1;
  const Routing crt{.scheme = Scheme::dgemm_crt, .mode = ozaki::Mode::tunable, .count = 14};
  EXPECT_EQ(routed_line(call, crt, " on the emulator", report, 1, 0, 0.5, ""),
            "cblas_dgemm T? m 4 n 5 k 6 lda 7 ldb 8 ldc 9: routed to dgemm-crt mode tunable count "
            "14 on the emulator (moduli 14, GEMMs 14, blocks 1), alpha 1 beta 0, 0.5 s");
  const Routing tc{.scheme = Scheme::dgemm_tc};
  EXPECT_EQ(routed_line(call, tc, "", report, 2, 1, 0.25, "workspace grown"),
            "cblas_dgemm T? m 4 n 5 k 6 lda 7 ldb 8 ldc 9: routed to dgemm-tc mode dp (slices "
            "14/14, GEMMs 14, blocks 1), alpha 2 beta 1, 0.25 s; workspace grown");
  // A complex call's scalars, and its 'C' (op(A) is k x m: lda must hold k rows).
  const DgemmCall zgemm{"zgemm_", 'C', 'N', 4, 5, 6, 6, 6, 4};
  EXPECT_EQ(refusal(zgemm, tc), std::nullopt);
  DgemmCall short_a = zgemm;
  short_a.lda = 4;
  EXPECT_EQ(refusal(short_a, tc), "a leading dimension too small");
  EXPECT_NE(routed_line(zgemm, tc, "", report, {0.5, -2}, {1, 0}, 0.25, "")
                .find("zgemm_ CN m 4 n 5 k 6 lda 6 ldb 6 ldc 4: routed to dgemm-tc mode dp (slices "
                      "14/14, GEMMs 14, blocks 1), alpha (0.5, -2) beta 1, 0.25 s"),
            std::string::npos);
}

// Single precision (sgemm, cgemm) takes mode sp for dp and keeps tunable and cr, asked for or
// from a directed caller rounding (its direction kept).
TEST(PreloadRoute, SinglePrecisionTakesSpForDpAndKeepsCrAndTunable) {
  const Routing dp{.scheme = Scheme::dgemm_crt};
  const Routing sp = for_single_precision(dp);
  EXPECT_EQ(sp.mode, ozaki::Mode::sp);
  EXPECT_STREQ(ozaki::mode_name(sp.mode), "sp");
  const Routing tunable{.scheme = Scheme::dgemm_tc, .mode = ozaki::Mode::tunable, .count = 3};
  EXPECT_EQ(for_single_precision(tunable), tunable);
  const Routing cr{.scheme = Scheme::dgemm_crt, .mode = ozaki::Mode::cr};
  EXPECT_EQ(for_single_precision(cr), cr);
  const Routing down = with_caller_rounding(dp, FE_DOWNWARD);
  EXPECT_EQ(for_single_precision(down), down);
  EXPECT_EQ(for_single_precision(down).rounding, fp64::Direction::downward);
}

// A directed rounding (TCEMU_PRELOAD_ROUNDING, or the caller's mode at the call) makes the mode
// cr in that direction, whatever TCEMU_PRELOAD_MODE says; to nearest changes nothing; the log
// says which asked.
TEST(PreloadRoute, DirectedRoundingMakesTheModeCr) {
  setenv("TCEMU_PRELOAD_SCHEME", "dgemm-crt", 1);
  setenv("TCEMU_PRELOAD_MODE", "tunable", 1);
  setenv("TCEMU_PRELOAD_MODULI", "14", 1);
  std::string why;
  const std::optional<Routing> plain = routing_from_environment(why);
  ASSERT_TRUE(plain.has_value()) << why;
  EXPECT_EQ(plain->mode, ozaki::Mode::tunable);
  EXPECT_EQ(with_caller_rounding(*plain, FE_TONEAREST), *plain);
  const Routing up = with_caller_rounding(*plain, FE_UPWARD);
  EXPECT_EQ(up.mode, ozaki::Mode::cr);
  EXPECT_EQ(up.rounding, fp64::Direction::upward);
  EXPECT_TRUE(up.rounding_from_caller);
  EXPECT_EQ(with_caller_rounding(*plain, FE_DOWNWARD).rounding, fp64::Direction::downward);
  EXPECT_EQ(with_caller_rounding(*plain, FE_TOWARDZERO).rounding, fp64::Direction::toward_zero);
  setenv("TCEMU_PRELOAD_ROUNDING", "toward-zero", 1);
  const std::optional<Routing> asked = routing_from_environment(why);
  ASSERT_TRUE(asked.has_value()) << why;
  EXPECT_EQ(asked->mode, ozaki::Mode::cr);
  EXPECT_EQ(asked->rounding, fp64::Direction::toward_zero);
  EXPECT_FALSE(asked->rounding_from_caller);
  const DgemmCall call{"dgemm_", 'N', 'N', 4, 5, 6, 4, 6, 4};
  ozaki::Report report;
  EXPECT_NE(routed_line(call, *asked, "", report, 1, 0, 0.5, "")
                .find("mode cr rounding toward-zero (TCEMU_PRELOAD_ROUNDING)"),
            std::string::npos);
  EXPECT_NE(routed_line(call, up, "", report, 1, 0, 0.5, "")
                .find("mode cr rounding upward (the caller's rounding mode)"),
            std::string::npos);
  setenv("TCEMU_PRELOAD_ROUNDING", "up", 1);
  EXPECT_FALSE(routing_from_environment(why).has_value());
  EXPECT_NE(why.find("TCEMU_PRELOAD_ROUNDING='up' is not nearest, upward, downward or toward-zero"),
            std::string::npos)
      << why;
  for (const char* name : {"TCEMU_PRELOAD_SCHEME", "TCEMU_PRELOAD_MODE", "TCEMU_PRELOAD_MODULI",
                           "TCEMU_PRELOAD_ROUNDING"}) {
    unsetenv(name);
  }
}

}  // namespace
}  // namespace tcemu::session

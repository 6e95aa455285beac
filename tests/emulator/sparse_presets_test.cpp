// The sparse MMA presets (mma.sp, 2:4 structured sparsity): each is the dense datapath of the
// K/2 kept products; tests/cases/sparse_case_test.cpp runs sparse cases through them.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/sparse_presets.hpp>

namespace tcemu {
namespace {

using formats::bf16;
using formats::fp16;
using formats::fp32;

TEST(SparsePresets, Sm90RunsTheKeptProductsAsTheDenseHalfKShape) {
  EXPECT_EQ(sparse_instruction_names("sm90"),
            (std::vector<std::string_view>{"mma.sp.m16n8k8", "mma.sp.m16n8k16", "mma.sp.m16n8k32",
                                           "mma.sp.m16n8k64"}));
  EXPECT_TRUE(sparse_instruction_names("sm80").empty());
  EXPECT_EQ(sparse_preset("sm90", fp16, fp32, "mma.sp.m16n8k16"),
            preset("sm90", fp16, fp32, "mma.sync.m16n8k8"));
  EXPECT_EQ(sparse_preset("sm90", bf16, fp32, "mma.sp.m16n8k32"),
            preset("sm90", bf16, fp32, "mma.sync.m16n8k16"));
  EXPECT_EQ(sparse_preset("sm90", fp16, formats::fp16, "mma.sp.m16n8k32").block_terms, 16);
  EXPECT_EQ(sparse_instruction_k("mma.sp.m16n8k32"), 32);
  EXPECT_EQ(sparse_instruction_k("mma.sp.m16n8k64"), 64);
  EXPECT_THROW(sparse_instruction_k("mma.sync.m16n8k16"), std::invalid_argument);
  EXPECT_EQ(sparse_preset("sm90", formats::tf32, fp32, "mma.sp.m16n8k8"),
            preset("sm90", formats::tf32, fp32, "mma.sync.m16n8k4"));
  try {
    sparse_preset("sm90", formats::tf32, fp32, "mma.sp.m16n8k32");
    ADD_FAILURE() << "tf32 has no k32 sparse preset";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sm90 has: mma.sp.m16n8k8 tf32 -> fp32, mma.sp.m16n8k16"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(sparse_preset("sm80", fp16, fp32, "mma.sp.m16n8k16"), std::invalid_argument);
}

// fp8 mma.sp.m16n8k64 (measured on the H100): the dense sm90 fp8 m16n8k32 (two interleaved
// 16-term halves from 0, c added by an RN add) over the 32 kept products; fp32 accumulator only
// (ptxas refuses the fp16 one).
TEST(SparsePresets, Fp8K64IsTheDenseK32OverTheKeptProducts) {
  for (const FloatFormat& f8 : {formats::e4m3, formats::e5m2}) {
    const Datapath dp = sparse_preset("sm90", f8, fp32, "mma.sp.m16n8k64");
    EXPECT_EQ(dp, preset("sm90", f8, fp32, "mma.sync.m16n8k32"));
    EXPECT_EQ(dp.k_group, 2);
    EXPECT_EQ(dp.c_entry, AccumulatorEntry::added_after_blocks);
  }
  EXPECT_THROW(sparse_preset("sm90", formats::e4m3, formats::fp16, "mma.sp.m16n8k64"),
               std::invalid_argument);
  EXPECT_THROW(sparse_preset("sm90", fp16, fp32, "mma.sp.m16n8k64"), std::invalid_argument);
}

}  // namespace
}  // namespace tcemu

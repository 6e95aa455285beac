// The order in which the Ozaki scheme multiplies slices and sums their products: which slice
// pairs a mode takes (fast mode or every pair) and in what order, level by level. The scheme
// (scheme.cpp) and `tcemu explain` both read it from here, so the order is written once.
//
// Slice p of A (1-based, p = 1 the most significant) times slice q of B is a product of level
// l = p + q: its scale is 2^(e_Ap + e_Bq), of the order of 2^-(l - 2) b relative to the first
// level's (b bits per slice). The levels are taken in ascending order, and within a level the
// pairs in ascending p. That is the order of the GEMMs and of the DP / SP / tunable FP64 sum
// (each product added to the sum in this order), hence part of the bits of the result.
#pragma once

#include <vector>

#include <tcemu/ozaki/options.hpp>

namespace tcemu::ozaki {

// Slice p of A times slice q of B, 1-based.
struct SlicePair {
  int p = 0;
  int q = 0;
};

// Which pairs a mode multiplies: every pair of the stored slices (fast off), or only the levels
// p + q <= d + 1 (fast mode: d(d + 1) / 2 products when A and B both have d slices).
struct PairRule {
  int d = 0;  // slices per matrix (dp, sp, cr: the most; the scheme lowers it to the levels used)
  bool fast = true;
};

// The rule `options` asks for: dp, sp and cr take d = max_splits (the scheme then lowers it to
// the number of levels after which the remainders of A and of B are zero), fast mode for dp and
// sp, every pair for cr; tunable takes the user's splits and fast.
PairRule pair_rule(const Options& options);

// The slice pairs of slices_a slices of A and slices_b slices of B (>= 0) under `rule`, level by
// level: element i holds the pairs of level l = i + 2 in ascending p, for l = 2 up to
// slices_a + slices_b, or up to d + 1 in fast mode if that is lower.
std::vector<std::vector<SlicePair>> product_levels(int slices_a, int slices_b, PairRule rule);

}  // namespace tcemu::ozaki

// How wide a slice may be and how many slices a mode takes.
//
// Exactness of the products. A slice element is an integer q with |q| <= 2^b (Backend::
// split_level), so a product of two slices over k terms is a sum of k integers of magnitude
// <= 2^(2b), and every partial sum, in any order, is an integer of magnitude <= k 2^(2b).
//  * Tensor cores: let P = min(block_result_precision, alignment_fraction_bits + 1) for an fp32
//    accumulator. If k 2^(2b) < 2^P, every partial sum and every block's c is an integer below
//    2^P, so the largest alignment exponent of a block is <= P - 1 and the grid 2^(emax - nf) is
//    <= 1 (nf >= P - 1): truncation drops nothing; a block sum below 2^P fits the P kept bits, so
//    RZ and RN are exact; the next block starts from an exact c. An alignment floor f only
//    matters when f - nf > 0 (grid above 1), which is refused. Hence the GPU's accumulation order
//    does not matter and every datapath with the same P gives the same product bits.
//  * FP64 GEMM: P = 53; partial sums are integers below 2^53, exact in binary64 in any order,
//    with or without fused multiply-adds.
// The widest b with k 2^(2b) < 2^P, i.e. k < 2^(P - 2b), capped by what the slice format holds
// (fp16: 11 bits, binary64: 51, the limit of split_level).
#pragma once

#include <cstdint>

#include <tcemu/ozaki/options.hpp>

namespace tcemu::ozaki {

// P of the products (above). Throws std::invalid_argument when the datapath cannot multiply
// slices exactly (accumulator not fp32, alignment floor above the grid of integers, or P < 3).
int exact_product_bits(const Products& products);

// The widest slice b for inner dimension k (k >= 1). Throws std::invalid_argument when even
// b = 1 is not exact (k >= 2^(P - 2)).
int slice_bits(const Products& products, std::int64_t k);

// d for modes dp (p_in = 53) and sp (p_in = 24), fast mode: the smallest d with
//   (d + 2) 2^(2 - d b) <= 2^(-p_in) sqrt(k).
// Derivation: after level s the remainder of a vector is below 2^(E + 1 - s b) (split_level
// lowers the leading exponent by at least b per level), so the terms fast mode leaves out, bounded
// by the row and column maxima mu_A, mu_B, are below k mu_A mu_B (d + 2) 2^(2 - d b) (the pairs
// with p + q = d + 2 dominate; the rest is a geometric tail within the factor counted). The
// right-hand side is half the probabilistic error bound of FP64 (FP32) GEMM, 2 sqrt(k) u |a||b|
// with u = 2^-p_in, taking |a||b| as k mu_A mu_B. This is the test of Algorithm 3 of Mukunoki et
// al. evaluated with the row and column maxima in place of |A| |B| e, so it is data-independent;
// where rows mix very different magnitudes DP mode is less accurate than FP64 GEMM
// (docs/results/ozaki-accuracy.md).
int splits_for_accuracy(int bits, std::int64_t k, int input_precision);

}  // namespace tcemu::ozaki

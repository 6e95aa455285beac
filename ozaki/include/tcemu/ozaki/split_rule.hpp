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
//  * FP64 GEMM: P = 53; k 2^(2b) <= 2^53 suffices: partial sums are integers of magnitude
//    <= 2^53, all exact in binary64, in any order, with or without fused multiply-adds. This is
//    the slice width of Ozaki et al. (2012) that Algorithm 1 of Mukunoki et al. (ISC 2020) and
//    OzBLAS's getRho use for binary64 slices, rho = ceil((53 + log2 k) / 2) and b = 53 - rho:
//    one bit wider than the strict bound when k = 2^j with j odd (k = 2, 8, 32, 128, ...).
//  * Integer GEMM (IntegerProducts): P = 31; partial sums are integers below 2^31, exact in
//    int32 in any order (Backend::integer_gemm).
// The widest b with k 2^(2b) < 2^P (tensor cores, int32) or <= 2^53 (binary64), capped by what
// the slice format holds (fp16: 11 bits, int8: 6, binary64: 51, the limit of split_level).
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

// How DP and SP modes choose d (scheme.cpp): the number of levels after which the remainders of
// A and of B are zero, i.e. every bit of every element is in some slice, with fast mode (only
// the pairs p + q <= d + 1). Our reading of Algorithm 3 of Mukunoki et al., which raises d with
// the exponent spread of the inputs: a bound from the row and column maxima alone
// (k mu_A mu_B (d + 2) 2^(2 - d b) against 2 sqrt(k) u |A||B|) is data-independent and loses
// every element whose value comes from entries far below its row's maximum (max relative error
// 8 at phi = 10, n = 256 in our runs), while splitting to the end costs little more for
// inputs without spread (53 bits need ceil(53 / b) levels either way). The dropped pairs are
// products of two deep slices, each small relative to its own row or column.

}  // namespace tcemu::ozaki

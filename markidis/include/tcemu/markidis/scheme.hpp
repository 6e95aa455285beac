// One composable description of an error-corrected SGEMM (the Markidis family: Markidis et
// al. 2018; Ootomo and Yokota, IJHPCA 36(4), 2022; CUTLASS 3xTF32; Henry, Tang and Heinecke
// 2019). Every choice is a field; the published schemes are named presets of it
// (presets.hpp), and a user can build variants no paper tried.
//
// What a Scheme computes, for fp32 A (m x k) and B (k x n):
//
//  1. Split. Each of A and B is cut into parts.size() parts of part_format. With r_0 = x and the
//     matrix's scaling exponent t (0 unless scale_to_exponent is set):
//       part_p = round(r_p * 2^(t + parts[p].scale_exponent)) with parts[p].rounding,
//       r_(p+1) = r_p - part_p * 2^-(t + parts[p].scale_exponent)       (exact in fp32)
//     (Backend::split_fp32; the last residual is dropped). So x ~ sum_p part_p 2^-(t + s_p).
//  2. Products. Each accumulator group is one fp32 accumulator G. Its products A_i B_j run in the
//     listed order as one chain on the Tensor Core datapath: the first from an accumulator of +0,
//     each next one continuing from the previous result (C = initial accumulator), every
//     takeout_every_instructions instructions of k leaving the Tensor Core with an fp32 RN add
//     (GemmOptions::takeout_every_k; 0: never). Every product of a group must carry the same
//     weight sigma = s_i + s_j, so that G ~ (A B) 2^(sigma + tA + tB).
//  3. Combination, in fp32 RN (Backend::combine_fp32): acc = G_0; for g = 1, 2, ...:
//       acc = RN(acc + RN(G_g * 2^(sigma_0 - sigma_g))),
//     then AB = RN(acc * 2^-(sigma_0 + tA + tB)). Where A or B holds NaN or Inf, AB takes the value
//     SGEMM's exact sum has there (Backend::propagate_nonfinite_fp32). Last the BLAS epilogue
//     D = alpha AB + beta C (combine_fp32's: RN(alpha AB) when beta == 0, else
//     RN(fma(alpha, AB, RN(beta C)))). When there are no special values, the last combination
//     step carries the epilogue itself; the bits are the same.
//
// Range. A part that overflows its format (Backend::split_fp32's count) is never used: without
// scale_to_exponent the scheme throws std::invalid_argument naming the matrix, the part and the
// largest magnitude; with it, each matrix is first scaled by the power of two t that puts its
// largest finite magnitude's exponent at scale_to_exponent (exact: the split rounds the real
// x * 2^(t + s)), which is the matrix-level scaling of Ootomo and Yokota. One power of two per
// matrix cannot hold every element: a nonzero element below 2^-(t + s_max) times the part
// format's smallest subnormal (s_max: the largest scale_exponent of the parts used; for
// halfhalf-scaled about 2^-49 of the largest's power of two) would be lost or kept as at most
// one unit, so a scaled scheme throws std::invalid_argument naming the matrix, the count and that
// magnitude range instead (no per-row or per-column scaling: scale such a matrix first).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu::markidis {

struct PartSpec {
  Rounding rounding;       // of the part: RN or RZ (truncation)
  int scale_exponent = 0;  // the residual enters the part multiplied by 2^scale_exponent
};

struct Product {
  int a_part;  // index into Scheme::parts for A
  int b_part;  // and for B
};

struct AccumulatorGroup {
  std::vector<Product> products;  // one chain, in this order
  // The chain leaves the Tensor Core every this many instructions of k (takeout_every_k =
  // this * the datapath's instruction_k); 0: the whole chain stays inside.
  int takeout_every_instructions = 0;
};

struct Scheme {
  std::string name;
  FloatFormat part_format;      // of every part; the datapath's input format
  std::vector<PartSpec> parts;  // parts[0] is the high part
  std::vector<AccumulatorGroup> groups;
  // Matrix-level scaling: the exponent the largest finite magnitude of A (and of B) is moved to;
  // nullopt: no scaling, a part overflow is an error.
  std::optional<int> scale_to_exponent;
};

// Throws std::invalid_argument naming the first field that is not usable: part_format not a split
// format (residual_split.hpp), no parts or groups, a part index out of range, an empty group,
// products of one group with different weights, a negative takeout interval, or a product listed
// twice.
void validate(const Scheme& scheme);

// Checks that `datapath` can run the products of `scheme`: its input format is the scheme's part
// format and its accumulator fp32. Throws std::invalid_argument otherwise.
void validate(const Scheme& scheme, const Datapath& datapath);

// `scheme` with every group that leaves the Tensor Core (takeout_every_instructions > 0) leaving
// it every `instructions` instructions instead; groups that stay inside still do (e.g. tf32tf32
// taking hi*hi out every 2 tf32 instructions, k = 16, the k of one of halfhalf's fp16 ones).
// Throws std::invalid_argument when instructions < 1 or no group of `scheme` takes out.
Scheme with_takeout_interval(Scheme scheme, int instructions);

// The weight sigma = s_i + s_j of a group (validate() makes it the same for all its products).
int group_weight(const Scheme& scheme, const AccumulatorGroup& group);

// One line describing every field, e.g. for a results table or an error message.
std::string describe(const Scheme& scheme);

}  // namespace tcemu::markidis

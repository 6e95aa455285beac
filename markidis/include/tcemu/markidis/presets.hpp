// The published error-corrected SGEMM schemes as presets of the Scheme description (Markidis et
// al. 2018; Ootomo and Yokota, IJHPCA 36(4), 2022; CUTLASS 3xTF32; Henry, Tang and Heinecke
// 2019). scheme_by_name is what `tcemu gemm --scheme NAME` looks names up with.
//
//   markidis         Markidis et al. 2018: fp16 hi = RN(a), lo = RN(a - hi); hi*hi, hi*lo, lo*hi
//                    in one accumulator, all inside the Tensor Core.
//   markidis4        the same with lo*lo as a fourth product.
//   halfhalf         Ootomo and Yokota 2022: fp16 hi = RN(a), lo = RN((a - hi) 2^11); hi*hi taken
//                    out of the Tensor Core after every instruction; hi*lo and lo*hi in a second
//                    accumulator, divided by 2^11 when combined; lo*lo dropped. No scaling: a
//                    matrix outside the fp16 range is refused.
//   halfhalf-scaled  halfhalf with the matrix-level scaling that puts each matrix's largest
//                    magnitude at 2^14 (room for the RN rounding up and for the scaled residual).
//                    A matrix with a nonzero element below about 2^-49 of its largest's power
//                    of two is refused (one scale per matrix would lose it; scheme.hpp).
//   tf32tf32         halfhalf's structure with tf32 parts (RN) and no residual scaling: the tf32
//                    range is fp32's.
//   3xtf32           CUTLASS 3xTF32: big = tf32 by truncation (RZ), small = RN(a - big);
//                    small*big, big*small, big*big in one accumulator.
//   bf16x3           Henry, Tang and Heinecke 2019: three bf16 parts (RN); the products
//                    b1*b0, b0*b1, b0*b0 (smallest first) in one accumulator.
//   bf16x9           the same with all nine products, smallest weight first.
#pragma once

#include <string_view>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/markidis/scheme.hpp>

namespace tcemu::markidis {

std::vector<std::string_view> scheme_names();

// The preset called `name`. Throws std::invalid_argument listing the known names otherwise.
Scheme scheme_by_name(std::string_view name);

// The datapath of `arch` (an emulator preset name: sm80, sm90, exact-rn, ...) running `scheme`'s
// products: preset(arch, scheme.part_format, fp32, instruction).
Datapath scheme_datapath(const Scheme& scheme, std::string_view arch,
                         std::string_view instruction = "mma.sync");

}  // namespace tcemu::markidis

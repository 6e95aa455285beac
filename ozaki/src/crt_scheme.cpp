// Ozaki scheme II (CrtProducts), blocked in m and n (run_crt_scheme, one function per step):
//
//   shifts of every row of A and column of B and the moduli count (scale): cr, sp: the exact
//     scaling (exact_scaling; Backend::crt_scale, every vector held exactly: the correctly
//     rounded product), the count from the bits the integers need; tunable (tunable_scaling):
//     the user's count and the norm scaling (norm_scale; Backend::crt_norm_scale); dp
//     (dp_scaling): the norm scaling with the fewest moduli (at least those of kDpNormBits)
//     whose gamma_A meets the bound of |A||B| from one more int8 GEMM, on the leading k / 16
//     terms where those ask for at most one modulus more than the least count (dp_bound_bits
//     below, crt_bounds.hpp states the criterion and its proof), or the exact scaling when that
//     takes no more moduli
//   blocks and workspace regions (plan_blocks)
//   for each block of rows of A:      int8 residues of the block for every modulus
//                                     (block_residues)
//     for each block of columns of B: int8 residues (block_residues)
//       one crt_product_residues per modulus (multiply_residues: the int8 GEMM; its int32 sums
//       kept where the workspace holds them, otherwise reduced modulo the modulus into int8),
//       crt_reconstruct (reconstruct_block: reduces kept sums, exact, rounded once), the
//       epilogue (alpha, beta, C, and the special values of rows and columns holding Inf or NaN,
//       looked for only when the scaling saw one); with alpha = 1, beta = 0 and none,
//       crt_reconstruct writes C
//
// The bounds (crt_moduli.hpp): exact scaling, |A'| <= 2^PA, |B'| <= 2^PB: |C'| <= k 2^(PA +
// PB) <= 2^(PA + PB + w) for w = ceil(log2 k); the moduli are taken until floor(log2 M) >= PA +
// PB + w + 2, so M > 2^(PA + PB + w + 1) >= 2 |C'|. Norm scaling: |C'_ij| <= ||A'_i|| ||B'_j||
// <= 2^(gamma_a + gamma_b) < M / 2. Either way C' is the one integer of [-M/2, M/2) with its
// residues. Every step is exact but the final rounding, so the bits do not depend on the
// blocking, the backend or the thread count.
#include "crt_scheme.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <tcemu/backend/crt_bounds.hpp>
#include <tcemu/backend/crt_moduli.hpp>
#include <tcemu/backend/crt_reconstruction.hpp>
#include <tcemu/backend/crt_scaling.hpp>

namespace tcemu::ozaki::detail {
namespace {

namespace el = crt_elements;

// dp's least norm scaling: rows of A and columns of B to Euclidean norm 2^56 or more (15 moduli),
// whatever the bound allows: measured on the H100 at n = 8192 and 16384, no worse than
// cublasDgemm's for phi <= 2, while 14 moduli are worse at phi = 0.1 and 1
// (docs/results/int8-ozaki.md). More when the bound of |A||B| asks for them.
constexpr int kDpNormBits = 56;

// The leading dimension of a product layer of `rows` rows: a multiple of 4 for int32 sums (the
// GEMM writes them there, and the reconstruction reads four rows at once).
std::int64_t product_ld(std::int64_t rows, bool sums) {
  return sums ? std::max<std::int64_t>(4, (rows + 3) / 4 * 4) : std::max<std::int64_t>(1, rows);
}

// The products stay int32 sums for the reconstruction where M takes at most this many 32-bit
// limbs (34 moduli), where the GPU's reconstruction streams them four elements a thread: measured
// on the H200 (docs/results/int8-ozaki.md, eleventh round), cr's 27 moduli (7 limbs) took 206-214
// ms at n = 16384, phi = 2, with the sums against 216 with int8 residues, and its 34 moduli (8
// limbs) at phi = 4 268 against 283 (38.5 against 42.1 at n = 8192): no reduction pass per
// modulus (0.08 ms each at n = 8192) and a reconstruction that takes the sums as they are
// (sum_congruent). The one-element kernel (9 limbs and more) reads them more slowly than it
// would read int8 residues (eighth round: 11-16 ms more at n = 16384).
constexpr int kSumsMaxLimbs = 8;

// Workspace bytes of one block: residues of A (mb x k), B (k x nb) and their product (mb x nb,
// int8 residues or int32 sums) for every modulus, and the fp64 value unless the reconstruction
// writes C directly.
std::size_t block_bytes(int moduli, std::int64_t mb, std::int64_t nb, std::int64_t k, bool value,
                        bool sums) {
  const auto m = static_cast<std::size_t>(mb), n = static_cast<std::size_t>(nb),
             kk = static_cast<std::size_t>(k), count = static_cast<std::size_t>(moduli);
  const std::size_t product = static_cast<std::size_t>(product_ld(mb, sums)) * n * (sums ? 4 : 1);
  return count * (aligned(m * kk) + aligned(kk * n) + aligned(product)) +
         (value ? aligned(m * n * 8) : 0);
}

// The part of `e` for the vectors [first, first + size).
ExponentVector part(const ExponentVector& e, std::int64_t first, std::int64_t size) {
  return ExponentVector{e.buffer, e.offset_bytes + static_cast<std::size_t>(first) * 4, size};
}

// dp's bound from the leading k >> kLeadingShift terms of the inner dimension first, where k >=
// kLeadingMinK: their quanta products are lower bounds of |A||B| as well (every term is >= 0),
// so the need they give is at least the whole bound's (bound_need falls as the product grows):
// a count that meets it meets the whole bound too. The bound then costs a sixteenth of its int8
// GEMM and quanta (its need pass still reads every element's sum). dp takes it where it asks
// for at most one modulus more than the least count (dp_scaling), the whole bound
// otherwise. Measured at k = 8192 and 16384 (docs/results/int8-ozaki.md, fifth, sixth and ninth
// rounds): phi <= 1 asks 49-50 bits of the whole bound and 53-55 of the leading sixteenth,
// within the least count's 58; phi = 2 asks 57 and 62 at n = 16384 (16 moduli's gamma_A is
// 62) and 58 and more than 62 at n = 8192.
constexpr int kLeadingShift = 4;
constexpr std::int64_t kLeadingMinK = 4096;

// dp's bound (crt_bounds.hpp, bound_need): the gamma_A that every element of A B needs, from
// crt_magnitude_bound of A's rows and B's columns (with the VectorNorms that the norm scaling
// wrote: one pass over each) and crt_bound_need of their int8 product, in blocks of m and n that
// fit in the workspace after its first `reserved` bytes (the exponents of every row and column
// for two levels at the start, then one block's quanta of A and of B for two levels). First the
// leading terms (above) at depth kShallowClip, returned when they ask at most `leading_gamma`;
// then all of k at depth kShallowClip; when that leaves an element uncertified, every block
// again with depths 0 and kDeepClip (each element's better one), so that the result does not
// depend on the blocking. kNoNeed when no element needs any, kBoundUncertified when some
// element's quanta do not meet at either depth. Report::dp_bound_terms: the terms of the bound
// returned.
int dp_bound_bits(Backend& backend, const Problem& problem, const Buffer& workspace,
                  std::size_t reserved, const VectorNorms& norms_a, const VectorNorms& norms_b,
                  int leading_gamma, Report& report) {
  const std::int64_t m = problem.a.rows, k = problem.a.cols, n = problem.b.cols;
  const auto vector_bytes = [](std::int64_t size) {
    return aligned(static_cast<std::size_t>(size) * 4);
  };
  const std::size_t exponents_bytes = 4 * (vector_bytes(m) + vector_bytes(n));
  const auto quanta_bytes = [&](std::int64_t mb, std::int64_t nb) {
    return 2 *
           (aligned(static_cast<std::size_t>(mb * k)) + aligned(static_cast<std::size_t>(k * nb)));
  };
  std::int64_t mb = std::max<std::int64_t>(m, 1), nb = std::max<std::int64_t>(n, 1);
  report.one_block_workspace = reserved + exponents_bytes + quanta_bytes(mb, nb);
  while (reserved + exponents_bytes + quanta_bytes(mb, nb) > workspace.bytes()) {
    if (mb == 1 && nb == 1) {
      throw std::runtime_error(
          "ozaki: a workspace of " + std::to_string(workspace.bytes()) +
          " bytes cannot hold dp's bound of a 1 x 1 block with k = " + std::to_string(k));
    }
    if (mb >= nb) {
      mb = (mb + 1) / 2;
    } else {
      nb = (nb + 1) / 2;
    }
  }
  std::size_t at = reserved;
  const auto vector = [&](std::int64_t size) {
    const ExponentVector v{&workspace, at, size};
    at += vector_bytes(size);
    return v;
  };
  const auto exponents_part = [&](const BoundExponents& e, std::int64_t first, std::int64_t size) {
    return BoundExponents{part(e.norm2, first, size), part(e.norm1, first, size)};
  };
  const auto norms_part = [&](const VectorNorms& v, std::int64_t first, std::int64_t size) {
    return VectorNorms{part(v.rho, first, size), part(v.log2_norm1, first, size),
                       part(v.top, first, size)};
  };
  BoundExponents rows[2], columns[2];
  for (int l = 0; l < 2; ++l) {
    rows[l] = {vector(m), vector(m)};
    columns[l] = {vector(n), vector(n)};
  }
  BoundLevel levels[2];
  for (BoundLevel& level : levels) {
    level.a = {&workspace, at, Integer::s8, mb, k, std::max<std::int64_t>(1, k), Layout::row_major};
    at += aligned(static_cast<std::size_t>(mb * k));
    level.b = {&workspace,          at, Integer::s8, k, nb, std::max<std::int64_t>(1, k),
               Layout::column_major};
    at += aligned(static_cast<std::size_t>(k * nb));
  }
  // One pass over the blocks with `count` levels on the leading `terms` of k. The quanta of a
  // vector's leading terms are those of the whole vector: crt_magnitude_bound clips relative to
  // the mean over the length it is given, so the depth grows by the bits the length lost.
  const auto pass = [&](std::size_t count, std::int64_t terms) {
    const int lost = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(k)) -
                                      std::bit_width(static_cast<std::uint64_t>(terms)));
    const int depths[2] = {(count == 1 ? el::kShallowClip : 0) + lost, el::kDeepClip + lost};
    for (BoundLevel& level : levels) {
      level.a.cols = terms;
      level.b.rows = terms;
    }
    int need = el::kNoNeed;
    for (std::int64_t i0 = 0; i0 < m; i0 += mb) {
      const std::int64_t rows_here = std::min(mb, m - i0);
      for (std::size_t l = 0; l < count; ++l) {
        levels[l].a.rows = rows_here;
        levels[l].rows = exponents_part(rows[l], i0, rows_here);
        backend.crt_magnitude_bound(sub(problem.a, i0, 0, rows_here, terms), SplitAxis::rows,
                                    depths[l], norms_part(norms_a, i0, rows_here), levels[l].a,
                                    levels[l].rows);
      }
      for (std::int64_t j0 = 0; j0 < n; j0 += nb) {
        const std::int64_t cols_here = std::min(nb, n - j0);
        // B in one block (nb = n): its quanta from the first row block serve every row block.
        for (std::size_t l = 0; l < count && (i0 == 0 || nb < n); ++l) {
          levels[l].b.cols = cols_here;
          levels[l].columns = exponents_part(columns[l], j0, cols_here);
          backend.crt_magnitude_bound(sub(problem.b, 0, j0, terms, cols_here), SplitAxis::columns,
                                      depths[l], norms_part(norms_b, j0, cols_here), levels[l].b,
                                      levels[l].columns);
        }
        need =
            std::max(need, backend.crt_bound_need(std::span<const BoundLevel>(levels, count), k));
        report.gemms += static_cast<std::int64_t>(count);
      }
    }
    report.dp_bound_terms = terms;
    return need;
  };
  if (k >= kLeadingMinK) {
    const int leading = pass(1, k >> kLeadingShift);
    if (leading <= leading_gamma) return leading;
  }
  const int need = pass(1, k);
  return need == el::kBoundUncertified ? pass(2, k) : need;
}

// What every step reads: the backend, the operands, the workspace, the dimensions, w =
// ceil(log2 k) and the reconstruction's rounding (Options::rounding).
struct Context {
  Backend& backend;
  const Problem& problem;
  Buffer& workspace;
  std::int64_t m, n, k;
  int w;
  fp64::Direction rounding;
};

// The vectors at the start of the workspace: the shifts of A's rows and B's columns
// (shifts_bytes), then dp's VectorNorms of them after the shifts (written by its first norm
// scaling, read by its bound; norms_bytes).
struct Vectors {
  std::size_t shifts_bytes = 0;
  ExponentVector shifts_a{}, shifts_b{};
  VectorNorms norms_a{}, norms_b{};
  std::size_t norms_bytes() const { return 3 * shifts_bytes; }
};

// The vectors' regions; refuses a workspace that cannot hold the shifts.
Vectors carve_vectors(const Context& c) {
  const std::size_t shifts_bytes =
      aligned(static_cast<std::size_t>(c.m) * 4) + aligned(static_cast<std::size_t>(c.n) * 4);
  if (shifts_bytes > c.workspace.bytes()) {
    throw std::runtime_error("ozaki: a workspace of " + std::to_string(c.workspace.bytes()) +
                             " bytes cannot hold the CRT shifts of " + std::to_string(c.m) +
                             " rows and " + std::to_string(c.n) + " columns");
  }
  const auto vectors_at = [&](std::size_t first) {
    return std::pair<ExponentVector, ExponentVector>{
        {&c.workspace, first, c.m},
        {&c.workspace, first + aligned(static_cast<std::size_t>(c.m) * 4), c.n}};
  };
  Vectors v;
  v.shifts_bytes = shifts_bytes;
  std::tie(v.shifts_a, v.shifts_b) = vectors_at(0);
  const auto [rho_a, rho_b] = vectors_at(shifts_bytes);
  const auto [norm1_a, norm1_b] = vectors_at(2 * shifts_bytes);
  const auto [top_a, top_b] = vectors_at(3 * shifts_bytes);
  v.norms_a = {rho_a, norm1_a, top_a};
  v.norms_b = {rho_b, norm1_b, top_b};
  return v;
}

// The norm scaling with `count` moduli (crt_steps.hpp, crt_norm_scale): rows of A to Euclidean
// norm at most 2^gamma_a, columns of B to 2^gamma_b, so |C'| <= 2^(gamma_a + gamma_b) (Cauchy-
// Schwarz) with gamma_a + gamma_b = product_bits - 1 < log2(M / 2) for two moduli or more (M is
// then not a power of two: M > 2^product_bits), product_bits - 2 for one (M = 2^8).
std::pair<int, int> norm_gammas(int count) {
  const int total = el::product_bits(count) - (count >= 2 ? 1 : 2);
  return {total / 2, total - total / 2};
}

// The fewest moduli whose product has `needed` bits (kMaxModuli + 1 when none has).
int exact_moduli(int needed) {
  int count = 1;
  while (count <= el::kMaxModuli && el::product_bits(count) < needed) ++count;
  return count;
}

// What the norm scaling learned besides the shifts: the bits the exact scaling would need
// (crt_norm_scale's exact bits of A and B), and whether A or B holds an Inf or a NaN.
struct NormScaled {
  int exact_needed;
  bool nonfinite;
};

// Writes the norm scaling's shifts for `count` moduli (norm_gammas) and report.slice_bits; with
// `norms`, the VectorNorms too.
NormScaled norm_scale(const Context& c, const Vectors& v, int count, bool norms, Report& report) {
  const auto [gamma_a, gamma_b] = norm_gammas(count);
  const int half_w = (c.w + 1) / 2;
  const int bound_bits = std::min(el::kNormBoundBits, std::min(gamma_a, gamma_b) - half_w);
  if (bound_bits < 1) {
    throw std::invalid_argument("ozaki: CRT scheme: " + std::to_string(count) +
                                " moduli leave no bits for k = " + std::to_string(c.k));
  }
  const ScaleSummary a = c.backend.crt_norm_scale(c.problem.a, SplitAxis::rows, bound_bits, gamma_a,
                                                  v.shifts_a, norms ? &v.norms_a : nullptr);
  const ScaleSummary b =
      c.backend.crt_norm_scale(c.problem.b, SplitAxis::columns, bound_bits, gamma_b, v.shifts_b,
                               norms ? &v.norms_b : nullptr);
  report.slice_bits = gamma_a;
  return {a.exact_bits + b.exact_bits + c.w + 2, a.nonfinite || b.nonfinite};
}

// dp's norm scaling for `count` moduli from the rho that its first one wrote (norms_a,
// norms_b), without another pass over A and B: that pass's bound shift, kNormBoundBits, is the
// one every count dp takes uses (norm_scale: gamma_a >= 58, half_w <= 9), so rho does not
// depend on the count and norm_shift(n_v, gamma) needs only rho (0 for an empty vector); a
// few kilobytes through the host. The shifts are norm_scale(count)'s, bit for bit.
void norm_shifts_from_rho(const Context& c, const Vectors& v, int count, Report& report) {
  const auto [gamma_a, gamma_b] = norm_gammas(count);
  const auto shift_vector = [&](const ExponentVector& rho, const ExponentVector& shifts,
                                int gamma) {
    std::vector<std::int32_t> x(static_cast<std::size_t>(rho.size));
    c.backend.copy_out(c.workspace, x.data(), x.size() * 4, rho.offset_bytes);
    for (std::int32_t& e : x) e = el::norm_shift(el::VectorNorm{.rho = e}, gamma);
    c.backend.copy_in(x.data(), c.workspace, x.size() * 4, shifts.offset_bytes);
  };
  shift_vector(v.norms_a.rho, v.shifts_a, gamma_a);
  shift_vector(v.norms_b.rho, v.shifts_b, gamma_b);
  report.slice_bits = gamma_a;
}

// The moduli count, with the shifts of every row of A and column of B in the workspace, and
// whether A or B holds an Inf or a NaN (crt_scale's summaries): only then does the epilogue need
// their special values.
struct Scaling {
  int moduli = 0;
  bool nonfinite = false;
};

// tunable: the user's count and the norm scaling.
Scaling tunable_scaling(const Context& c, const Vectors& v, int moduli, Report& report) {
  if (moduli < 1 || moduli > el::kMaxModuli) {
    throw std::invalid_argument("ozaki: CRT scheme: " + std::to_string(moduli) + " moduli (1 to " +
                                std::to_string(el::kMaxModuli) + ")");
  }
  return {moduli, norm_scale(c, v, moduli, false, report).nonfinite};
}

// Every vector held exactly (crt_scale: a max_bits above any spread).
constexpr int kExact = 4096;

// dp: the norm scaling with both gammas at least kDpNormBits and gamma_A at least what the bound
// of |A||B| asks for (crt_bounds.hpp: then every element meets DGEMM's classical error bound);
// cr's exact scaling instead when it takes no more moduli (its bits come with the norm
// scaling's first pass, so the bound is not computed when it already fits). When the bound is
// uncertified (an element whose quanta do not meet) or asks for more than the 48 moduli hold:
// the exact scaling if it fits, otherwise 48 moduli and dp_bound_met = false. The bound takes
// each vector's shift as rho_v + gamma with rho_v from the first norm scaling's bound shift,
// kNormBoundBits: norm_scale uses that bound shift for every count dp takes (gamma_a >= 58,
// half_w <= 9).
Scaling dp_scaling(const Context& c, const Vectors& v, Report& report) {
  if (v.shifts_bytes + v.norms_bytes() > c.workspace.bytes()) {
    throw std::runtime_error("ozaki: a workspace of " + std::to_string(c.workspace.bytes()) +
                             " bytes cannot hold dp's norms of " + std::to_string(c.m) +
                             " rows and " + std::to_string(c.n) + " columns");
  }
  int least = 1;
  while (norm_gammas(least).first < kDpNormBits) ++least;
  const NormScaled first = norm_scale(c, v, least, true, report);
  const int exact = exact_moduli(first.exact_needed);
  int wanted = least;
  if (exact > least) {
    // The leading terms' bound is taken where it asks for at most one modulus more than the
    // least count: one more modulus costs no more than the whole bound, and it is the more
    // accurate product (the H200, docs/results/int8-ozaki.md: at n = 16384 tunable 16 took
    // 4.5-7.2 ms more than tunable 15 and the whole bound 7.3 ms of kernels, eighth round; dp
    // with the whole bound at phi = 2 9-12 ms more than tunable 15, ninth round; at n = 8192
    // tunable 16 0.9-1.4 ms more, dp at phi = 2 1.8 ms more with both bounds, eighth round).
    const int leading_gamma = norm_gammas(std::min(least + 1, el::kMaxModuli)).first;
    report.dp_bound_bits =
        dp_bound_bits(c.backend, c.problem, c.workspace, v.shifts_bytes + v.norms_bytes(),
                      v.norms_a, v.norms_b, leading_gamma, report);
    while (wanted <= el::kMaxModuli && norm_gammas(wanted).first < report.dp_bound_bits) {
      ++wanted;
    }
  }
  if (exact <= std::min(wanted, el::kMaxModuli)) {
    report.slice_bits = std::max(
        c.backend.crt_scale(c.problem.a, SplitAxis::rows, kExact, v.shifts_a).exact_bits,
        c.backend.crt_scale(c.problem.b, SplitAxis::columns, kExact, v.shifts_b).exact_bits);
    return {exact, first.nonfinite};
  }
  report.dp_bound_met = wanted <= el::kMaxModuli;
  const int moduli = std::min(wanted, el::kMaxModuli);
  if (moduli != least) norm_shifts_from_rho(c, v, moduli, report);
  return {moduli, first.nonfinite};
}

// cr and sp: the exact scaling, the count from the bits the integers need.
Scaling exact_scaling(const Context& c, const Vectors& v, Report& report) {
  const ScaleSummary a = c.backend.crt_scale(c.problem.a, SplitAxis::rows, kExact, v.shifts_a);
  const ScaleSummary b = c.backend.crt_scale(c.problem.b, SplitAxis::columns, kExact, v.shifts_b);
  const int bits_a = a.exact_bits, bits_b = b.exact_bits;
  const int needed = bits_a + bits_b + c.w + 2;
  const int moduli = exact_moduli(needed);
  if (moduli > el::kMaxModuli) {
    throw std::runtime_error(
        "ozaki: CRT scheme: A and B held exactly need " + std::to_string(bits_a) + " and " +
        std::to_string(bits_b) + " bits, a product of " + std::to_string(needed) +
        " bits, more than the " + std::to_string(el::kMaxModuli) + " moduli hold (" +
        std::to_string(el::product_bits(el::kMaxModuli)) + " bits); use mode tunable or dp");
  }
  report.slice_bits = std::max(bits_a, bits_b);
  return {moduli, a.nonfinite || b.nonfinite};
}

// The shifts and the moduli count of the options' mode.
Scaling scale(const Context& c, const Options& options, const Vectors& v, Report& report) {
  if (options.mode == Mode::tunable) return tunable_scaling(c, v, options.splits, report);
  if (options.mode == Mode::dp) return dp_scaling(c, v, report);
  return exact_scaling(c, v, report);
}

// The blocks and the workspace regions after the vectors: the int8 residues of a block of A (mb
// rows) and of B (nb columns) for every modulus, the block's products (int32 sums where `sums`,
// otherwise int8 residues), and its fp64 value unless the reconstruction writes C directly.
struct Blocks {
  int moduli = 0;
  std::int64_t mb = 0, nb = 0;
  bool sums = false;
  bool direct = false;
  std::vector<IntegerMatrix> res_a, res_b;
  std::size_t products_at = 0, product_stride = 0, value_at = 0;
};

// The whole matrices, the larger block dimension halved until they fit. The products stay int32
// sums (the reconstruction reduces them: no pass of its own per modulus, a fifth less memory
// traffic) up to kSumsMaxLimbs, where those fit in the same blocks as int8 residues.
Blocks plan_blocks(const Context& c, const Vectors& v, int moduli, bool direct, Report& report) {
  const std::size_t room = c.workspace.bytes() - v.shifts_bytes;
  const auto blocks_for = [&](bool sums) {
    std::int64_t mb = c.m, nb = c.n;
    while (block_bytes(moduli, mb, nb, c.k, !direct, sums) > room) {
      if (mb == 1 && nb == 1) return std::pair<std::int64_t, std::int64_t>{0, 0};
      if (mb >= nb) {
        mb = (mb + 1) / 2;
      } else {
        nb = (nb + 1) / 2;
      }
    }
    return std::pair<std::int64_t, std::int64_t>{mb, nb};
  };
  Blocks b;
  b.moduli = moduli;
  b.direct = direct;
  std::tie(b.mb, b.nb) = blocks_for(false);
  if (b.mb == 0) {
    throw std::runtime_error("ozaki: a workspace of " + std::to_string(c.workspace.bytes()) +
                             " bytes cannot hold even a 1 x 1 block with k = " +
                             std::to_string(c.k) + " and " + std::to_string(moduli) + " moduli");
  }
  const bool sums_pay = el::table(moduli).limbs <= kSumsMaxLimbs;
  b.sums = sums_pay && blocks_for(true) == std::pair<std::int64_t, std::int64_t>{b.mb, b.nb};
  report.crt_product_sums = b.sums;
  report.block_rows = b.mb;
  report.block_cols = b.nb;
  report.one_block_workspace =
      std::max(report.one_block_workspace,
               v.shifts_bytes + block_bytes(moduli, c.m, c.n, c.k, !direct, sums_pay));
  std::size_t at = v.shifts_bytes;
  const auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at += aligned(bytes);
    return here;
  };
  for (int l = 0; l < moduli; ++l) {
    b.res_a.push_back({&c.workspace, take(static_cast<std::size_t>(b.mb * c.k)), Integer::s8, b.mb,
                       c.k, std::max<std::int64_t>(1, c.k), Layout::row_major});
  }
  for (int l = 0; l < moduli; ++l) {
    b.res_b.push_back({&c.workspace, take(static_cast<std::size_t>(c.k * b.nb)), Integer::s8, c.k,
                       b.nb, std::max<std::int64_t>(1, c.k), Layout::column_major});
  }
  b.product_stride =
      aligned(static_cast<std::size_t>(product_ld(b.mb, b.sums) * b.nb) * (b.sums ? 4 : 1));
  b.products_at = take(static_cast<std::size_t>(moduli) * b.product_stride);
  b.value_at = direct ? 0 : take(static_cast<std::size_t>(b.mb * b.nb) * 8);
  return b;
}

// The int8 residues of a block of A's rows (SplitAxis::rows) or B's columns for every modulus
// (Backend::crt_residues), with the block's `shifts`.
void block_residues(const Context& c, const RealMatrix& x, SplitAxis axis,
                    const ExponentVector& shifts, std::vector<IntegerMatrix>& residues) {
  for (IntegerMatrix& r : residues) {
    if (axis == SplitAxis::rows) {
      r.rows = x.rows;
    } else {
      r.cols = x.cols;
    }
  }
  c.backend.crt_residues(x, axis, shifts, residues);
}

// The product modulo the l-th modulus of a rows x cols block.
IntegerMatrix product(const Context& c, const Blocks& b, int l, std::int64_t rows,
                      std::int64_t cols) {
  return IntegerMatrix{&c.workspace,
                       b.products_at + static_cast<std::size_t>(l) * b.product_stride,
                       b.sums ? Integer::s32 : Integer::s8,
                       rows,
                       cols,
                       product_ld(rows, b.sums),
                       Layout::column_major};
}

// One int8 GEMM per modulus (Backend::crt_product_residues): the block's int32 sums kept, or
// reduced modulo the modulus into int8.
void multiply_residues(const Context& c, const Blocks& b, std::int64_t rows, std::int64_t cols) {
  for (int l = 0; l < b.moduli; ++l) {
    c.backend.crt_product_residues(b.res_a[static_cast<std::size_t>(l)],
                                   b.res_b[static_cast<std::size_t>(l)], l,
                                   product(c, b, l, rows, cols));
  }
}

// C's block from the products (crt_reconstruct: exact, rounded once) of the blocks of A and B
// with shifts sa and sb, then the epilogue (alpha, beta, C, and the special values of A's and
// B's blocks when `nonfinite`), unless the reconstruction writes C directly.
void reconstruct_block(const Context& c, const Blocks& b, const ExponentVector& sa,
                       const ExponentVector& sb, const RealMatrix& a_block,
                       const RealMatrix& b_block, const RealMatrix& c_block, bool nonfinite) {
  const std::int64_t rows = c_block.rows, cols = c_block.cols;
  const IntegerMatrixStack residues{product(c, b, 0, rows, cols), b.moduli, b.product_stride};
  if (b.direct) {
    c.backend.crt_reconstruct(residues, {sa, sb}, c_block, c.rounding);
    return;
  }
  const RealMatrix value{
      &c.workspace,        b.value_at, Real::fp64, rows, cols, std::max<std::int64_t>(1, rows),
      Layout::column_major};
  c.backend.crt_reconstruct(residues, {sa, sb}, value, c.rounding);
  c.backend.epilogue(value, std::nullopt, c.problem.alpha, c.problem.beta, c_block,
                     nonfinite ? std::optional<RealMatrix>(a_block) : std::nullopt,
                     nonfinite ? std::optional<RealMatrix>(b_block) : std::nullopt, c_block,
                     c.problem.output_rounding);
}

}  // namespace

void run_crt_scheme(Backend& backend, const Options& options, Buffer& workspace,
                    const Problem& problem, Report& report) {
  const std::int64_t m = problem.a.rows, k = problem.a.cols, n = problem.b.cols;
  if (k > kIntegerGemmMaxK) {
    throw std::invalid_argument("ozaki: CRT scheme: k = " + std::to_string(k) +
                                " is past the integer GEMM's " + std::to_string(kIntegerGemmMaxK));
  }
  report = Report{};
  Clock clock(backend);
  const Context c{backend,
                  problem,
                  workspace,
                  m,
                  n,
                  k,
                  static_cast<int>(std::bit_width(static_cast<std::uint64_t>(k - 1))),
                  options.rounding};
  const Vectors v = carve_vectors(c);
  const Scaling scaling = scale(c, options, v, report);
  report.slices_a = report.slices_b = scaling.moduli;
  clock.lap(report.seconds_split_a);
  // The epilogue with alpha = 1, beta = 0 and no special value in A or B leaves every element
  // as crt_reconstruct rounds it (a zero as +0 both ways): the reconstruction then writes C.
  const bool direct = !scaling.nonfinite && problem.alpha == 1.0 && problem.beta == 0.0 &&
                      problem.c.format == Real::fp64;
  Blocks blocks = plan_blocks(c, v, scaling.moduli, direct, report);

  for (std::int64_t i0 = 0; i0 < m; i0 += blocks.mb) {
    const std::int64_t rows = std::min(blocks.mb, m - i0);
    const RealMatrix a_block = sub(problem.a, i0, 0, rows, k);
    const ExponentVector sa = part(v.shifts_a, i0, rows);
    block_residues(c, a_block, SplitAxis::rows, sa, blocks.res_a);
    clock.lap(report.seconds_split_a);
    for (std::int64_t j0 = 0; j0 < n; j0 += blocks.nb) {
      const std::int64_t cols = std::min(blocks.nb, n - j0);
      const RealMatrix b_block = sub(problem.b, 0, j0, k, cols);
      const ExponentVector sb = part(v.shifts_b, j0, cols);
      // B in one block (nb = n): its residues from the first row block serve every row block.
      if (i0 == 0 || blocks.nb < n) {
        block_residues(c, b_block, SplitAxis::columns, sb, blocks.res_b);
        clock.lap(report.seconds_split_b);
      }
      multiply_residues(c, blocks, rows, cols);
      report.gemms += blocks.moduli;
      ++report.blocks;
      clock.lap(report.seconds_products);
      reconstruct_block(c, blocks, sa, sb, a_block, b_block, sub(problem.c, i0, j0, rows, cols),
                        scaling.nonfinite);
      clock.lap(report.seconds_summation);
    }
  }
}

}  // namespace tcemu::ozaki::detail

// The Ozaki scheme (Mukunoki, Ozaki, Ogita, Imamura, ISC 2020), blocked in m and n:
//
//   slice width (slice_bits), pairs to multiply (pair_rule); DP / SP / CR: d = the levels the
//     whole matrices need (count_levels); blocks and workspace regions (try_plan_for)
//   for each block of rows of A:     copy to an fp64 remainder, split it (split_block: every
//                                    level, one step)
//     for each block of columns of B: copy, split
//       products of slice pairs in the scheme's level order (product_levels, level_order.hpp:
//         l = p + q ascending, p ascending within l), into a stack of product matrices
//         (BlockProducts; tensor-core products: one Backend::mma_gemm_batch per stack, or per
//         product when Options::progress is set)
//       DP / SP / tunable: accumulate the scaled products into one fp64 sum in that order,
//         relative to the first level's scale, which is applied once in the epilogue; the stack
//         holds up to kHeldProducts products (one pass over the sum each time it is full) when
//         the workspace has room for them at the same block size, one level's otherwise
//       CR: scale each product into its own matrix of a stack, then the exact sum, scaled and
//         rounded once
//       epilogue: alpha, beta, C, and the special values of rows / columns holding Inf or NaN
//         (epilogue)
//
// Every arithmetic step is a Backend step; this file holds only the control flow.
#include "scheme.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <tcemu/ozaki/level_order.hpp>
#include <tcemu/ozaki/split_rule.hpp>

namespace tcemu::ozaki::detail {
namespace {

// The most levels counted to name, in an error, the max_splits that CR or DP would need: more
// than binary64's 2^-1074 .. 2^1024 span at one bit per level.
constexpr int kMaxCountedLevels = 2200;

// Products the DP / SP / tunable stack holds when the workspace allows: each pass over the fp64
// sum reads and writes it once, so fewer, fuller passes move fewer bytes (the bits do not
// change: the products are added one by one in issue order whatever the passes).
constexpr int kHeldProducts = 64;

// Slices per matrix of DP / SP's first split of the whole matrices (enough for the levels of
// most inputs: 16 for (rand - 0.5) exp(randn) at k = 8192; every stored level past the last
// nonzero one is written with zeros, so a larger count costs time).
constexpr int kFirstSplitSlices = 24;

// Workspace bytes of one block.
struct Sizes {
  int splits;                 // slices per matrix
  std::size_t slice_element;  // bytes of one slice element
  std::size_t product_element;
  int group;       // product matrices held at once (the products of one level: at most splits)
  int sum_layers;  // fp64 sums: 1 (DP, SP, tunable), splits^2 (CR: one per product), 0 (none)

  std::size_t bytes(std::int64_t mb, std::int64_t nb, std::int64_t k) const {
    const auto d = static_cast<std::size_t>(splits);
    const auto m = static_cast<std::size_t>(mb), n = static_cast<std::size_t>(nb),
               kk = static_cast<std::size_t>(k);
    return aligned(m * kk * 8) + aligned(kk * n * 8) + d * aligned(m * kk * slice_element) +
           d * aligned(kk * n * slice_element) + d * aligned(m * 4) + d * aligned(n * 4) +
           static_cast<std::size_t>(group) * aligned(m * n * product_element) +
           static_cast<std::size_t>(sum_layers) * aligned(m * n * 8);
  }
};

// Carves consecutive regions out of the workspace.
class Carver {
 public:
  explicit Carver(const Buffer& workspace) : workspace_(workspace) {}
  std::size_t take(std::size_t bytes) {
    const std::size_t at = next_;
    next_ += aligned(bytes);
    return at;
  }
  RealMatrix real(Real type, std::int64_t rows, std::int64_t cols, Layout layout) {
    const std::int64_t ld = std::max<std::int64_t>(1, layout == Layout::row_major ? cols : rows);
    const std::size_t at =
        take(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * real_bytes(type));
    return {&workspace_, at, type, rows, cols, ld, layout};
  }
  BufferMatrix low(const FloatFormat& f, std::int64_t rows, std::int64_t cols, Layout layout) {
    const std::int64_t ld = std::max<std::int64_t>(1, layout == Layout::row_major ? cols : rows);
    const std::size_t at =
        take(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * container_bytes(f));
    return {&workspace_, at, f, rows, cols, ld, layout};
  }
  IntegerMatrix int8(std::int64_t rows, std::int64_t cols, Layout layout) {
    const std::int64_t ld = std::max<std::int64_t>(1, layout == Layout::row_major ? cols : rows);
    const std::size_t at = take(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
    return {&workspace_, at, Integer::s8, rows, cols, ld, layout};
  }
  ExponentVector exponents(std::int64_t size) {
    return {&workspace_, take(static_cast<std::size_t>(size) * 4), size};
  }

 private:
  const Buffer& workspace_;
  std::size_t next_ = 0;
};

// The slices of one block of A (or B) and their exponents, level by level.
struct Slices {
  std::vector<SliceMatrix> slice;
  std::vector<ExponentVector> exponent;
  int levels = 0;
};

// What every step reads: the backend, the operands, the workspace, how slices are multiplied
// and the slice width.
struct Context {
  Backend& backend;
  const Problem& problem;
  const Buffer& workspace;
  const TensorCoreProducts* tc;  // nullptr: binary64 or int8 slices
  bool integer;                  // IntegerProducts: int8 slices, Backend::integer_gemm
  bool cr;                       // Mode::cr: one sum per product and the exact sum
  fp64::Direction rounding;      // cr: the exact sum's (Options::rounding)
  Mode mode;
  int bits;  // integer bits per slice (split_rule.hpp)
  std::int64_t m, n, k;
  const std::function<void(double)>& progress;  // Options::progress
};

// The blocks and the workspace regions of a run: the fp64 remainders and the slices of one
// block of A (mb rows) and of B (nb columns), a stack of `group` product matrices and the fp64
// sums, all carved out of the workspace.
struct Plan {
  std::int64_t mb = 0, nb = 0;
  RealMatrix remainder_a{}, remainder_b{};
  Slices a, b;
  std::size_t products_at = 0, products_stride = 0, sums_at = 0, sums_stride = 0;
  int group = 0;                // product matrices the stack holds
  std::size_t whole_bytes = 0;  // the workspace one block of the whole m x n would take
};

// The plan for `slices` slices per matrix, `group` product matrices and `sum_layers` fp64 sums:
// the blocks are the whole matrices, the larger block dimension halved until everything fits.
// Nothing when not even a 1 x 1 block fits.
std::optional<Plan> try_plan(const Context& c, int slices, int group, int sum_layers) {
  const Sizes sizes{slices,
                    c.tc        ? container_bytes(c.tc->datapath.input)
                    : c.integer ? 1
                                : 8,
                    c.tc ? std::size_t{4} : 8, group, sum_layers};
  Plan p;
  p.mb = c.m;
  p.nb = c.n;
  p.whole_bytes = sizes.bytes(c.m, c.n, c.k);
  while (sizes.bytes(p.mb, p.nb, c.k) > c.workspace.bytes()) {
    if (p.mb == 1 && p.nb == 1) return std::nullopt;
    if (p.mb >= p.nb) {
      p.mb = (p.mb + 1) / 2;
    } else {
      p.nb = (p.nb + 1) / 2;
    }
  }
  Carver carve(c.workspace);
  p.remainder_a = carve.real(Real::fp64, p.mb, c.k, Layout::row_major);
  p.remainder_b = carve.real(Real::fp64, c.k, p.nb, Layout::column_major);
  for (int l = 0; l < slices; ++l) {
    if (c.tc) {
      p.a.slice.emplace_back(carve.low(c.tc->datapath.input, p.mb, c.k, Layout::row_major));
      p.b.slice.emplace_back(carve.low(c.tc->datapath.input, c.k, p.nb, Layout::column_major));
    } else if (c.integer) {
      p.a.slice.emplace_back(carve.int8(p.mb, c.k, Layout::row_major));
      p.b.slice.emplace_back(carve.int8(c.k, p.nb, Layout::column_major));
    } else {
      p.a.slice.emplace_back(carve.real(Real::fp64, p.mb, c.k, Layout::row_major));
      p.b.slice.emplace_back(carve.real(Real::fp64, c.k, p.nb, Layout::column_major));
    }
    p.a.exponent.push_back(carve.exponents(p.mb));
    p.b.exponent.push_back(carve.exponents(p.nb));
  }
  p.products_stride = aligned(static_cast<std::size_t>(p.mb * p.nb) * sizes.product_element);
  p.products_at = carve.take(static_cast<std::size_t>(group) * p.products_stride);
  p.sums_stride = aligned(static_cast<std::size_t>(p.mb * p.nb) * 8);
  p.sums_at = carve.take(static_cast<std::size_t>(sum_layers) * p.sums_stride);
  p.group = group;
  return p;
}

// The plan of the products and sums for `slices` slices: CR holds one level's products and a
// sum per product; the other modes one sum and a stack of kHeldProducts products when that
// keeps the blocks as large as a stack of one level's products would.
std::optional<Plan> try_plan_for(const Context& c, int slices) {
  if (c.cr) return try_plan(c, slices, slices, slices * slices);
  std::optional<Plan> level = try_plan(c, slices, slices, 1);
  if (!level || slices >= kHeldProducts) return level;
  std::optional<Plan> held = try_plan(c, slices, kHeldProducts, 1);
  return held && held->mb == level->mb && held->nb == level->nb ? std::move(held)
                                                                : std::move(level);
}

// The plan `p`; throws std::runtime_error when there is none (the workspace is too small for a
// 1 x 1 block with `slices` slices).
Plan required(const Context& c, std::optional<Plan> p, int slices) {
  if (!p) {
    throw std::runtime_error("ozaki: a workspace of " + std::to_string(c.workspace.bytes()) +
                             " bytes cannot hold even a 1 x 1 block with k = " +
                             std::to_string(c.k) + " and " + std::to_string(slices) + " slices");
  }
  return std::move(*p);
}

// Copies `block` (of A: split by rows; of B: by columns) into `remainder`, resized to it, and
// splits it into `into`: d levels, fewer once the remainder is zero, the first
// into.slice.size() stored (none: a count only); into.levels = the levels stored and used. Adds
// the time to `seconds`. In CR mode a nonzero remainder after d levels is an error. Returns
// Backend::split's count (the levels after which the remainder is zero, d + 1 if it is not).
int split_block(const Context& c, const RealMatrix& block, RealMatrix remainder, SplitAxis axis,
                int d, Slices& into, Clock& clock, double& seconds) {
  remainder.rows = block.rows;
  remainder.cols = block.cols;
  c.backend.copy_real(block, remainder);
  const std::int64_t vectors = axis == SplitAxis::rows ? remainder.rows : remainder.cols;
  const std::int64_t ld =
      std::max<std::int64_t>(1, axis == SplitAxis::rows ? remainder.cols : remainder.rows);
  for (std::size_t s = 0; s < into.slice.size(); ++s) {
    into.exponent[s].size = vectors;
    std::visit(
        [&](auto& slice) {
          slice.rows = remainder.rows;
          slice.cols = remainder.cols;
          slice.ld = ld;
        },
        into.slice[s]);
  }
  const int zero_after = c.backend.split(remainder, axis, c.bits, d, into.slice, into.exponent);
  // CR (exactness) and DP (FP64 accuracy) need every bit of the operands in some slice: with
  // remainders not zero after max_splits levels they refuse, naming the slices needed. SP stops
  // at max_splits (the report shows it); tunable takes the user's d.
  if ((c.mode == Mode::cr || c.mode == Mode::dp) && zero_after > d) {
    // Count the levels needed, on a fresh copy, without storing slices.
    c.backend.copy_real(block, remainder);
    const int needed = c.backend.split(remainder, axis, c.bits, kMaxCountedLevels, {}, {});
    const std::string need = needed > kMaxCountedLevels
                                 ? "more than " + std::to_string(kMaxCountedLevels)
                                 : std::to_string(needed);
    throw std::runtime_error(
        std::string("ozaki: ") + (c.mode == Mode::cr ? "CR" : "DP") + " mode needs more than " +
        std::to_string(d) +
        " slices for these operands (Options::max_splits = " + std::to_string(d) +
        "): the remainders of " + (axis == SplitAxis::rows ? "A" : "B") + " are zero after " +
        need + " levels of " + std::to_string(c.bits) + " bits; raise max_splits to at least that");
  }
  into.levels = std::min(zero_after, d);
  clock.lap(seconds);
  return zero_after;
}

// DP, SP and CR modes' d: the number of levels after which the remainders of A and of B are
// zero, over the whole matrices, at most `d` (max_splits). Fast mode for DP and SP then takes
// every bit of every element into some slice (our reading of Algorithm 3, see split_rule.hpp);
// counting over the whole matrices keeps the fast-mode cutoff, and with it every bit of the
// result, independent of the blocking. CR sizes its stack of sums by it.
// DP and SP split the whole of A and B at once when kFirstSplitSlices slices of both fit in one
// block: the count comes with the slices, which are kept (`split_whole`) when there are no more
// levels than that. Otherwise (or CR) the levels are counted first, block by block, by a split
// that stores no slices.
struct Levels {
  int d = 0;
  std::optional<Plan> split_whole;  // A and B split already, in one block each
};
Levels count_levels(const Context& c, int d, Clock& clock, Report& report) {
  if (!c.cr) {
    std::optional<Plan> first = try_plan_for(c, std::min(d, kFirstSplitSlices));
    if (first && first->mb == c.m && first->nb == c.n) {
      Plan& whole = *first;
      const int zero_after_a = split_block(c, c.problem.a, whole.remainder_a, SplitAxis::rows, d,
                                           whole.a, clock, report.seconds_split_a);
      const int zero_after_b = split_block(c, c.problem.b, whole.remainder_b, SplitAxis::columns, d,
                                           whole.b, clock, report.seconds_split_b);
      const int levels = std::min(std::max(zero_after_a, zero_after_b), d);
      if (levels > static_cast<int>(whole.a.slice.size())) return {levels, std::nullopt};
      return {levels, std::move(whole)};
    }
  }
  const Plan counting = required(c, try_plan(c, 0, 0, 0), 0);
  Slices none;  // counting stores no slices
  int levels = 0;
  for (std::int64_t i0 = 0; i0 < c.m; i0 += counting.mb) {
    const RealMatrix block = sub(c.problem.a, i0, 0, std::min(counting.mb, c.m - i0), c.k);
    levels = std::max(levels, split_block(c, block, counting.remainder_a, SplitAxis::rows, d, none,
                                          clock, report.seconds_split_a));
  }
  for (std::int64_t j0 = 0; j0 < c.n; j0 += counting.nb) {
    const RealMatrix block = sub(c.problem.b, 0, j0, c.k, std::min(counting.nb, c.n - j0));
    levels = std::max(levels, split_block(c, block, counting.remainder_b, SplitAxis::columns, d,
                                          none, clock, report.seconds_split_b));
  }
  return {std::min(levels, d), std::nullopt};
}

// The products of one block pair (rows x cols of C) and their sum, in the plan's workspace
// regions. Sums are kept relative to the first level's scale, 2^(e_A1 + e_B1) per element
// (`base`), so that no term over- or underflows unless the whole element does (or the slices of
// one row and column span more than binary64's range); the scale enters once at the end.
class BlockProducts {
 public:
  // `computed(count)` is called when the block's first `count` products are computed (with
  // Options::progress only).
  BlockProducts(const Context& c, const Plan& plan, std::int64_t rows, std::int64_t cols,
                Clock& clock, Report& report, std::function<void(std::int64_t)> computed)
      : c_(c),
        plan_(plan),
        rows_(rows),
        cols_(cols),
        base_{plan.a.exponent[0], plan.b.exponent[0]},
        clock_(clock),
        report_(report),
        computed_(std::move(computed)) {}

  // Issues the product of slice pair.p of A and pair.q of B into the stack, after add_held when
  // the stack is full. Tensor-core products are only queued; binary64 and integer products are
  // computed.
  void issue(SlicePair pair) {
    if (static_cast<int>(scales_.size()) == plan_.group) add_held();
    const RealMatrix out = product(static_cast<std::int64_t>(scales_.size()));
    if (c_.tc) {
      batch_.push_back(
          {std::get<BufferMatrix>(plan_.a.slice[pair.p - 1]),
           std::get<BufferMatrix>(plan_.b.slice[pair.q - 1]),
           {out.buffer, out.offset_bytes, formats::fp32, out.rows, out.cols, out.ld, out.layout}});
    } else if (c_.integer) {
      c_.backend.integer_gemm(std::get<IntegerMatrix>(plan_.a.slice[pair.p - 1]),
                              std::get<IntegerMatrix>(plan_.b.slice[pair.q - 1]), out);
    } else {
      c_.backend.fp64_gemm(std::get<RealMatrix>(plan_.a.slice[pair.p - 1]),
                           std::get<RealMatrix>(plan_.b.slice[pair.q - 1]), out);
    }
    scales_.push_back({plan_.a.exponent[pair.p - 1], plan_.b.exponent[pair.q - 1]});
    ++issued_;
    if (!c_.tc && c_.progress) computed_(issued_);
  }

  // Computes the queued tensor-core products (one Backend::mma_gemm_batch; with
  // Options::progress one per product, each reported), then adds the held products, in issue
  // order, to the one fp64 sum (DP, SP, tunable: sum(0)) or scales each into its own (CR: sum(i)
  // for the i-th product issued), and empties the stack.
  void add_held() {
    const auto held = static_cast<std::int64_t>(scales_.size());
    if (held == 0) return;
    const std::int64_t first = issued_ - held;
    if (c_.tc && c_.progress) {
      for (std::size_t i = 0; i < batch_.size(); ++i) {
        c_.backend.mma_gemm_batch(c_.tc->datapath, {.alpha = 1.0f, .beta = 0.0f},
                                  std::span<const GemmProduct>(batch_).subspan(i, 1));
        computed_(first + static_cast<std::int64_t>(i) + 1);
      }
    } else if (c_.tc) {
      c_.backend.mma_gemm_batch(c_.tc->datapath, {.alpha = 1.0f, .beta = 0.0f}, batch_);
    }
    batch_.clear();
    clock_.lap(report_.seconds_products);
    if (c_.cr) {
      for (std::int64_t g = 0; g < held; ++g) {
        c_.backend.accumulate_scaled(product(g), scales_[static_cast<std::size_t>(g)], base_,
                                     sum(first + g), true);
      }
    } else {
      c_.backend.accumulate_scaled({product(0), held, plan_.products_stride}, scales_, base_,
                                   sum(0), first == 0);
    }
    scales_.clear();
    clock_.lap(report_.seconds_summation);
  }

  // Products issued so far, the held ones included.
  std::int64_t issued() const { return issued_; }
  const OuterExponents& base() const { return base_; }
  // The fp64 sum `index` (DP, SP, tunable: 0 only; CR: one per product).
  RealMatrix sum(std::int64_t index) const {
    return block_matrix(plan_.sums_at, plan_.sums_stride, index, Real::fp64);
  }

 private:
  // Column-major rows x cols matrices at `at` + index * stride in the workspace.
  RealMatrix block_matrix(std::size_t at, std::size_t stride, std::int64_t index, Real type) const {
    return {&c_.workspace,
            at + static_cast<std::size_t>(index) * stride,
            type,
            rows_,
            cols_,
            std::max<std::int64_t>(1, rows_),
            Layout::column_major};
  }
  RealMatrix product(std::int64_t g) const {
    return block_matrix(plan_.products_at, plan_.products_stride, g,
                        c_.tc ? Real::fp32 : Real::fp64);
  }

  const Context& c_;
  const Plan& plan_;
  std::int64_t rows_, cols_;
  OuterExponents base_;
  Clock& clock_;
  Report& report_;
  std::function<void(std::int64_t)> computed_;
  std::int64_t issued_ = 0;             // products issued, the held ones included
  std::vector<OuterExponents> scales_;  // of the held products, in issue order
  std::vector<GemmProduct> batch_;      // the held tensor-core products, not yet computed
};

// Issues the products of `levels` (product_levels: level by level, p ascending) and sums them:
// CR's stack holds one level, so it is emptied after each; the other modes' when full and at
// the end.
void multiply_and_sum(BlockProducts& products, const std::vector<std::vector<SlicePair>>& levels,
                      bool cr) {
  for (const std::vector<SlicePair>& level : levels) {
    for (const SlicePair pair : level) products.issue(pair);
    if (cr) products.add_held();
  }
  products.add_held();
}

// C's block := alpha (the block's sum) + beta C's block, with the special values of the rows of
// a_block and the columns of b_block that hold Inf or NaN: DP, SP and tunable scale the fp64
// sum by 2^(e_A1 + e_B1); CR first sums its products exactly, scaled and rounded once.
void epilogue(const Context& c, const Plan& plan, const BlockProducts& products,
              const RealMatrix& a_block, const RealMatrix& b_block, const RealMatrix& c_block) {
  const RealMatrix value = products.sum(0);
  if (c.cr)
    c.backend.exact_sum({value, products.issued(), plan.sums_stride}, products.base(), value,
                        c.rounding);
  c.backend.epilogue(value, c.cr ? std::nullopt : std::optional<OuterExponents>(products.base()),
                     c.problem.alpha, c.problem.beta, c_block, a_block, b_block, c_block,
                     c.problem.output_rounding);
}

}  // namespace

void run_scheme(Backend& backend, const Products& products, const Options& options,
                Buffer& workspace, const Problem& problem, Report& report) {
  const std::int64_t m = problem.a.rows, k = problem.a.cols, n = problem.b.cols;
  // The slice width for this k.
  const Context c{backend,
                  problem,
                  workspace,
                  std::get_if<TensorCoreProducts>(&products),
                  std::holds_alternative<IntegerProducts>(products),
                  options.mode == Mode::cr,
                  options.rounding,
                  options.mode,
                  slice_bits(products, k),
                  m,
                  n,
                  k,
                  options.progress};
  // The pairs to multiply: d, slices per matrix the workspace holds (the user's d in tunable
  // mode), and fast mode's cutoff p + q <= d + 1.
  PairRule rule = pair_rule(options);

  report = Report{};
  report.slice_bits = c.bits;
  Clock clock(backend);

  // DP, SP, CR: d lowered to the levels the whole matrices need, perhaps splitting them already.
  std::optional<Plan> split_whole;
  if (options.mode != Mode::tunable) {
    Levels levels = count_levels(c, rule.d, clock, report);
    rule.d = levels.d;
    split_whole = std::move(levels.split_whole);
  }
  const bool split_already = split_whole.has_value();
  // The blocks and the workspace regions for d slices.
  Plan plan =
      split_already ? std::move(*split_whole) : required(c, try_plan_for(c, rule.d), rule.d);
  report.block_rows = plan.mb;
  report.block_cols = plan.nb;
  report.one_block_workspace = plan.whole_bytes;
  const std::int64_t blocks = (m + plan.mb - 1) / plan.mb * ((n + plan.nb - 1) / plan.nb);

  for (std::int64_t i0 = 0; i0 < m; i0 += plan.mb) {
    const std::int64_t rows = std::min(plan.mb, m - i0);
    const RealMatrix a_block = sub(problem.a, i0, 0, rows, k);
    if (!split_already) {
      split_block(c, a_block, plan.remainder_a, SplitAxis::rows, rule.d, plan.a, clock,
                  report.seconds_split_a);
    }
    report.slices_a = std::max(report.slices_a, plan.a.levels);

    for (std::int64_t j0 = 0; j0 < n; j0 += plan.nb) {
      const std::int64_t cols = std::min(plan.nb, n - j0);
      const RealMatrix b_block = sub(problem.b, 0, j0, k, cols);
      if (!split_already) {
        split_block(c, b_block, plan.remainder_b, SplitAxis::columns, rule.d, plan.b, clock,
                    report.seconds_split_b);
      }
      report.slices_b = std::max(report.slices_b, plan.b.levels);
      ++report.blocks;

      // The slice products in the scheme's level order, their sum, and C's block.
      const auto levels = product_levels(plan.a.levels, plan.b.levels, rule);
      std::int64_t count = 0;
      for (const auto& level : levels) count += static_cast<std::int64_t>(level.size());
      const auto done = static_cast<double>(report.blocks - 1);
      BlockProducts block(c, plan, rows, cols, clock, report, [&](std::int64_t computed) {
        options.progress((done + static_cast<double>(computed) / static_cast<double>(count)) /
                         static_cast<double>(blocks));
      });
      multiply_and_sum(block, levels, c.cr);
      report.gemms += block.issued();
      epilogue(c, plan, block, a_block, b_block, sub(problem.c, i0, j0, rows, cols));
      clock.lap(report.seconds_summation);
    }
  }
}

}  // namespace tcemu::ozaki::detail

// The Ozaki scheme (Mukunoki, Ozaki, Ogita, Imamura, ISC 2020), blocked in m and n:
//
//   for each block of rows of A:     copy to an fp64 remainder, split it (every level, one step)
//     for each block of columns of B: copy, split
//       products of slice pairs level by level (l = p + q ascending, p ascending within l), into
//         a stack of product matrices (tensor-core products: one Backend::mma_gemm_batch per
//         stack)
//       DP / SP / tunable: accumulate the scaled products into one fp64 sum in that order,
//         relative to the first level's scale, which is applied once in the epilogue; the stack
//         holds up to kHeldProducts products (one pass over the sum each time it is full) when
//         the workspace has room for them at the same block size, one level's otherwise
//       CR: scale each product into its own matrix of a stack, then the exact sum, scaled and
//         rounded once
//       epilogue: alpha, beta, C, and the special values of rows / columns holding Inf or NaN
//
// Every arithmetic step is a Backend step; this file holds only the control flow.
#include "scheme.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <tcemu/ozaki/split_rule.hpp>

namespace tcemu::ozaki::detail {
namespace {

constexpr std::size_t kAlign = 64;

// Products the DP / SP / tunable stack holds when the workspace allows: each pass over the fp64
// sum reads and writes it once, so fewer, fuller passes move fewer bytes (the bits do not
// change: the products are added one by one in issue order whatever the passes).
constexpr int kHeldProducts = 64;

// Slices per matrix of DP / SP's first split of the whole matrices (enough for the levels of
// most inputs: 16 for (rand - 0.5) exp(randn) at k = 8192; every stored level past the last
// nonzero one is written with zeros, so a larger count costs time).
constexpr int kFirstSplitSlices = 24;

std::size_t aligned(std::size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

// The sub-matrix of rows [i0, i0 + rows) and columns [j0, j0 + cols).
RealMatrix sub(const RealMatrix& x, std::int64_t i0, std::int64_t j0, std::int64_t rows,
               std::int64_t cols) {
  const std::int64_t index = x.layout == Layout::row_major ? i0 * x.ld + j0 : j0 * x.ld + i0;
  RealMatrix s = x;
  s.offset_bytes += static_cast<std::size_t>(index) * real_bytes(x.format);
  s.rows = rows;
  s.cols = cols;
  return s;
}

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

class Clock {
 public:
  explicit Clock(Backend& backend) : backend_(backend) {}
  // Adds the time since the last lap (after synchronising the backend) to `seconds`.
  void lap(double& seconds) {
    backend_.synchronize();
    const auto now = std::chrono::steady_clock::now();
    seconds += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  Backend& backend_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

void run_scheme(Backend& backend, const Products& products, const Options& options,
                const Buffer& workspace, const Problem& problem, Report& report) {
  const std::int64_t m = problem.a.rows, k = problem.a.cols, n = problem.b.cols;
  const int bits = slice_bits(products, k);
  const bool cr = options.mode == Mode::cr;
  // d: slices per matrix the workspace holds (the user's d in tunable mode) and the fast-mode
  // cutoff p + q <= d + 1.
  int d = 0;
  bool fast = true;
  switch (options.mode) {
    case Mode::dp:
    case Mode::sp:
    case Mode::cr:
      d = options.max_splits;
      fast = options.mode != Mode::cr;
      break;
    case Mode::tunable:
      d = options.splits;
      fast = options.fast;
      break;
  }
  const auto* tc = std::get_if<TensorCoreProducts>(&products);

  // The blocks and the workspace regions for `slices` slices per matrix, `group` product
  // matrices and `sum_layers` fp64 sums: the larger block dimension is halved until everything
  // fits.
  struct Plan {
    std::int64_t mb = 0, nb = 0;
    RealMatrix remainder_a{}, remainder_b{};
    Slices a, b;
    std::size_t products_at = 0, products_stride = 0, sums_at = 0, sums_stride = 0;
    int group = 0;  // product matrices the stack holds
  };
  // Nothing when not even a 1 x 1 block fits.
  auto try_plan = [&](int slices, int group, int sum_layers) -> std::optional<Plan> {
    const Sizes sizes{slices, tc ? container_bytes(tc->datapath.input) : 8, tc ? std::size_t{4} : 8,
                      group, sum_layers};
    Plan p;
    p.mb = m;
    p.nb = n;
    while (sizes.bytes(p.mb, p.nb, k) > workspace.bytes()) {
      if (p.mb == 1 && p.nb == 1) return std::nullopt;
      if (p.mb >= p.nb) {
        p.mb = (p.mb + 1) / 2;
      } else {
        p.nb = (p.nb + 1) / 2;
      }
    }
    Carver carve(workspace);
    p.remainder_a = carve.real(Real::fp64, p.mb, k, Layout::row_major);
    p.remainder_b = carve.real(Real::fp64, k, p.nb, Layout::column_major);
    for (int l = 0; l < slices; ++l) {
      if (tc) {
        p.a.slice.emplace_back(carve.low(tc->datapath.input, p.mb, k, Layout::row_major));
        p.b.slice.emplace_back(carve.low(tc->datapath.input, k, p.nb, Layout::column_major));
      } else {
        p.a.slice.emplace_back(carve.real(Real::fp64, p.mb, k, Layout::row_major));
        p.b.slice.emplace_back(carve.real(Real::fp64, k, p.nb, Layout::column_major));
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
  };
  // The plan of the products and sums for `slices` slices: CR holds one level's products and a
  // sum per product; the other modes one sum and a stack of kHeldProducts products when that
  // keeps the blocks as large as a stack of one level's products would.
  auto try_plan_for = [&](int slices) -> std::optional<Plan> {
    if (cr) return try_plan(slices, slices, slices * slices);
    std::optional<Plan> level = try_plan(slices, slices, 1);
    if (!level || slices >= kHeldProducts) return level;
    std::optional<Plan> held = try_plan(slices, kHeldProducts, 1);
    return held && held->mb == level->mb && held->nb == level->nb ? std::move(held)
                                                                  : std::move(level);
  };
  const auto required = [&](std::optional<Plan> p, int slices) {
    if (!p) {
      throw std::runtime_error("ozaki: a workspace of " + std::to_string(workspace.bytes()) +
                               " bytes cannot hold even a 1 x 1 block with k = " +
                               std::to_string(k) + " and " + std::to_string(slices) + " slices");
    }
    return std::move(*p);
  };

  report = Report{};
  report.slice_bits = bits;
  Clock clock(backend);

  // Copies `block` (of A: split by rows; of B: by columns) into `remainder`, resized to it, and
  // splits it into `into`: d levels, fewer once the remainder is zero, the first
  // into.slice.size() stored (none: a count only). Adds the time to `seconds`. In CR mode a
  // nonzero remainder after d levels is an error. Returns Backend::split's count.
  auto split_block = [&](const RealMatrix& block, RealMatrix remainder, SplitAxis axis,
                         Slices& into, double& seconds) {
    remainder.rows = block.rows;
    remainder.cols = block.cols;
    backend.copy_real(block, remainder);
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
    const int zero_after = backend.split(remainder, axis, bits, d, into.slice, into.exponent);
    // Only CR promises exactness; DP and SP stop at max_splits (the report shows it).
    if (cr && zero_after > d) {
      throw std::runtime_error("ozaki: CR mode needs more than " + std::to_string(d) +
                               " slices for these operands (Options::max_splits)");
    }
    into.levels = std::min(zero_after, d);
    clock.lap(seconds);
    return zero_after;
  };

  // DP, SP and CR modes take d = the number of levels after which the remainders of A and of B
  // are zero, over the whole matrices (at most max_splits), with fast mode for DP and SP (every
  // bit of every element is in some slice; our reading of Algorithm 3, see split_rule.hpp);
  // counting over the whole matrices keeps the fast-mode cutoff, and with it every bit of the
  // result, independent of the blocking. CR sizes its stack of sums by it.
  // DP and SP split the whole of A and B at once when kFirstSplitSlices slices of both fit in
  // one block: the count comes with the slices, which are kept when there are no more levels
  // than that. Otherwise (or CR) the levels are counted first, block by block, by a split that
  // stores no slices.
  std::optional<Plan> split_whole;
  if (options.mode != Mode::tunable) {
    bool counted = false;
    if (!cr) {
      std::optional<Plan> first = try_plan_for(std::min(d, kFirstSplitSlices));
      if (first && first->mb == m && first->nb == n) {
        Plan& whole = *first;
        const int zero_after_a = split_block(problem.a, whole.remainder_a, SplitAxis::rows, whole.a,
                                             report.seconds_split_a);
        const int zero_after_b = split_block(problem.b, whole.remainder_b, SplitAxis::columns,
                                             whole.b, report.seconds_split_b);
        d = std::min(std::max(zero_after_a, zero_after_b), d);
        counted = true;
        if (d <= static_cast<int>(whole.a.slice.size())) split_whole = std::move(whole);
      }
    }
    if (!counted) {
      const Plan counting = required(try_plan(0, 0, 0), 0);
      Slices none;  // counting stores no slices
      int levels = 0;
      for (std::int64_t i0 = 0; i0 < m; i0 += counting.mb) {
        const RealMatrix block = sub(problem.a, i0, 0, std::min(counting.mb, m - i0), k);
        levels = std::max(levels, split_block(block, counting.remainder_a, SplitAxis::rows, none,
                                              report.seconds_split_a));
      }
      for (std::int64_t j0 = 0; j0 < n; j0 += counting.nb) {
        const RealMatrix block = sub(problem.b, 0, j0, k, std::min(counting.nb, n - j0));
        levels = std::max(levels, split_block(block, counting.remainder_b, SplitAxis::columns, none,
                                              report.seconds_split_b));
      }
      d = std::min(levels, d);
    }
  }
  Plan final_plan = split_whole ? std::move(*split_whole) : required(try_plan_for(d), d);
  const std::int64_t mb = final_plan.mb, nb = final_plan.nb;
  report.block_rows = mb;
  report.block_cols = nb;
  Slices& slices_a = final_plan.a;
  Slices& slices_b = final_plan.b;

  for (std::int64_t i0 = 0; i0 < m; i0 += mb) {
    const std::int64_t rows = std::min(mb, m - i0);
    const RealMatrix a_block = sub(problem.a, i0, 0, rows, k);
    if (!split_whole) {
      split_block(a_block, final_plan.remainder_a, SplitAxis::rows, slices_a,
                  report.seconds_split_a);
    }
    report.slices_a = std::max(report.slices_a, slices_a.levels);

    for (std::int64_t j0 = 0; j0 < n; j0 += nb) {
      const std::int64_t cols = std::min(nb, n - j0);
      const RealMatrix b_block = sub(problem.b, 0, j0, k, cols);
      if (!split_whole) {
        split_block(b_block, final_plan.remainder_b, SplitAxis::columns, slices_b,
                    report.seconds_split_b);
      }
      report.slices_b = std::max(report.slices_b, slices_b.levels);
      ++report.blocks;

      // Column-major rows x cols matrices at `at` + index * stride in the workspace.
      auto block_matrix = [&](std::size_t at, std::size_t stride, std::int64_t index, Real type) {
        return RealMatrix{&workspace,
                          at + static_cast<std::size_t>(index) * stride,
                          type,
                          rows,
                          cols,
                          std::max<std::int64_t>(1, rows),
                          Layout::column_major};
      };
      const Real product_type = tc ? Real::fp32 : Real::fp64;
      auto product = [&](std::int64_t g) {
        return block_matrix(final_plan.products_at, final_plan.products_stride, g, product_type);
      };
      auto sum = [&](std::int64_t index) {
        return block_matrix(final_plan.sums_at, final_plan.sums_stride, index, Real::fp64);
      };
      // Sums are kept relative to the first level's scale, 2^(e_A1 + e_B1) per element, so
      // that no term over- or underflows unless the whole element does (or the slices of one
      // row and column span more than binary64's range); the scale enters once at the end.
      const OuterExponents base{slices_a.exponent[0], slices_b.exponent[0]};
      std::int64_t issued = 0;             // products issued, the held ones included
      std::vector<OuterExponents> scales;  // of the held products, in issue order
      std::vector<GemmProduct> batch;      // the held tensor-core products, not yet computed
      // Computes the held tensor-core products, then adds the held products to the sum (DP, SP,
      // tunable) or scales each into its own (CR).
      auto add_held = [&] {
        const auto held = static_cast<std::int64_t>(scales.size());
        if (held == 0) return;
        if (tc) {
          backend.mma_gemm_batch(tc->datapath, {.alpha = 1.0f, .beta = 0.0f}, batch);
          batch.clear();
        }
        clock.lap(report.seconds_products);
        const std::int64_t first = issued - held;
        if (cr) {
          for (std::int64_t g = 0; g < held; ++g) {
            backend.accumulate_scaled(product(g), scales[static_cast<std::size_t>(g)], base,
                                      sum(first + g), true);
          }
        } else {
          backend.accumulate_scaled({product(0), held, final_plan.products_stride}, scales, base,
                                    sum(0), first == 0);
        }
        scales.clear();
        clock.lap(report.seconds_summation);
      };
      for (int level = 2; level <= slices_a.levels + slices_b.levels; ++level) {
        if (fast && level > d + 1) break;
        for (int p = std::max(1, level - slices_b.levels);
             p <= std::min(level - 1, slices_a.levels); ++p) {
          if (static_cast<int>(scales.size()) == final_plan.group) add_held();
          const int q = level - p;
          const RealMatrix out = product(static_cast<std::int64_t>(scales.size()));
          if (tc) {
            batch.push_back({std::get<BufferMatrix>(slices_a.slice[p - 1]),
                             std::get<BufferMatrix>(slices_b.slice[q - 1]),
                             {out.buffer, out.offset_bytes, formats::fp32, out.rows, out.cols,
                              out.ld, out.layout}});
          } else {
            backend.fp64_gemm(std::get<RealMatrix>(slices_a.slice[p - 1]),
                              std::get<RealMatrix>(slices_b.slice[q - 1]), out);
          }
          scales.push_back({slices_a.exponent[p - 1], slices_b.exponent[q - 1]});
          ++issued;
        }
        if (cr) add_held();  // CR's stack holds one level
      }
      add_held();
      report.gemms += issued;
      const RealMatrix value = sum(0);
      if (cr) backend.exact_sum({value, issued, final_plan.sums_stride}, base, value);
      const RealMatrix c_block = sub(problem.c, i0, j0, rows, cols);
      backend.epilogue(value, cr ? std::nullopt : std::optional<OuterExponents>(base),
                       problem.alpha, problem.beta, c_block, a_block, b_block, c_block);
      clock.lap(report.seconds_summation);
    }
  }
}

}  // namespace tcemu::ozaki::detail

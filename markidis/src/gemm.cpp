#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/backend/fp32_split_elements.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/markidis/gemm.hpp>

namespace tcemu::markidis {
namespace {

[[noreturn]] void bad(const Scheme& scheme, const std::string& what) {
  throw std::invalid_argument("scheme " + scheme.name + ": " + what);
}

// A dense matrix of `format` filling workspace buffer `slot`.
BufferMatrix dense(Backend& backend, Workspace& workspace, std::size_t slot,
                   const FloatFormat& format, std::int64_t rows, std::int64_t cols, Layout layout) {
  const Buffer& buffer = workspace.buffer(
      backend, slot, static_cast<std::size_t>(rows * cols) * container_bytes(format));
  const std::int64_t inner = layout == Layout::row_major ? cols : rows;
  return {&buffer, 0, format, rows, cols, std::max<std::int64_t>(inner, 1), layout};
}

// Workspace slots: the running residual of a split, then A's parts, B's parts, the accumulators.
constexpr std::size_t kResidualSlot = 0;

// The exponent of the leading bit of the finite magnitude with fp32 bits `abs_bits` (nonzero).
int leading_exponent(std::uint32_t abs_bits) {
  const int field = static_cast<int>(abs_bits >> 23);
  if (field != 0) return field - 127;
  return static_cast<int>(std::bit_width(abs_bits)) - 1 - 149;  // subnormal: value = bits 2^-149
}

// "%.9g" of the fp32 value with bits `bits`.
std::string fp32_text(std::uint32_t bits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", static_cast<double>(std::bit_cast<float>(bits)));
  return text;
}

// The elements of x whose magnitude is at least 2^exponent (finite, nonzero), counted by a split
// into `scratch` with RZ: an element overflows the part format exactly when |x| 2^e reaches
// 2^(max_exponent + 1) (Backend::split_fp32).
std::int64_t count_at_least(Backend& backend, const BufferMatrix& x, const BufferMatrix& scratch,
                            int exponent) {
  return backend.split_fp32(x, scratch, std::nullopt, Rounding::toward_zero,
                            scratch.format.max_exponent() + 1 - exponent);
}

// A matrix-scaled scheme scales the whole matrix by one power of two 2^t, so an element far below
// the largest falls under the smallest magnitude its most scaled part holds (the part format's
// smallest subnormal): it would be lost (a zero part) or kept as at most one unit, and the result
// would be wrong without a word. Such a matrix is refused, naming it and the magnitude range.
void refuse_lost_elements(Backend& backend, Workspace& workspace, const Scheme& scheme,
                          const BufferMatrix& x, const Fp32Summary& summary, int count,
                          const char* name, std::size_t scratch_slot, Layout layout,
                          int scale_exponent) {
  int most_scaled = scheme.parts[0].scale_exponent;
  for (int p = 1; p < count; ++p)
    most_scaled = std::max(most_scaled, scheme.parts[p].scale_exponent);
  const FloatFormat& f = scheme.part_format;
  // The smallest magnitude kept: 2^lowest, the smallest subnormal of f, unscaled.
  const int lowest = f.min_exponent() - f.fraction_bits - (scale_exponent + most_scaled);
  if (lowest <= -149) return;  // every nonzero fp32 magnitude is at least 2^-149
  const BufferMatrix scratch = dense(backend, workspace, scratch_slot, f, x.rows, x.cols, layout);
  const std::int64_t nonzero = count_at_least(backend, x, scratch, -149);
  const std::int64_t lost = nonzero - count_at_least(backend, x, scratch, lowest);
  if (lost == 0) return;
  bad(scheme, std::to_string(lost) + " nonzero element(s) of " + name + " lie below 2^" +
                  std::to_string(lowest) +
                  " and would be lost: one scaling of the whole matrix (2^" +
                  std::to_string(scale_exponent) + ", for the largest |" + name +
                  "| = " + fp32_text(summary.max_abs_bits) + ") keeps in its " +
                  std::string(f.name) + " parts only magnitudes from 2^" +
                  std::to_string(lowest - leading_exponent(summary.max_abs_bits)) +
                  " times the largest's power of two up; scale " + name +
                  "'s rows or columns first, or use a scheme with a wider part format (e.g. "
                  "tf32tf32)");
}

// The parts of one matrix (the first `count` of scheme.parts, in workspace slots first_slot, ...,
// of `layout`), with its scaling exponent.
struct Split {
  std::vector<BufferMatrix> parts;
  int scale_exponent = 0;
};

Split split(Backend& backend, Workspace& workspace, const Scheme& scheme, const BufferMatrix& x,
            const Fp32Summary& summary, int count, const char* name, std::size_t first_slot,
            Layout layout) {
  Split s;
  if (scheme.scale_to_exponent && summary.max_abs_bits != 0) {
    s.scale_exponent = *scheme.scale_to_exponent - leading_exponent(summary.max_abs_bits);
    refuse_lost_elements(backend, workspace, scheme, x, summary, count, name, first_slot, layout,
                         s.scale_exponent);
  }
  // The running residual (in place from the second part on); a one-part split needs none.
  const std::optional<BufferMatrix> residual =
      count > 1 ? std::optional<BufferMatrix>(dense(backend, workspace, kResidualSlot,
                                                    formats::fp32, x.rows, x.cols, layout))
                : std::nullopt;
  for (int p = 0; p < count; ++p) {
    s.parts.push_back(dense(backend, workspace, first_slot + static_cast<std::size_t>(p),
                            scheme.part_format, x.rows, x.cols, layout));
    const bool last = p + 1 == count;
    const std::int64_t overflows = backend.split_fp32(
        p == 0 ? x : *residual, s.parts.back(), last ? std::nullopt : residual,
        scheme.parts[p].rounding, s.scale_exponent + scheme.parts[p].scale_exponent);
    if (overflows > 0) {
      const std::string max_abs = fp32_text(summary.max_abs_bits);
      bad(scheme,
          std::to_string(overflows) + " element(s) of " + name + " overflow " +
              std::string(scheme.part_format.name) + " part " + std::to_string(p) + " (largest |" +
              name + "| = " + max_abs +
              (scheme.scale_to_exponent ? ", scaled by 2^" + std::to_string(s.scale_exponent) + ")"
                                        : "); outside the part format's range: use a scheme with "
                                          "scale_to_exponent (e.g. halfhalf-scaled)"));
    }
  }
  return s;
}

void check_operands(const Scheme& scheme, const BufferMatrix& a, const BufferMatrix& b,
                    const std::optional<BufferMatrix>& c, const BufferMatrix& d,
                    const RunOptions& options) {
  auto fp32 = [&](const BufferMatrix& x, const char* name) {
    if (!(x.format == formats::fp32)) {
      bad(scheme, std::string(name) + " holds " + std::string(x.format.name) + ", fp32 expected");
    }
  };
  fp32(a, "A");
  fp32(b, "B");
  fp32(d, "D");
  if (c) fp32(*c, "C");
  if (a.cols != b.rows || d.rows != a.rows || d.cols != b.cols ||
      (c && (c->rows != d.rows || c->cols != d.cols))) {
    bad(scheme, "shapes do not match: A " + std::to_string(a.rows) + " x " +
                    std::to_string(a.cols) + ", B " + std::to_string(b.rows) + " x " +
                    std::to_string(b.cols) + ", D " + std::to_string(d.rows) + " x " +
                    std::to_string(d.cols));
  }
  if (options.beta != 0.0f && !c) bad(scheme, "beta != 0 needs C");
}

}  // namespace

void gemm(Backend& backend, const Scheme& scheme, const Datapath& datapath, const BufferMatrix& a,
          const BufferMatrix& b, const std::optional<BufferMatrix>& c, const BufferMatrix& d,
          const RunOptions& options) {
  const FloatingPointScope scope;
  validate(scheme, datapath);
  check_operands(scheme, a, b, c, d, options);
  const std::int64_t m = a.rows, n = b.cols;
  if (m == 0 || n == 0) return;

  // Only the parts some product uses are computed.
  int a_count = 0, b_count = 0;
  for (const AccumulatorGroup& g : scheme.groups) {
    for (const Product& p : g.products) {
      a_count = std::max(a_count, p.a_part + 1);
      b_count = std::max(b_count, p.b_part + 1);
    }
  }
  Workspace own;
  Workspace& workspace = options.workspace ? *options.workspace : own;
  // Adds the seconds since the last mark to *phase (when phases are measured).
  auto last_mark = std::chrono::steady_clock::now();
  const auto mark = [&](double PhaseSeconds::*phase) {
    if (options.phases == nullptr) return;
    backend.synchronize();
    const auto now = std::chrono::steady_clock::now();
    options.phases->*phase += std::chrono::duration<double>(now - last_mark).count();
    last_mark = now;
  };
  if (options.phases != nullptr) {
    *options.phases = {};
    backend.synchronize();
    last_mark = std::chrono::steady_clock::now();
  }
  // The parts are stored k-contiguous (A's rows, B's columns: cuBLAS's TN case), the layout a GEMM
  // kernel reads without packing; the layout changes no bit.
  const Fp32Summary a_summary = backend.summarize_fp32(a);
  const Fp32Summary b_summary = backend.summarize_fp32(b);
  mark(&PhaseSeconds::summaries);
  const std::size_t a_first = kResidualSlot + 1, b_first = a_first + a_count;
  const Split as =
      split(backend, workspace, scheme, a, a_summary, a_count, "A", a_first, Layout::row_major);
  const Split bs =
      split(backend, workspace, scheme, b, b_summary, b_count, "B", b_first, Layout::column_major);
  mark(&PhaseSeconds::splits);

  // One fp32 accumulator per group: a chain of GEMMs, each continuing the previous one's result.
  std::vector<BufferMatrix> accumulators;
  for (const AccumulatorGroup& g : scheme.groups) {
    accumulators.push_back(dense(backend, workspace, b_first + b_count + accumulators.size(),
                                 formats::fp32, m, n, Layout::column_major));
    const BufferMatrix acc = accumulators.back();
    GemmOptions gemm_options;
    gemm_options.threads = options.threads;
    gemm_options.takeout_every_k =
        static_cast<std::int64_t>(g.takeout_every_instructions) * datapath.instruction_k;
    for (std::size_t p = 0; p < g.products.size(); ++p) {
      const BufferMatrix& ap = as.parts[g.products[p].a_part];
      const BufferMatrix& bp = bs.parts[g.products[p].b_part];
      if (p == 0) {
        gemm_options.c_input = CInput::epilogue;
        backend.mma_gemm(datapath, gemm_options, ap, bp, std::nullopt, acc);
      } else {
        gemm_options.c_input = CInput::initial_accumulator;
        gemm_options.beta = 1.0f;
        backend.mma_gemm(datapath, gemm_options, ap, bp, acc, acc);
      }
    }
  }

  mark(&PhaseSeconds::products);

  // Fold the groups into the first, at its weight; the last combination also unscales and, unless
  // special values must be fixed first, applies the epilogue. One group: that last step alone.
  const bool special =
      a_summary.nan_count + a_summary.inf_count + b_summary.nan_count + b_summary.inf_count > 0;
  const int sigma0 = group_weight(scheme, scheme.groups.front());
  const BufferMatrix acc = accumulators.front();
  const std::size_t last = scheme.groups.size() - 1;
  for (std::size_t g = last == 0 ? 0 : 1; g <= last; ++g) {
    CombineOptions combine;
    std::optional<BufferMatrix> y;
    if (g > 0) {
      y = accumulators[g];
      combine.y_exponent = sigma0 - group_weight(scheme, scheme.groups[g]);
    }
    const bool epilogue_here = g == last && !special;
    if (g == last) combine.scale_exponent = -(sigma0 + as.scale_exponent + bs.scale_exponent);
    if (epilogue_here) {
      combine.alpha = options.alpha;
      combine.beta = options.beta;
    }
    backend.combine_fp32(acc, y, epilogue_here ? c : std::nullopt, epilogue_here ? d : acc,
                         combine);
  }
  if (special) {
    backend.propagate_nonfinite_fp32(a, b, acc);
    CombineOptions epilogue;
    epilogue.alpha = options.alpha;
    epilogue.beta = options.beta;
    backend.combine_fp32(acc, std::nullopt, c, d, epilogue);
  }
  mark(&PhaseSeconds::combination);
}

}  // namespace tcemu::markidis

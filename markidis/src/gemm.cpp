#include <algorithm>
#include <bit>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/residual_split.hpp>
#include <tcemu/markidis/gemm.hpp>

namespace tcemu::markidis {
namespace {

[[noreturn]] void bad(const Scheme& scheme, const std::string& what) {
  throw std::invalid_argument("scheme " + scheme.name + ": " + what);
}

// A dense column-major matrix of `format` filling a buffer of its own. The view is made on
// demand: a Workspace moves (inside vectors), its Buffer's address with it.
struct Workspace {
  Buffer buffer;
  FloatFormat format;
  std::int64_t rows, cols;
  BufferMatrix matrix() const {
    return {&buffer, 0, format, rows, cols, std::max<std::int64_t>(rows, 1), Layout::column_major};
  }
};

Workspace workspace(Backend& backend, const FloatFormat& format, std::int64_t rows,
                    std::int64_t cols) {
  return {backend.allocate(static_cast<std::size_t>(rows * cols) * container_bytes(format)), format,
          rows, cols};
}

// The exponent of the leading bit of the finite magnitude with fp32 bits `abs_bits` (nonzero).
int leading_exponent(std::uint32_t abs_bits) {
  const int field = static_cast<int>(abs_bits >> 23);
  if (field != 0) return field - 127;
  return static_cast<int>(std::bit_width(abs_bits)) - 1 - 149;  // subnormal: value = bits 2^-149
}

// The parts of one matrix (the first `count` of scheme.parts), with its scaling exponent.
struct Split {
  std::vector<Workspace> parts;
  int scale_exponent = 0;
};

Split split(Backend& backend, const Scheme& scheme, const BufferMatrix& x,
            const Fp32Summary& summary, int count, const char* name) {
  Split s;
  if (scheme.scale_to_exponent && summary.max_abs_bits != 0) {
    s.scale_exponent = *scheme.scale_to_exponent - leading_exponent(summary.max_abs_bits);
  }
  // The running residual (in place from the second part on); a one-part split needs none.
  Workspace residual = workspace(backend, formats::fp32, count > 1 ? x.rows : 0, x.cols);
  for (int p = 0; p < count; ++p) {
    s.parts.push_back(workspace(backend, scheme.part_format, x.rows, x.cols));
    const bool last = p + 1 == count;
    const std::optional<BufferMatrix> rest =
        last ? std::nullopt : std::optional<BufferMatrix>(residual.matrix());
    const std::int64_t overflows = backend.split_fp32(
        p == 0 ? x : residual.matrix(), s.parts.back().matrix(), rest, scheme.parts[p].rounding,
        s.scale_exponent + scheme.parts[p].scale_exponent);
    if (overflows > 0) {
      char max_abs[32];
      std::snprintf(max_abs, sizeof max_abs, "%.9g",
                    static_cast<double>(std::bit_cast<float>(summary.max_abs_bits)));
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
  const Fp32Summary a_summary = backend.summarize_fp32(a);
  const Fp32Summary b_summary = backend.summarize_fp32(b);
  const Split as = split(backend, scheme, a, a_summary, a_count, "A");
  const Split bs = split(backend, scheme, b, b_summary, b_count, "B");

  // One fp32 accumulator per group: a chain of GEMMs, each continuing the previous one's result.
  std::vector<Workspace> accumulators;
  for (const AccumulatorGroup& g : scheme.groups) {
    accumulators.push_back(workspace(backend, formats::fp32, m, n));
    const BufferMatrix acc = accumulators.back().matrix();
    GemmOptions gemm_options;
    gemm_options.threads = options.threads;
    gemm_options.takeout_every_k =
        static_cast<std::int64_t>(g.takeout_every_instructions) * datapath.instruction_k;
    for (std::size_t p = 0; p < g.products.size(); ++p) {
      const BufferMatrix ap = as.parts[g.products[p].a_part].matrix();
      const BufferMatrix bp = bs.parts[g.products[p].b_part].matrix();
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

  // Fold the groups into the first, at its weight; the last combination also unscales and, unless
  // special values must be fixed first, applies the epilogue. One group: that last step alone.
  const bool special =
      a_summary.nan_count + a_summary.inf_count + b_summary.nan_count + b_summary.inf_count > 0;
  const int sigma0 = group_weight(scheme, scheme.groups.front());
  const BufferMatrix acc = accumulators.front().matrix();
  const std::size_t last = scheme.groups.size() - 1;
  for (std::size_t g = last == 0 ? 0 : 1; g <= last; ++g) {
    CombineOptions combine;
    std::optional<BufferMatrix> y;
    if (g > 0) {
      y = accumulators[g].matrix();
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
}

}  // namespace tcemu::markidis

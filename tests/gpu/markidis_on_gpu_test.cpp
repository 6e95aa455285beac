// The error-corrected SGEMM schemes on the GPU backend (issue 5). With our kernels (the mma_sync
// and fastest engines) and the device fp32 steps every scheme gives the same bits as on the
// emulator backend with the GPU's preset: the scheme, the datapath and every step's arithmetic are
// the same, so the bits must be. The split step's device fast path is checked element by element
// against the emulator's. Composed from cuBLAS (the cublas engine) a scheme's bits are cuBLAS's:
// they must equal the emulator's where every product and sum is exact, and be close otherwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <tcemu/backend/fp32_split_elements.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/markidis/gemm.hpp>
#include <tcemu/markidis/presets.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu {
namespace {

std::string skip_reason() {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) return "no CUDA device: " + why;
  if (devices.front().arch_preset().empty()) {
    return "no emulator preset for " + devices.front().name;
  }
  return "";
}

// The sgemm of one test case: C = 1.5 A B^T - 0.5 C, A m x k, B n x k (transb 'T').
struct Case {
  std::int64_t m, n, k;
  std::vector<float> a, b, c;

  void run(Backend& backend, const markidis::Scheme& scheme, const Datapath& dp,
           std::vector<float>& out) const {
    out = c;
    markidis::sgemm(backend, scheme, dp, 'N', 'T', m, n, k, 1.5f, a.data(), m, b.data(), n, -0.5f,
                    out.data(), m);
  }

  // The inputs of element (i, j) of the result: C's element, row i of A and column j of B^T.
  std::string inputs(std::int64_t i, std::int64_t j) const {
    return "C " + test::hex_of(c[j * m + i]) + ", A row " + std::to_string(i) + ": " +
           test::value_range(k, [&](std::int64_t p) { return a[p * m + i]; }) + "\nB^T column " +
           std::to_string(j) + ": " +
           test::value_range(k, [&](std::int64_t p) { return b[p * n + j]; });
  }

  // `got` against `want`, both m x n column major, bit for bit.
  test::BitComparison compare(const std::vector<float>& want, const std::vector<float>& got) const {
    return test::compare_bits(want, got, m, n, {.inputs = [this](std::int64_t i, std::int64_t j) {
                                return inputs(i, j);
                              }});
  }
};

Case random_case(std::int64_t m, std::int64_t n, std::int64_t k, bool specials) {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::normal_distribution<float> normal;
  Case t{m,
         n,
         k,
         std::vector<float>(static_cast<std::size_t>(m * k)),
         std::vector<float>(static_cast<std::size_t>(n * k)),
         std::vector<float>(static_cast<std::size_t>(m * n))};
  for (float& x : t.a) x = uniform(rng) * std::exp(2.0f * normal(rng));
  for (float& x : t.b) x = uniform(rng) * std::exp(2.0f * normal(rng));
  for (float& x : t.c) x = uniform(rng);
  if (specials) {
    t.a[7] = INFINITY;  // NaN and Inf propagate as SGEMM's do, on both backends
    t.b[100] = NAN;
  }
  return t;
}

TEST(MarkidisOnGpu, EverySchemeGivesTheEmulatorsBitsOnOurKernels) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string arch = gpu::list_devices().front().arch_preset();
  const auto emulator = host::make_emulator_backend();
  const Case t = random_case(150, 70, 333, true);
  for (const gpu::GemmEngine engine : {gpu::GemmEngine::mma_sync, gpu::GemmEngine::fastest}) {
    const auto gpu_backend = gpu::make_gpu_backend({.engine = engine});
    for (const std::string_view scheme_name : markidis::scheme_names()) {
      const std::string name(scheme_name);
      const markidis::Scheme scheme = markidis::scheme_by_name(name);
      const Datapath dp = markidis::scheme_datapath(scheme, arch, "mma.sync");
      std::vector<float> on_gpu, on_emulator;
      try {
        t.run(*gpu_backend, scheme, dp, on_gpu);
      } catch (const std::invalid_argument& e) {
        // A scheme without scaling refuses inputs outside its part format; both backends must.
        EXPECT_THROW(t.run(*emulator, scheme, dp, on_emulator), std::invalid_argument) << name;
        std::printf("%s: refused on both backends (%s)\n", name.c_str(), e.what());
        continue;
      }
      t.run(*emulator, scheme, dp, on_emulator);
      const test::BitComparison same = t.compare(on_emulator, on_gpu);
      EXPECT_TRUE(same.result) << name << " on " << gpu_backend->name();
      std::printf("%s on %s, %lld x %lld x %lld: %lld elements differ from the emulator\n",
                  name.c_str(), gpu_backend->name().c_str(), static_cast<long long>(t.m),
                  static_cast<long long>(t.n), static_cast<long long>(t.k),
                  static_cast<long long>(same.differing));
    }
  }
}

// Repeated calls through one Workspace on device buffers (A column major, B row major, C and D
// aliased): the bits of the first call, every time, at two sizes.
TEST(MarkidisOnGpu, AWorkspaceReusedAcrossCallsKeepsTheBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string arch = gpu::list_devices().front().arch_preset();
  const auto gpu_backend = gpu::make_gpu_backend({.engine = gpu::GemmEngine::fastest});
  const auto emulator = host::make_emulator_backend();
  markidis::Workspace workspace;
  for (const Case& t : {random_case(300, 260, 512, false), random_case(33, 17, 40, false)}) {
    for (const char* name : {"halfhalf", "tf32tf32", "bf16x3"}) {
      const markidis::Scheme scheme = markidis::scheme_by_name(name);
      const Datapath dp = markidis::scheme_datapath(scheme, arch);
      std::vector<float> want;
      t.run(*emulator, scheme, dp, want);
      const auto put = [&](const std::vector<float>& host) {
        Buffer buffer = gpu_backend->allocate(host.size() * sizeof(float));
        gpu_backend->copy_in(host.data(), buffer, host.size() * sizeof(float));
        return buffer;
      };
      const Buffer a = put(t.a), b = put(t.b);
      for (int call = 0; call < 3; ++call) {
        Buffer c = put(t.c);
        const BufferMatrix cm{&c, 0, formats::fp32, t.m, t.n, t.m, Layout::column_major};
        markidis::gemm(*gpu_backend, scheme, dp,
                       {&a, 0, formats::fp32, t.m, t.k, t.m, Layout::column_major},
                       {&b, 0, formats::fp32, t.k, t.n, t.n, Layout::row_major}, cm, cm,
                       {.alpha = 1.5f, .beta = -0.5f, .workspace = &workspace});
        std::vector<float> got(want.size());
        gpu_backend->copy_out(c, got.data(), got.size() * sizeof(float));
        EXPECT_TRUE(t.compare(want, got).result) << name << " call " << call << " m = " << t.m;
      }
    }
  }
}

// The device split (flat where x and the part share a layout, tiled where it changes; with its fp32
// fast path for fp16/bf16/tf32 and 0 <= e <= 126) against the emulator's split_fp32_element: about
// a million fp32 bit patterns spread over all 2^32 and the edges of every format, every part
// format, both roundings, exponents on both sides of the fast path, a change of layout and a
// tile-ragged shape.
TEST(MarkidisOnGpu, SplitStepGivesTheEmulatorsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu_backend = gpu::make_gpu_backend();
  std::vector<std::uint32_t> inputs;
  for (const float v : {65504.0f, 65519.99f, 65520.0f, 65536.0f, 0x1.ffep-15f, 0x1p-24f, 0x1p-25f,
                        0x1.8p-25f, 0x1p-126f, 0x1p-149f, 0x1.fffffep127f, 1.0f, 1.0f + 0x1p-11f,
                        1.0f + 0x1p-23f, 0x1.ffep-1f}) {
    for (int delta = -2; delta <= 2; ++delta) {
      const std::uint32_t bits =
          std::bit_cast<std::uint32_t>(v) + static_cast<std::uint32_t>(delta);
      inputs.push_back(bits);
      inputs.push_back(bits ^ 0x80000000u);
    }
  }
  for (const std::uint32_t special :
       {0u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u}) {
    inputs.push_back(special);
  }
  for (std::uint64_t x = 0; x < (std::uint64_t{1} << 32); x += 4099) {
    inputs.push_back(static_cast<std::uint32_t>(x));
  }
  const std::int64_t rows = 997;
  const std::int64_t cols = static_cast<std::int64_t>(inputs.size()) / rows;
  inputs.resize(static_cast<std::size_t>(rows * cols));  // drops some of the spread patterns
  const std::size_t count = inputs.size();
  Buffer x = gpu_backend->allocate(count * 4), part = gpu_backend->allocate(count * 4),
         residual = gpu_backend->allocate(count * 4);
  gpu_backend->copy_in(inputs.data(), x, count * 4);
  const BufferMatrix xm{&x, 0, formats::fp32, rows, cols, rows, Layout::column_major};
  for (const FloatFormat& format : {formats::fp16, formats::bf16, formats::tf32, formats::e5m2}) {
    const int part_bytes = static_cast<int>(container_bytes(format));
    for (const Rounding rounding : {Rounding::nearest_even, Rounding::toward_zero}) {
      for (const int e : {-140, -20, -1, 0, 1, 11, 30, 126, 127, 200}) {
        std::vector<SplitElement> want(count);
        std::int64_t want_overflows = 0;
        for (std::size_t i = 0; i < count; ++i) {
          want[i] = split_fp32_element(inputs[i], format, rounding, e);
          want_overflows += want[i].overflow;
        }
        for (const Layout layout : {Layout::row_major, Layout::column_major}) {
          const std::int64_t ld = layout == Layout::row_major ? cols : rows;
          const BufferMatrix pm{&part, 0, format, rows, cols, ld, layout};
          const BufferMatrix rm{&residual, 0, formats::fp32, rows, cols, ld, layout};
          const std::int64_t overflows = gpu_backend->split_fp32(xm, pm, rm, rounding, e);
          std::vector<unsigned char> parts(count * part_bytes);
          std::vector<std::uint32_t> residuals(count);
          gpu_backend->copy_out(part, parts.data(), parts.size());
          gpu_backend->copy_out(residual, residuals.data(), count * 4);
          // Element (i, j): x's at j rows + i, the part's and residual's where `layout` puts it.
          const auto at = [&](std::int64_t i, std::int64_t j) {
            return static_cast<std::size_t>(layout == Layout::row_major ? i * cols + j
                                                                        : j * rows + i);
          };
          const auto x_of = [&](std::int64_t i, std::int64_t j) {
            return "x " + test::hex(inputs[static_cast<std::size_t>(j * rows + i)], 8);
          };
          const std::string what = std::string(format.name) + " " + std::string(name_of(rounding)) +
                                   " e=" + std::to_string(e) +
                                   (layout == Layout::row_major ? ", row major" : ", column major");
          EXPECT_TRUE(test::same_bits_at(
              rows, cols, [&](std::int64_t i, std::int64_t j) { return want[j * rows + i].part; },
              [&](std::int64_t i, std::int64_t j) {
                std::uint32_t got_part = 0;
                std::memcpy(&got_part, parts.data() + at(i, j) * part_bytes, part_bytes);
                return got_part;
              },
              {.inputs = x_of,
               .value =
                   [&](std::uint64_t bits) {
                     return test::fp32_value(convert(format, formats::fp32,
                                                     static_cast<std::uint32_t>(bits),
                                                     Rounding::nearest_even));
                   }}))
              << "part, " << what;
          EXPECT_TRUE(test::same_bits_at(
              rows, cols,
              [&](std::int64_t i, std::int64_t j) { return want[j * rows + i].residual; },
              [&](std::int64_t i, std::int64_t j) { return residuals[at(i, j)]; },
              {.inputs = x_of, .value = test::fp32_value}))
              << "residual, " << what;
          EXPECT_EQ(overflows, want_overflows) << format.name << " e=" << e;
        }
      }
    }
  }
}

// The device summary and combination (flat: four elements to a thread; otherwise the 2-D loop)
// against the emulator's on fp32 bit patterns spread over all 2^32 with the specials and the
// edges of the subnormal and overflow ranges: an odd element count (the flat path's tail), views
// that are flat, strided (ld > rows) and misaligned (offset 4 bytes), d in both layouts, and
// scalings inside and outside the device's one-multiply range [-126, 127].
TEST(MarkidisOnGpu, SummaryAndCombinationStepsGiveTheEmulatorsBits) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto gpu_backend = gpu::make_gpu_backend();
  const auto emulator = host::make_emulator_backend();
  // Strided views: ld = rows + 2 (column major) or cols + 2 (row major); +1: the misaligned view.
  const std::int64_t rows = 331, cols = 201;
  const auto size = static_cast<std::size_t>((rows + 2) * (cols + 2) + 1);
  std::mt19937_64 rng(7);
  const auto patterns = [&] {
    std::vector<std::uint32_t> v(size);
    for (std::uint32_t& x : v) x = static_cast<std::uint32_t>(rng());
    const std::uint32_t edges[] = {0u,          0x80000000u, 0x7F800000u, 0xFF800000u,
                                   0x7FC00000u, 0xFFC00001u, 0x00000001u, 0x007FFFFFu,
                                   0x00800000u, 0x7F7FFFFFu, 0x3F800000u, 0x80800001u};
    for (std::size_t i = 0; i < std::size(edges); ++i) v[i * 97] = edges[i];
    return v;
  };
  const std::vector<std::uint32_t> xs = patterns(), ys = patterns(), cs = patterns();
  struct Both {
    Buffer gpu, emulator;
  };
  const auto put = [&](const std::vector<std::uint32_t>& host) {
    Both b{gpu_backend->allocate(size * 4), emulator->allocate(size * 4)};
    gpu_backend->copy_in(host.data(), b.gpu, size * 4);
    emulator->copy_in(host.data(), b.emulator, size * 4);
    return b;
  };
  const Both x = put(xs), y = put(ys), c = put(cs);
  struct View {
    std::size_t offset;
    std::int64_t pad;  // ld beyond the vector length
    const char* what;
  };
  const View views[] = {{0, 0, "flat"}, {0, 2, "strided"}, {4, 0, "misaligned"}};
  const auto on = [&](const Buffer& buffer, const View& v, Layout layout = Layout::column_major) {
    const std::int64_t ld = (layout == Layout::column_major ? rows : cols) + v.pad;
    return BufferMatrix{&buffer, v.offset, formats::fp32, rows, cols, ld, layout};
  };

  for (const View& v : views) {
    const Fp32Summary got = gpu_backend->summarize_fp32(on(x.gpu, v));
    const Fp32Summary want = emulator->summarize_fp32(on(x.emulator, v));
    EXPECT_EQ(got.max_abs_bits, want.max_abs_bits) << v.what;
    EXPECT_EQ(got.nan_count, want.nan_count) << v.what;
    EXPECT_EQ(got.inf_count, want.inf_count) << v.what;
  }

  const CombineOptions options[] = {{0, 0, 1.0f, 0.0f},        {-11, 0, 1.0f, 0.0f},
                                    {-11, 3, 1.5f, -0.5f},     {127, -126, 1.0f, 0.0f},
                                    {-126, 127, -2.0f, 0.25f}, {128, -127, 1.0f, 0.0f},
                                    {-150, 200, 0.75f, 3.0f},  {300, -300, 1.0f, -1.0f}};
  Buffer d_gpu = gpu_backend->allocate(size * 4), d_emulator = emulator->allocate(size * 4);
  std::vector<std::uint32_t> got(size), want(size);
  for (const View& v : views) {
    for (const Layout layout : {Layout::column_major, Layout::row_major}) {
      for (const CombineOptions& o : options) {
        for (const bool with_y : {true, false}) {
          const auto run = [&](Backend& backend, const Buffer& xb, const Buffer& yb,
                               const Buffer& cb, Buffer& db, std::vector<std::uint32_t>& out) {
            std::fill(out.begin(), out.end(), 0u);
            backend.copy_in(out.data(), db, size * 4);
            backend.combine_fp32(on(xb, v), with_y ? std::optional(on(yb, v)) : std::nullopt,
                                 on(cb, v, layout), on(db, v, layout), o);
            backend.copy_out(db, out.data(), size * 4);
          };
          run(*gpu_backend, x.gpu, y.gpu, c.gpu, d_gpu, got);
          run(*emulator, x.emulator, y.emulator, c.emulator, d_emulator, want);
          // Every word of the buffer; an element of D is named with the elements it is made of.
          const auto inputs = [&](std::int64_t word, std::int64_t) -> std::string {
            const std::int64_t e = word - static_cast<std::int64_t>(v.offset / 4);
            const std::int64_t ld = (layout == Layout::column_major ? rows : cols) + v.pad;
            const std::int64_t outer = e / ld, inner = e % ld;
            const std::int64_t i = layout == Layout::column_major ? inner : outer,
                               j = layout == Layout::column_major ? outer : inner;
            if (e < 0 || i >= rows || j >= cols) return "outside D: left as 0";
            const auto x_at = static_cast<std::size_t>(v.offset / 4 + j * (rows + v.pad) + i);
            const auto c_at = static_cast<std::size_t>(word);
            return "D(" + std::to_string(i) + ", " + std::to_string(j) + "): x " +
                   test::hex(xs[x_at], 8) + (with_y ? ", y " + test::hex(ys[x_at], 8) : "") +
                   ", c " + test::hex(cs[c_at], 8);
          };
          EXPECT_TRUE(test::same_bits(want, got, static_cast<std::int64_t>(size), 1,
                                      {.inputs = inputs, .value = test::fp32_value}))
              << v.what << " " << (layout == Layout::row_major ? "row" : "col") << " d, y_exponent "
              << o.y_exponent << ", scale_exponent " << o.scale_exponent << ", alpha " << o.alpha
              << ", beta " << o.beta << (with_y ? "" : ", no y");
        }
      }
    }
  }
}

// Inputs where every product and every partial sum of a product group is exact in fp32, so that
// cuBLAS's order of summation cannot change a bit: the cuBLAS-composed scheme must give the
// emulator's bits. Integers in [-8, 8] (all parts but the first are zero) for every scheme; for
// the two-accumulator schemes also a + b 2^-12 (a in +-[4, 8], b in [0, 8] of a's sign), whose
// second part is b 2^-12 (b / 2 in halfhalf) and whose correction products stay exact.
TEST(MarkidisOnGpu, CublasComposedSchemesAreExactWhereOrderCannotMatter) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string arch = gpu::list_devices().front().arch_preset();
  const auto cublas = gpu::make_gpu_backend({.engine = gpu::GemmEngine::cublas});
  const auto emulator = host::make_emulator_backend();
  std::mt19937_64 rng(8);
  for (const bool with_low_part : {false, true}) {
    Case t = random_case(150, 70, 333, false);
    const auto draw = [&](std::vector<float>& v) {
      for (float& x : v) {
        if (!with_low_part) {
          x = static_cast<float>(static_cast<int>(rng() % 17) - 8);
          continue;
        }
        const int a = 4 + static_cast<int>(rng() % 5), b = static_cast<int>(rng() % 9);
        x = (rng() % 2 ? -1.0f : 1.0f) *
            (static_cast<float>(a) + std::ldexp(static_cast<float>(b), -12));
      }
    };
    draw(t.a);
    draw(t.b);
    // C odd (never zero), so that the sign of an exactly zero A B never shows in D.
    for (float& x : t.c) x = static_cast<float>(2 * static_cast<int>(rng() % 8) - 7);
    for (const std::string_view scheme_name : markidis::scheme_names()) {
      const std::string name(scheme_name);
      if (with_low_part && name != "halfhalf" && name != "halfhalf-scaled" && name != "tf32tf32") {
        continue;
      }
      const markidis::Scheme scheme = markidis::scheme_by_name(name);
      const Datapath dp = markidis::scheme_datapath(scheme, arch);
      std::vector<float> on_cublas, on_emulator;
      t.run(*cublas, scheme, dp, on_cublas);
      t.run(*emulator, scheme, dp, on_emulator);
      const test::BitComparison same = t.compare(on_emulator, on_cublas);
      EXPECT_TRUE(same.result) << name << (with_low_part ? " a + b 2^-12" : " integers");
      std::printf("%s composed from cuBLAS, %s: %lld elements differ from the emulator\n",
                  name.c_str(), with_low_part ? "a + b 2^-12" : "integers",
                  static_cast<long long>(same.differing));
    }
  }
}

// On general inputs the cuBLAS composition computes the same scheme in another order: close to
// our kernels' result, normwise within what k = 333 truncating steps can move (the one-accumulator
// schemes) and far tighter for the two-accumulator ones.
TEST(MarkidisOnGpu, CublasComposedSchemesAreCloseToOurKernels) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string arch = gpu::list_devices().front().arch_preset();
  const auto cublas = gpu::make_gpu_backend({.engine = gpu::GemmEngine::cublas});
  const auto ours = gpu::make_gpu_backend({.engine = gpu::GemmEngine::fastest});
  const Case t = random_case(150, 70, 333, false);
  for (const std::string_view scheme_name : markidis::scheme_names()) {
    const std::string name(scheme_name);
    const markidis::Scheme scheme = markidis::scheme_by_name(name);
    const Datapath dp = markidis::scheme_datapath(scheme, arch);
    std::vector<float> on_cublas, on_ours;
    try {
      t.run(*ours, scheme, dp, on_ours);
    } catch (const std::invalid_argument&) {
      EXPECT_THROW(t.run(*cublas, scheme, dp, on_cublas), std::invalid_argument) << name;
      continue;
    }
    t.run(*cublas, scheme, dp, on_cublas);
    double num = 0, den = 0;
    for (std::size_t i = 0; i < on_ours.size(); ++i) {
      const double d = static_cast<double>(on_cublas[i]) - on_ours[i];
      num += d * d;
      den += static_cast<double>(on_ours[i]) * on_ours[i];
    }
    const double relative = std::sqrt(num / den);
    const bool two_accumulators = scheme.groups.size() > 1;
    EXPECT_LT(relative, two_accumulators ? 1e-6 : 1e-4) << name;
    std::printf("%s composed from cuBLAS: ||cuBLAS - ours|| / ||ours|| = %.2e\n", name.c_str(),
                relative);
  }
}

}  // namespace
}  // namespace tcemu

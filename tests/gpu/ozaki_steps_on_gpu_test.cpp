// Every Ozaki step of the GPU backend (device kernels and cublasDgemm) gives the emulator
// backend's bits (issue 4): the same inputs, byte for byte, on both backends, including NaN
// payloads, signed zeros, Inf, subnormals, the extremes of binary64 and a huge exponent spread,
// every layout, padded leading dimensions (whose padding must stay untouched) and vectors too long
// for the split kernel's shared memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/backend/crt_bounds.hpp>
#include <tcemu/backend/crt_moduli.hpp>
#include <tcemu/backend/crt_residues.hpp>
#include <tcemu/backend/crt_scaling.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/gpu_backend.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu {
namespace {

using Bytes = std::vector<unsigned char>;

// Doubles of every kind: a fraction `special` of zeros, Inf, NaN (quiet and signalling, with
// payloads), subnormals, the largest and smallest normals; the rest (rand - 0.5) exp(2 randn),
// a third of them scaled by 2^e with e uniform in [-1060, 1010].
double any_double(std::mt19937_64& rng, double special) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal;
  if (unit(rng) < special) {
    const double max = std::numeric_limits<double>::max();
    const double tiny = std::numeric_limits<double>::denorm_min();
    const std::array<double, 12> pick = {
        0.0,
        -0.0,
        INFINITY,
        -INFINITY,
        std::bit_cast<double>(0x7FF8000000012345ULL),  // quiet NaN, payload
        std::bit_cast<double>(0xFFF0000000000001ULL),  // signalling NaN, negative
        tiny,
        -tiny * static_cast<double>(rng() % 1000000 + 1),
        max,
        -max,
        std::numeric_limits<double>::min(),
        std::ldexp(1.0 + unit(rng), 1023)};
    return pick[rng() % pick.size()];
  }
  const double x = (unit(rng) - 0.5) * std::exp(2.0 * normal(rng));
  if (rng() % 3 == 0) return std::ldexp(x, static_cast<int>(rng() % 2071) - 1060);
  return x;
}

// The same for fp32: zeros, Inf, NaN with payloads, subnormals, largest finite.
float any_float(std::mt19937_64& rng, double special) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal;
  if (unit(rng) < special) {
    const std::array<std::uint32_t, 9> pick = {0x00000000u, 0x80000000u, 0x7F800000u,
                                               0xFF800000u, 0x7FC12345u, 0xFF812345u,
                                               0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu};
    return std::bit_cast<float>(pick[rng() % pick.size()]);
  }
  return static_cast<float>((unit(rng) - 0.5) * std::exp(3.0 * normal(rng)));
}

// A matrix's storage: rows x cols with leading dimension ld (>= the inner dimension; the padding
// holds random bytes that a step must leave alone).
struct Shape {
  std::int64_t rows, cols, ld;
  Layout layout;
  std::int64_t outer() const { return layout == Layout::row_major ? rows : cols; }
  std::int64_t inner() const { return layout == Layout::row_major ? cols : rows; }
  std::size_t index(std::int64_t i, std::int64_t j) const {
    return static_cast<std::size_t>(layout == Layout::row_major ? i * ld + j : j * ld + i);
  }
};

Shape shape(std::int64_t rows, std::int64_t cols, Layout layout, std::int64_t pad = 0) {
  return {rows, cols, std::max<std::int64_t>(1, layout == Layout::row_major ? cols : rows) + pad,
          layout};
}

std::size_t storage_elements(const Shape& s) {
  return static_cast<std::size_t>(std::max<std::int64_t>(1, s.outer() * s.ld));
}

Bytes random_bytes(std::size_t count, std::mt19937_64& rng) {
  Bytes b(count);
  for (auto& x : b) x = static_cast<unsigned char>(rng());
  return b;
}

// Elements of `type` drawn by any_double / any_float, padding random.
Bytes real_bytes_of(const Shape& s, Real type, std::mt19937_64& rng, double special) {
  Bytes b = random_bytes(storage_elements(s) * real_bytes(type), rng);
  for (std::int64_t i = 0; i < s.rows; ++i) {
    for (std::int64_t j = 0; j < s.cols; ++j) {
      if (type == Real::fp64) {
        const double x = any_double(rng, special);
        std::memcpy(b.data() + s.index(i, j) * 8, &x, 8);
      } else {
        const float x = any_float(rng, special);
        std::memcpy(b.data() + s.index(i, j) * 4, &x, 4);
      }
    }
  }
  return b;
}

// The GPU backend (0) and the emulator backend (1), with the same bytes put on both.
class OzakiStepsOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (gpu::list_devices(&why).empty()) GTEST_SKIP() << "no CUDA device: " << why;
    gpu_ = gpu::make_gpu_backend();
    host_ = host::make_emulator_backend();
    backends_ = {gpu_.get(), host_.get()};
  }

  // The same bytes in a buffer of each backend.
  struct Twin {
    std::array<Buffer, 2> on;
  };
  Twin put(const Bytes& bytes) {
    Twin t;
    for (int b = 0; b < 2; ++b) {
      t.on[b] = backends_[b]->allocate(bytes.size());
      backends_[b]->copy_in(bytes.data(), t.on[b], bytes.size());
    }
    return t;
  }
  Bytes take(int b, const Twin& t) const {
    Bytes out(t.on[b].bytes());
    backends_[b]->copy_out(t.on[b], out.data(), out.size());
    return out;
  }
  // Every byte of the two backends' copies of t, compared as `width`-byte elements (the
  // emulator's expected, the GPU's got) laid out as `layers` storages of shape s one after the
  // other: element (i, j) is (i, j) of s's storage, padding included, with the rows (row major)
  // or columns (column major) of later layers after those of the first. A failure names each
  // element's layer and place, or the padding, and what `inputs` says of it; `value` reads the
  // bits (by default fp64 for 8-byte elements, fp32 for 4-byte ones).
  using Inputs = std::function<std::string(std::int64_t layer, std::int64_t i, std::int64_t j)>;
  using Reading = std::function<std::string(std::uint64_t)>;
  ::testing::AssertionResult same_on_both(const Twin& t, const Shape& s, std::size_t width,
                                          std::int64_t layers = 1, const Inputs& inputs = {},
                                          const Reading& value = {}) const {
    Bytes want = take(1, t), got = take(0, t);
    const bool by_columns = s.layout == Layout::column_major;
    const std::int64_t elements = static_cast<std::int64_t>((want.size() + width - 1) / width);
    const std::int64_t outer = (elements + s.ld - 1) / s.ld;
    // Zeros past the end of a buffer that is no whole number of elements (an empty one is a
    // byte): the same on both sides.
    want.resize(static_cast<std::size_t>(outer * s.ld) * width, 0);
    got.resize(want.size(), 0);
    const test::SameBitsOptions options{
        .order = by_columns ? test::Order::column_major : test::Order::row_major,
        .inputs = [&](std::int64_t i, std::int64_t j) -> std::string {
          const std::int64_t o = by_columns ? j : i;
          const std::int64_t layer = s.outer() > 0 ? o / s.outer() : layers;
          const std::int64_t r = by_columns ? i : i - layer * s.outer(),
                             c = by_columns ? j - layer * s.outer() : j;
          if (layer >= layers || r >= s.rows || c >= s.cols) return "padding";
          if (layers == 1) return inputs ? inputs(layer, r, c) : "an element, not padding";
          const std::string where = "layer " + std::to_string(layer) + ", (" + std::to_string(r) +
                                    ", " + std::to_string(c) + ")";
          return inputs ? where + ": " + inputs(layer, r, c) : where;
        },
        .value = value        ? value
                 : width == 8 ? Reading(test::fp64_value)
                 : width == 4 ? Reading(test::fp32_value)
                              : Reading()};
    const std::int64_t rows = by_columns ? s.ld : outer, cols = by_columns ? outer : s.ld;
    const auto compare = [&]<typename U>(U) {
      std::vector<U> w(want.size() / width), g(w.size());
      std::memcpy(w.data(), want.data(), want.size());
      std::memcpy(g.data(), got.data(), got.size());
      return test::same_bits(w, g, rows, cols, options);
    };
    switch (width) {
      case 1:
        return compare(std::uint8_t{});
      case 2:
        return compare(std::uint16_t{});
      case 4:
        return compare(std::uint32_t{});
      default:
        return compare(std::uint64_t{});
    }
  }
  // Element `index` of `bytes`, `width` bytes wide, in hex.
  static std::string element_hex(const Bytes& bytes, std::size_t index, std::size_t width) {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + index * width, width);
    return test::hex(v, 2 * static_cast<int>(width));
  }
  static RealMatrix real(const Twin& t, int b, const Shape& s, Real type, std::size_t offset = 0) {
    return {&t.on[b], offset, type, s.rows, s.cols, s.ld, s.layout};
  }

  std::unique_ptr<Backend> gpu_, host_;
  std::array<Backend*, 2> backends_{};
};

TEST_F(OzakiStepsOnGpu, CopyRealGivesTheHostsBits) {
  std::mt19937_64 rng(1);
  const std::array<std::pair<Real, Real>, 3> types = {
      {{Real::fp32, Real::fp64}, {Real::fp64, Real::fp64}, {Real::fp32, Real::fp32}}};
  for (const auto& [from, to] : types) {
    for (const Layout ls : {Layout::row_major, Layout::column_major}) {
      for (const Layout ld : {Layout::row_major, Layout::column_major}) {
        for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{37, 70}, {130, 1}}) {
          const Shape s = shape(rows, cols, ls, 3), d = shape(rows, cols, ld, 1);
          const Bytes src_bytes = real_bytes_of(s, from, rng, 0.2);
          const Twin src = put(src_bytes);
          const Twin dst = put(random_bytes(storage_elements(d) * real_bytes(to), rng));
          for (int b = 0; b < 2; ++b) {
            backends_[b]->copy_real(real(src, b, s, from), real(dst, b, d, to));
          }
          EXPECT_TRUE(same_on_both(dst, d, real_bytes(to), 1,
                                   [&](std::int64_t, std::int64_t i, std::int64_t j) {
                                     return "x " +
                                            element_hex(src_bytes, s.index(i, j), real_bytes(from));
                                   }))
              << rows << " x " << cols;
        }
      }
    }
  }
}

// Rows with the edge cases of Algorithm 1: all zero, only Inf/NaN, the largest magnitudes
// (sigma would overflow), subnormals only (sigma below the normal range), ties.
Bytes split_input(const Shape& s, bool by_rows, std::mt19937_64& rng) {
  Bytes b = real_bytes_of(s, Real::fp64, rng, 0.05);
  const std::int64_t vectors = by_rows ? s.rows : s.cols, length = by_rows ? s.cols : s.rows;
  auto set = [&](std::int64_t v, std::int64_t p, double x) {
    std::memcpy(b.data() + (by_rows ? s.index(v, p) : s.index(p, v)) * 8, &x, 8);
  };
  const double max = std::numeric_limits<double>::max();
  const double tiny = std::numeric_limits<double>::denorm_min();
  for (std::int64_t p = 0; p < length; ++p) {
    if (vectors > 0) set(0, p, p % 2 ? 0.0 : -0.0);
    if (vectors > 1) set(1, p, p % 3 == 0 ? INFINITY : p % 3 == 1 ? NAN : -0.0);
    if (vectors > 2) set(2, p, p % 2 ? max / static_cast<double>(p + 1) : -max);
    if (vectors > 3) set(3, p, tiny * static_cast<double>(rng() % 5000) * (p % 2 ? 1 : -1));
    if (vectors > 4) set(4, p, 0.25 * static_cast<double>(p % 8) - 1.0);
  }
  return b;
}

TEST_F(OzakiStepsOnGpu, SplitGivesTheHostsBitsOnEveryLevel) {
  std::mt19937_64 rng(2);
  struct SliceKind {
    std::optional<FloatFormat> format;  // nullopt: binary64 slices
    int bits;
  };
  const std::vector<SliceKind> kinds = {{formats::fp16, 11}, {formats::fp16, 5}, {formats::bf16, 8},
                                        {formats::tf32, 11}, {formats::e4m3, 4}, {std::nullopt, 20},
                                        {std::nullopt, 1},   {std::nullopt, 51}};
  struct Levels {
    int levels, stored;
  };
  // (1, 1) is split_level's own case; (48, 0) counts only.
  const std::vector<Levels> level_cases = {{1, 1}, {7, 7}, {48, 0}, {5, 3}};
  struct Case {
    std::int64_t rows, cols;
    SplitAxis axis;
    Layout layout;
    std::int64_t slice_pad = 1;  // 2: even vectors and leading dimensions (pairs of elements)
  };
  const std::vector<Case> cases = {{23, 300, SplitAxis::rows, Layout::row_major},
                                   {24, 300, SplitAxis::rows, Layout::column_major, 2},
                                   {300, 20, SplitAxis::columns, Layout::row_major, 2},
                                   {23, 300, SplitAxis::rows, Layout::column_major},
                                   {300, 19, SplitAxis::columns, Layout::column_major},
                                   {300, 19, SplitAxis::columns, Layout::row_major},
                                   // Longer than the shared memory of a block: in place.
                                   {6, 40000, SplitAxis::rows, Layout::row_major},
                                   {40000, 6, SplitAxis::columns, Layout::column_major}};
  for (const Case& c : cases) {
    const bool by_rows = c.axis == SplitAxis::rows;
    const Shape xs = shape(c.rows, c.cols, c.layout, 2);
    const std::int64_t vectors = by_rows ? c.rows : c.cols;
    for (const SliceKind& kind : kinds) {
      for (const Levels lv : level_cases) {
        if (c.rows * c.cols > 100000 && lv.levels > 7) continue;  // keep the host side quick
        const Bytes x_bytes = split_input(xs, by_rows, rng);
        const Twin x = put(x_bytes);
        // Slices in the transposed layout of x, padded.
        const Shape ss =
            shape(c.rows, c.cols, by_rows ? Layout::row_major : Layout::column_major, c.slice_pad);
        const std::size_t slice_bytes =
            storage_elements(ss) * (kind.format ? container_bytes(*kind.format) : 8);
        const Twin slices =
            put(random_bytes(std::max<std::size_t>(1, slice_bytes * lv.stored), rng));
        const Twin exponents = put(random_bytes(
            std::max<std::size_t>(1, static_cast<std::size_t>(vectors * 4 * lv.stored)), rng));
        std::array<int, 2> zero_after{};
        for (int b = 0; b < 2; ++b) {
          std::vector<SliceMatrix> s;
          std::vector<ExponentVector> e;
          for (int l = 0; l < lv.stored; ++l) {
            const std::size_t at = slice_bytes * static_cast<std::size_t>(l);
            if (kind.format) {
              s.emplace_back(BufferMatrix{&slices.on[b], at, *kind.format, ss.rows, ss.cols, ss.ld,
                                          ss.layout});
            } else {
              s.emplace_back(real(slices, b, ss, Real::fp64, at));
            }
            e.push_back({&exponents.on[b], static_cast<std::size_t>(vectors * 4 * l), vectors});
          }
          if (lv.levels == 1 && lv.stored == 1) {
            backends_[b]->split_level(real(x, b, xs, Real::fp64), c.axis, kind.bits, s[0], e[0]);
          } else {
            zero_after[static_cast<std::size_t>(b)] =
                backends_[b]->split(real(x, b, xs, Real::fp64), c.axis, kind.bits, lv.levels, s, e);
          }
        }
        const std::string what =
            std::to_string(c.rows) + " x " + std::to_string(c.cols) +
            (by_rows ? " rows" : " columns") + ", bits " + std::to_string(kind.bits) + ", levels " +
            std::to_string(lv.levels) + ", stored " + std::to_string(lv.stored);
        EXPECT_EQ(zero_after[0], zero_after[1]) << what;
        const auto x_of = [&](std::int64_t, std::int64_t i, std::int64_t j) {
          return "x " + element_hex(x_bytes, xs.index(i, j), 8);
        };
        EXPECT_TRUE(same_on_both(x, xs, 8, 1, x_of)) << "remainder, " << what;
        EXPECT_TRUE(same_on_both(slices, ss, kind.format ? container_bytes(*kind.format) : 8,
                                 lv.stored, x_of))
            << "slices, " << what;
        EXPECT_TRUE(same_on_both(
            exponents, shape(vectors, 1, Layout::column_major), 4, lv.stored, {},
            [](std::uint64_t e) { return std::to_string(static_cast<std::int32_t>(e)); }))
            << "exponents (one column a level), " << what;
      }
    }
  }
}

TEST_F(OzakiStepsOnGpu, AllZeroAgreesWithTheHost) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::vector<double>> cases = {
      {0.0, -0.0, INFINITY, nan, -INFINITY, 0.0},                         // true
      {0.0, -0.0, std::numeric_limits<double>::denorm_min(), 0.0, 0, 0},  // false
      {-0.0, -0.0, -0.0, -0.0, -0.0, -1e300}};                            // false
  for (const auto& values : cases) {
    Bytes b(values.size() * 8);
    std::memcpy(b.data(), values.data(), b.size());
    const Twin x = put(b);
    const Shape s = shape(2, 3, Layout::column_major);
    EXPECT_EQ(gpu_->all_zero(real(x, 0, s, Real::fp64)),
              host_->all_zero(real(x, 1, s, Real::fp64)));
  }
}

TEST_F(OzakiStepsOnGpu, Fp64GemmIsExactOnIntegerSlices) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<std::int64_t> integer(-(1 << 20), 1 << 20);
  struct Case {
    std::int64_t m, n, k;
  };
  for (const Case c : {Case{1, 1, 1}, Case{67, 70, 300}, Case{128, 33, 2000}}) {
    for (const Layout la : {Layout::row_major, Layout::column_major}) {
      for (const Layout lb : {Layout::row_major, Layout::column_major}) {
        for (const Layout lc : {Layout::row_major, Layout::column_major}) {
          const Shape as = shape(c.m, c.k, la, 1), bs = shape(c.k, c.n, lb, 2),
                      cs = shape(c.m, c.n, lc, 3);
          Bytes ab(storage_elements(as) * 8), bb(storage_elements(bs) * 8);
          for (std::size_t i = 0; i < ab.size() / 8; ++i) {
            const auto v = static_cast<double>(integer(rng));
            std::memcpy(ab.data() + i * 8, &v, 8);
          }
          for (std::size_t i = 0; i < bb.size() / 8; ++i) {
            const auto v = static_cast<double>(integer(rng));
            std::memcpy(bb.data() + i * 8, &v, 8);
          }
          const Twin a = put(ab), b = put(bb);
          const Twin out = put(random_bytes(storage_elements(cs) * 8, rng));
          for (int w = 0; w < 2; ++w) {
            backends_[w]->fp64_gemm(real(a, w, as, Real::fp64), real(b, w, bs, Real::fp64),
                                    real(out, w, cs, Real::fp64));
          }
          EXPECT_TRUE(same_on_both(out, cs, 8)) << c.m << " x " << c.n << " x " << c.k;
        }
      }
    }
  }
}

// Exponent vectors: mostly small, some far apart, so that terms overflow, underflow and round
// to subnormals.
Bytes exponent_bytes(std::size_t count, std::mt19937_64& rng) {
  std::vector<std::int32_t> e(count);
  for (auto& x : e) {
    x = rng() % 4 == 0 ? static_cast<std::int32_t>(rng() % 2201) - 1100
                       : static_cast<std::int32_t>(rng() % 41) - 20;
  }
  Bytes b(count * 4);
  std::memcpy(b.data(), e.data(), b.size());
  return b;
}

TEST_F(OzakiStepsOnGpu, AccumulateScaledGivesTheHostsBits) {
  std::mt19937_64 rng(4);
  // Odd extents; even ones with even leading dimensions (the kernel's pairs of elements); and
  // extents, leading dimensions and exponent vectors fit for packs of four.
  struct Case {
    std::int64_t m, n, product_pad, sum_pad, exponent_align;
  };
  for (const auto [m, n, product_pad, sum_pad, exponent_align] :
       {Case{75, 41, 1, 2, 4}, Case{76, 42, 2, 4, 4}, Case{76, 44, 4, 4, 16}}) {
    for (const Real type : {Real::fp32, Real::fp64}) {
      for (const std::int64_t count : {1, 5, 70}) {  // 70: more than one launch
        for (const bool overwrite : {false, true}) {
          for (const Layout lp : {Layout::row_major, Layout::column_major}) {
            for (const Layout ld : {Layout::row_major, Layout::column_major}) {
              const Shape ps = shape(m, n, lp, product_pad), ds = shape(m, n, ld, sum_pad);
              const std::size_t stride = storage_elements(ps) * real_bytes(type) + 16;
              Bytes pb;
              for (std::int64_t l = 0; l < count; ++l) {
                Bytes layer = real_bytes_of(ps, type, rng, 0.02);
                layer.resize(stride, 0);
                pb.insert(pb.end(), layer.begin(), layer.end());
              }
              const Twin products = put(pb);
              // Each layer's row exponents, then its column exponents; layers exponent_align
              // bytes apart.
              const std::int64_t layer_bytes =
                  ((m + n) * 4 + exponent_align - 1) / exponent_align * exponent_align;
              const Twin exps =
                  put(exponent_bytes(static_cast<std::size_t>((count + 1) * layer_bytes / 4), rng));
              const Twin dst = put(real_bytes_of(ds, Real::fp64, rng, 0.02));
              for (int b = 0; b < 2; ++b) {
                std::vector<OuterExponents> scales;
                for (std::int64_t l = 0; l <= count; ++l) {
                  const auto at = static_cast<std::size_t>(l * layer_bytes);
                  scales.push_back({{&exps.on[b], at, m}, {&exps.on[b], at + m * 4, n}});
                }
                const OuterExponents base = scales.back();
                scales.pop_back();
                backends_[b]->accumulate_scaled({real(products, b, ps, type), count, stride},
                                                scales, base, real(dst, b, ds, Real::fp64),
                                                overwrite);
              }
              EXPECT_TRUE(same_on_both(dst, ds, 8))
                  << m << " x " << n << ", " << (type == Real::fp32 ? "fp32" : "fp64")
                  << " products, count " << count << (overwrite ? ", overwrite" : "");
            }
          }
        }
      }
    }
  }
}

TEST_F(OzakiStepsOnGpu, ExactSumGivesTheHostsBits) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  const std::int64_t m = 60, n = 35;
  for (const std::int64_t count : {1, 9, 70}) {
    for (const bool in_place : {false, true}) {
      const Shape s = shape(m, n, Layout::column_major, 1);
      const std::size_t stride = storage_elements(s) * 8;
      Bytes stack;
      for (std::int64_t l = 0; l < count; ++l) {
        Bytes layer = real_bytes_of(s, Real::fp64, rng, 0.01);
        // Column 0: cancellation to a tie; column 1: overflow after rounding; column 2:
        // subnormal sums.
        for (std::int64_t i = 0; i < m; ++i) {
          const double cancel = l == 0 ? 1.0 : l == 1 ? 0x1p-53 : (l % 2 == 0 ? 1e300 : -1e300);
          const double big = l < 2 ? std::numeric_limits<double>::max() : 0.0;
          const double small = std::ldexp(normal(rng), -1070);
          std::memcpy(layer.data() + s.index(i, 0) * 8, &cancel, 8);
          std::memcpy(layer.data() + s.index(i, 1) * 8, &big, 8);
          std::memcpy(layer.data() + s.index(i, 2) * 8, &small, 8);
        }
        stack.insert(stack.end(), layer.begin(), layer.end());
      }
      const Twin st = put(stack);
      const Twin exps = put(exponent_bytes(static_cast<std::size_t>(m + n), rng));
      const Twin out = put(random_bytes(stride, rng));
      for (int b = 0; b < 2; ++b) {
        const RealMatrix first = real(st, b, s, Real::fp64);
        const OuterExponents scale{{&exps.on[b], 0, m}, {&exps.on[b], m * 4, n}};
        backends_[b]->exact_sum({first, count, stride}, scale,
                                in_place ? first : real(out, b, s, Real::fp64));
      }
      EXPECT_TRUE(same_on_both(in_place ? st : out, s, 8, in_place ? count : 1))
          << "count " << count << (in_place ? ", in place" : "");
    }
  }
}

// Ozaki-II's products kept as int32 sums (crt_product_residues into s32: the GEMM writes them in
// place where the leading dimension is a multiple of 4, through the scratch where it is not,
// padding untouched) and the reconstruction of a stack of int32 layers (packed four-element
// words streamed through the ring where the layers allow them, a group cut by the last row among
// them, up to 8 limbs; one element a thread from 7 limbs where the layers allow no packed word):
// the host's bits, and the same values as from the int8 residues of the same layers. More than
// 512 columns give each thread several groups, so that the ring's loads run into the next groups
// (two and more ahead with 3 moduli).
TEST_F(OzakiStepsOnGpu, CrtProductSumsAndTheirReconstructionGiveTheHostsBits) {
  namespace el = crt_elements;
  std::mt19937_64 rng(12);
  struct Case {
    std::int64_t m, n, k;
    int moduli;
  };
  for (const Case c : {Case{64, 36, 100, 15}, Case{67, 9, 130, 3}, Case{8, 5, 40, 26},
                       Case{10, 1030, 16, 3}, Case{12, 600, 16, 16}, Case{21, 40, 24, 34}}) {
    const Twin ab = put(random_bytes(static_cast<std::size_t>(c.m * c.k + c.k * c.n), rng));
    for (const std::int64_t pad : {0, 1}) {
      const std::int64_t ld = (c.m + 3) / 4 * 4 + pad;
      const Shape s{c.m, c.n, ld, Layout::column_major};
      const std::size_t stride = storage_elements(s) * 4;
      const Twin sums = put(random_bytes(stride * static_cast<std::size_t>(c.moduli), rng));
      for (int b = 0; b < 2; ++b) {
        const IntegerMatrix a{&ab.on[b], 0, Integer::s8, c.m, c.k, c.k, Layout::row_major};
        const IntegerMatrix bm{
            &ab.on[b],           static_cast<std::size_t>(c.m * c.k), Integer::s8, c.k, c.n, c.k,
            Layout::column_major};
        for (int l = 0; l < c.moduli; ++l) {
          backends_[b]->crt_product_residues(a, bm, l,
                                             {&sums.on[b], static_cast<std::size_t>(l) * stride,
                                              Integer::s32, c.m, c.n, ld, Layout::column_major});
        }
      }
      EXPECT_TRUE(same_on_both(
          sums, s, 4, c.moduli, {},
          [](std::uint64_t v) { return std::to_string(static_cast<std::int32_t>(v)); }))
          << c.m << " x " << c.n << " x " << c.k << " ld " << ld;

      // Any int32 layers (C' anywhere in [-M/2, M/2)) and their int8 residues, with shifts that
      // overflow and round into the subnormals.
      Bytes wide(stride * static_cast<std::size_t>(c.moduli));
      for (std::size_t at = 0; at + 4 <= wide.size(); at += 4) {
        const auto v = static_cast<std::uint32_t>(rng());
        std::memcpy(wide.data() + at, &v, 4);
      }
      const Shape s8{c.m, c.n, c.m, Layout::column_major};
      const std::size_t stride8 = storage_elements(s8);
      Bytes narrow(stride8 * static_cast<std::size_t>(c.moduli));
      for (int l = 0; l < c.moduli; ++l) {
        const el::Modulus modulus = el::modulus(el::kModuli[l]);
        for (std::int64_t j = 0; j < c.n; ++j) {
          for (std::int64_t i = 0; i < c.m; ++i) {
            std::int32_t v = 0;
            std::memcpy(&v, wide.data() + static_cast<std::size_t>(l) * stride + s.index(i, j) * 4,
                        4);
            narrow[static_cast<std::size_t>(l) * stride8 + s8.index(i, j)] =
                static_cast<unsigned char>(el::sum_residue(v, modulus));
          }
        }
      }
      const Twin layers32 = put(wide), layers8 = put(narrow);
      const Twin exps = put(exponent_bytes(static_cast<std::size_t>(c.m + c.n), rng));
      const Shape out_shape = shape(c.m, c.n, Layout::column_major, 2);
      const Bytes before = random_bytes(storage_elements(out_shape) * 8, rng);
      const Twin out32 = put(before), out8 = put(before);
      for (int b = 0; b < 2; ++b) {
        const OuterExponents scale{{&exps.on[b], 0, c.m},
                                   {&exps.on[b], static_cast<std::size_t>(c.m) * 4, c.n}};
        backends_[b]->crt_reconstruct(
            {{&layers32.on[b], 0, Integer::s32, c.m, c.n, ld, Layout::column_major},
             c.moduli,
             stride},
            scale, real(out32, b, out_shape, Real::fp64));
        backends_[b]->crt_reconstruct(
            {{&layers8.on[b], 0, Integer::s8, c.m, c.n, c.m, Layout::column_major},
             c.moduli,
             stride8},
            scale, real(out8, b, out_shape, Real::fp64));
      }
      EXPECT_TRUE(same_on_both(out32, out_shape, 8)) << c.moduli << " moduli, ld " << ld;
      EXPECT_TRUE(same_on_both(out8, out_shape, 8)) << c.moduli << " moduli, ld " << c.m;
      EXPECT_EQ(take(1, out32), take(1, out8)) << c.moduli << " moduli";
      int finite = 0;
      const Bytes values = take(1, out32);
      for (std::int64_t j = 0; j < c.n; ++j) {
        for (std::int64_t i = 0; i < c.m; ++i) {
          double x = 0;
          std::memcpy(&x, values.data() + out_shape.index(i, j) * 8, 8);
          finite += std::isfinite(x) && x != 0.0 ? 1 : 0;
        }
      }
      EXPECT_GT(finite, 0) << "every value overflowed or vanished";
    }
  }
}

// crt_residues of fp64 and fp32 matrices holding every kind of element, with shifts far apart:
// integers that round to zero, that fit in 64 bits and that carry a power of two (the chunks'
// weights from the kernels' table below kTablePowers, 2^power mod m computed beyond), into up to
// 48 moduli's residues in every kernel's layouts: the same layout as x (four elements a thread,
// packed where every target is aligned; one element a thread where not) and the transposed one
// (the tiles); padding stays untouched.
TEST_F(OzakiStepsOnGpu, CrtResiduesGiveTheHostsBits) {
  namespace el = crt_elements;
  std::mt19937_64 rng(21);
  struct Case {
    std::int64_t rows, cols;
    SplitAxis axis;
    Layout in, out;
    std::int64_t in_pad, out_pad;
    Real type;
    int moduli;
  };
  const auto rows = SplitAxis::rows, columns = SplitAxis::columns;
  const auto rm = Layout::row_major, cm = Layout::column_major;
  const std::vector<Case> cases = {
      {37, 132, rows, rm, rm, 0, 0, Real::fp64, 48},     // four a thread, vector loads
      {37, 132, rows, rm, rm, 1, 0, Real::fp64, 27},     // four a thread, one load each
      {37, 130, rows, rm, rm, 1, 1, Real::fp64, 27},     // one a thread
      {130, 37, rows, cm, rm, 1, 3, Real::fp64, 27},     // tiles, packed stores
      {130, 37, columns, rm, cm, 0, 0, Real::fp64, 5},   // tiles, byte stores
      {132, 37, columns, cm, cm, 0, 0, Real::fp64, 16},  // B's layout, vector loads
      {64, 40, columns, cm, cm, 0, 0, Real::fp32, 20}};
  int table_powers = 0, computed_powers = 0, zeros = 0;
  for (const Case& c : cases) {
    const Shape xs = shape(c.rows, c.cols, c.in, c.in_pad);
    const Bytes x_bytes = real_bytes_of(xs, c.type, rng, 0.05);
    const bool by_rows = c.axis == SplitAxis::rows;
    const std::int64_t vectors = by_rows ? c.rows : c.cols;
    // A third of the shifts small, a third making powers of the table, a third anything.
    std::vector<std::int32_t> shifts(static_cast<std::size_t>(vectors));
    for (std::int32_t& shift : shifts) {
      const auto draw = [&](int count) { return static_cast<std::int32_t>(rng() % count); };
      const int kind = draw(3);
      shift = kind == 0 ? draw(41) - 20 : kind == 1 ? draw(381) + 40 : draw(2201) - 1100;
    }
    Bytes shift_bytes(shifts.size() * 4);
    std::memcpy(shift_bytes.data(), shifts.data(), shift_bytes.size());
    for (std::int64_t i = 0; i < c.rows; ++i) {
      for (std::int64_t j = 0; j < c.cols; ++j) {
        double x = 0;
        if (c.type == Real::fp64) {
          std::memcpy(&x, x_bytes.data() + xs.index(i, j) * 8, 8);
        } else {
          float f = 0;
          std::memcpy(&f, x_bytes.data() + xs.index(i, j) * 4, 4);
          x = f;
        }
        const el::ScaledInteger a =
            el::scaled_integer(x, shifts[static_cast<std::size_t>(by_rows ? i : j)]);
        table_powers += a.power > 0 && a.power < el::kTablePowers ? 1 : 0;
        computed_powers += a.power >= el::kTablePowers ? 1 : 0;
        zeros += a.magnitude == 0 ? 1 : 0;
      }
    }
    const Twin x = put(x_bytes), sh = put(shift_bytes);
    const Shape os = shape(c.rows, c.cols, c.out, c.out_pad);
    const std::size_t stride = storage_elements(os);
    const Twin out = put(random_bytes(stride * static_cast<std::size_t>(c.moduli), rng));
    for (int b = 0; b < 2; ++b) {
      std::vector<IntegerMatrix> targets;
      for (int l = 0; l < c.moduli; ++l) {
        targets.push_back({&out.on[b], static_cast<std::size_t>(l) * stride, Integer::s8, c.rows,
                           c.cols, os.ld, os.layout});
      }
      backends_[b]->crt_residues(real(x, b, xs, c.type), c.axis, {&sh.on[b], 0, vectors}, targets);
    }
    EXPECT_TRUE(same_on_both(
        out, os, 1, c.moduli,
        [&](std::int64_t, std::int64_t i, std::int64_t j) {
          return "x " + element_hex(x_bytes, xs.index(i, j), real_bytes(c.type)) + ", shift " +
                 std::to_string(shifts[static_cast<std::size_t>(by_rows ? i : j)]);
        },
        [](std::uint64_t v) { return std::to_string(static_cast<std::int8_t>(v)); }))
        << c.rows << " x " << c.cols << (by_rows ? " rows" : " columns") << ", x ld " << xs.ld
        << ", " << c.moduli << " moduli, residues ld " << os.ld;
  }
  // The cases the test claims: powers looked up and computed, and integers rounded to zero.
  EXPECT_GT(table_powers, 1000);
  EXPECT_GT(computed_powers, 1000);
  EXPECT_GT(zeros, 1000);
}

// crt_bound_need (each level's int8 GEMM and need_kernel's skips) returns the emulator's largest
// need, with one and two levels, on rows that are no multiple of four and more columns than the
// kernel's 256 block rows:
//   - alike: the same exponents everywhere, so that the need's upper bound exceeds the largest
//     need almost everywhere and the kernel's floating-point test of the criterion decides;
//   - one_above: one element's exponents raise its need above every other element's (a lone
//     largest that no skip may pass over, in no thread's first column);
//   - product_one, product_zero: one product of 1 (a need far above) or 0 (uncertified);
//   - wide: exponents up to +-700, terms below binary64's normal range (clipped);
//   - some_empty, all_empty: empty rows and columns, which need nothing.
TEST_F(OzakiStepsOnGpu, CrtBoundNeedGivesTheHostsNeed) {
  namespace el = crt_elements;
  const std::int64_t m = 1030, n = 300, k = 64;
  enum class Kind { alike, one_above, product_one, product_zero, wide, some_empty, all_empty };
  std::mt19937_64 rng(31);
  const auto quantum = [&] { return static_cast<std::int8_t>(96 + rng() % 32); };
  const auto wide_exponent = [&] { return static_cast<int>(rng() % 1401) - 700; };
  int alike_need = 0;
  std::int64_t undecided_by_upper_bound = 0;
  for (const Kind kind : {Kind::alike, Kind::one_above, Kind::product_one, Kind::product_zero,
                          Kind::wide, Kind::some_empty, Kind::all_empty}) {
    for (const int count : {1, 2}) {
      // Per level: A's quanta (m x k, row major), B's (k x n, column major), then the rows' and
      // the columns' norm2 and norm1.
      const std::size_t a_at = 0, b_at = static_cast<std::size_t>(m * k),
                        rows_at = b_at + static_cast<std::size_t>(k * n),
                        cols_at = rows_at + static_cast<std::size_t>(8 * m),
                        level_bytes = cols_at + static_cast<std::size_t>(8 * n);
      Bytes bytes(level_bytes * static_cast<std::size_t>(count));
      // j* past the first 256 columns: the second column of the threads that take it.
      const std::int64_t i_star = 1 + static_cast<std::int64_t>(rng() % (m - 2)),
                         j_star = 256 + static_cast<std::int64_t>(rng() % (n - 257));
      std::vector<std::vector<std::int8_t>> qa(2), qb(2);
      std::vector<std::vector<std::int32_t>> e_rows(2), e_cols(2);
      for (int l = 0; l < count; ++l) {
        auto& a = qa[l];
        auto& b = qb[l];
        a.resize(static_cast<std::size_t>(m * k));
        b.resize(static_cast<std::size_t>(k * n));
        for (auto& q : a) q = quantum();
        for (auto& q : b) q = quantum();
        if (kind == Kind::product_one || kind == Kind::product_zero) {
          // Row i* meets column j* only at term 0: P = 1 or 0 there, every other product large.
          for (std::int64_t p = 0; p < k; ++p) {
            a[static_cast<std::size_t>(i_star * k + p)] = p < k / 2 ? quantum() : std::int8_t{0};
            b[static_cast<std::size_t>(j_star * k + p)] = p >= k / 2 ? quantum() : std::int8_t{0};
          }
          a[static_cast<std::size_t>(i_star * k)] = 1;
          b[static_cast<std::size_t>(j_star * k)] = kind == Kind::product_one ? 1 : 0;
        }
        // rows: norm2 then norm1 (m each); columns likewise (n each).
        e_rows[l].assign(static_cast<std::size_t>(2 * m), 0);
        e_cols[l].assign(static_cast<std::size_t>(2 * n), 0);
        for (std::int64_t i = 0; i < m; ++i) {
          const bool empty = kind == Kind::all_empty || (kind == Kind::some_empty && i % 7 == 3);
          int norm2 = 10, norm1 = 16;
          if (kind == Kind::wide) norm2 = wide_exponent(), norm1 = wide_exponent();
          if (kind == Kind::one_above && i == i_star) norm2 += 3;
          e_rows[l][static_cast<std::size_t>(i)] = empty ? el::kEmptyVector : norm2;
          e_rows[l][static_cast<std::size_t>(m + i)] = norm1;
          if (empty) std::fill_n(a.begin() + i * k, k, std::int8_t{0});
        }
        for (std::int64_t j = 0; j < n; ++j) {
          const bool empty = kind == Kind::some_empty && j % 5 == 1;
          int norm2 = 10 + l, norm1 = 16;
          if (kind == Kind::wide) norm2 = wide_exponent(), norm1 = wide_exponent();
          if (kind == Kind::one_above && j == j_star) norm1 += 3;
          e_cols[l][static_cast<std::size_t>(j)] = empty ? el::kEmptyVector : norm2;
          e_cols[l][static_cast<std::size_t>(n + j)] = norm1;
          if (empty) std::fill_n(b.begin() + j * k, k, std::int8_t{0});
        }
        unsigned char* at = bytes.data() + static_cast<std::size_t>(l) * level_bytes;
        std::memcpy(at + a_at, a.data(), a.size());
        std::memcpy(at + b_at, b.data(), b.size());
        std::memcpy(at + rows_at, e_rows[l].data(), e_rows[l].size() * 4);
        std::memcpy(at + cols_at, e_cols[l].data(), e_cols[l].size() * 4);
      }
      // The need of every element (the least over the levels) and its upper bound, on the host.
      const int log2_k = 6;
      std::vector<int> upper(static_cast<std::size_t>(m * n), el::kBoundUncertified);
      std::vector<int> least(upper.size(), el::kBoundUncertified);
      for (int l = 0; l < count; ++l) {
        for (std::int64_t i = 0; i < m; ++i) {
          for (std::int64_t j = 0; j < n; ++j) {
            std::int32_t p = 0;
            for (std::int64_t t = 0; t < k; ++t) {
              p += qa[l][static_cast<std::size_t>(i * k + t)] *
                   qb[l][static_cast<std::size_t>(j * k + t)];
            }
            const int n2i = e_rows[l][static_cast<std::size_t>(i)],
                      n1i = e_rows[l][static_cast<std::size_t>(m + i)],
                      n2j = e_cols[l][static_cast<std::size_t>(j)],
                      n1j = e_cols[l][static_cast<std::size_t>(n + j)];
            const auto e = static_cast<std::size_t>(i * n + j);
            upper[e] = std::min(upper[e], el::bound_need_at_most(p, n2i, n1i, n2j, n1j, log2_k));
            least[e] = std::min(least[e], el::bound_need(p, n2i, n1i, n2j, n1j, log2_k));
          }
        }
      }
      const int expected = *std::max_element(least.begin(), least.end());
      const auto attained = std::count(least.begin(), least.end(), expected);
      const Twin t = put(bytes);
      int got[2] = {};
      for (int b = 0; b < 2; ++b) {
        std::vector<BoundLevel> levels;
        for (int l = 0; l < count; ++l) {
          const std::size_t base = static_cast<std::size_t>(l) * level_bytes;
          const Buffer* buffer = &t.on[b];
          const auto vector = [&](std::size_t at, std::int64_t size) {
            return ExponentVector{buffer, base + at, size};
          };
          levels.push_back(
              {{buffer, base + a_at, Integer::s8, m, k, k, Layout::row_major},
               {buffer, base + b_at, Integer::s8, k, n, k, Layout::column_major},
               {vector(rows_at, m), vector(rows_at + static_cast<std::size_t>(4 * m), m)},
               {vector(cols_at, n), vector(cols_at + static_cast<std::size_t>(4 * n), n)}});
        }
        got[b] = backends_[b]->crt_bound_need(levels, k);
      }
      const std::string what = "kind " + std::to_string(static_cast<int>(kind)) + ", " +
                               std::to_string(count) + " levels";
      EXPECT_EQ(got[1], expected) << what;  // the emulator's is the element-wise one
      EXPECT_EQ(got[0], got[1]) << what;
      switch (kind) {
        case Kind::alike:
          if (count == 1) alike_need = expected;
          for (const int u : upper) undecided_by_upper_bound += u > expected ? 1 : 0;
          break;
        case Kind::one_above:
        case Kind::product_one:
          EXPECT_GT(expected, alike_need) << what;
          EXPECT_EQ(attained, 1) << what;
          EXPECT_EQ(least[static_cast<std::size_t>(i_star * n + j_star)], expected) << what;
          break;
        case Kind::product_zero:
          EXPECT_EQ(expected, el::kBoundUncertified) << what;
          break;
        case Kind::wide:
        case Kind::some_empty:
          EXPECT_GT(expected, el::kNoNeed) << what;
          EXPECT_LT(expected, el::kBoundUncertified) << what;
          break;
        case Kind::all_empty:
          EXPECT_EQ(expected, el::kNoNeed) << what;
          break;
      }
    }
  }
  // The alike blocks: the upper bound leaves almost every element to the criterion itself.
  EXPECT_GT(undecided_by_upper_bound, m * n);
}

TEST_F(OzakiStepsOnGpu, EpilogueGivesTheHostsBits) {
  std::mt19937_64 rng(6);
  const std::int64_t m = 50, n = 30, k = 40;
  const std::array<std::pair<double, double>, 4> scalars = {
      {{1.0, 0.0}, {-2.5, 0.75}, {0.5, 1.0}, {3.0, -1e-300}}};
  for (const Real io : {Real::fp64, Real::fp32}) {
    for (const bool with_value : {true, false}) {
      for (const bool with_scale : {true, false}) {
        for (const bool with_ab : {true, false}) {
          for (const bool aliased : {true, false}) {
            for (const auto& [alpha, beta] : scalars) {
              if (!with_value && (with_scale || with_ab)) continue;
              const Shape vs = shape(m, n, Layout::column_major),
                          cs = shape(m, n, Layout::row_major, 2),
                          os = aliased ? cs : shape(m, n, Layout::column_major, 1);
              const Shape as = shape(m, k, Layout::column_major),
                          bs = shape(k, n, Layout::row_major);
              const Twin v = put(real_bytes_of(vs, Real::fp64, rng, 0.02));
              const Twin c = put(real_bytes_of(cs, io, rng, 0.02));
              const Twin out =
                  aliased ? Twin{} : put(random_bytes(storage_elements(os) * real_bytes(io), rng));
              // A and B with NaN / Inf / zeros in a few rows and columns.
              const Twin a = put(real_bytes_of(as, io, rng, 0.01));
              const Twin bm = put(real_bytes_of(bs, io, rng, 0.01));
              const Twin exps = put(exponent_bytes(static_cast<std::size_t>(m + n), rng));
              for (int b = 0; b < 2; ++b) {
                std::optional<RealMatrix> value, am, bmm;
                std::optional<OuterExponents> scale;
                if (with_value) value = real(v, b, vs, Real::fp64);
                if (with_scale)
                  scale = OuterExponents{{&exps.on[b], 0, m}, {&exps.on[b], m * 4, n}};
                if (with_ab) {
                  am = real(a, b, as, io);
                  bmm = real(bm, b, bs, io);
                }
                const RealMatrix cm = real(c, b, cs, io);
                backends_[b]->epilogue(value, scale, alpha, beta, cm, am, bmm,
                                       aliased ? cm : real(out, b, os, io));
              }
              EXPECT_TRUE(same_on_both(aliased ? c : out, os, real_bytes(io)))
                  << "alpha " << alpha << ", beta " << beta << (with_value ? ", value" : "")
                  << (with_scale ? ", scale" : "") << (with_ab ? ", A and B" : "")
                  << (io == Real::fp32 ? ", fp32" : ", fp64");
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tcemu

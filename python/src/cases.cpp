#include "cases.hpp"

#include <algorithm>

namespace tcemu::python {
namespace {

// A new [rows, cols] (cols 0: [rows]) array of `format`'s containers as unsigned integers, with
// element (i, k) = get(i, k).
template <class Get>
nb::object bits_array(std::size_t rows, std::size_t cols, const FloatFormat& format, Get get) {
  const NewArray out =
      new_array(cols == 0 ? std::vector<std::size_t>{rows} : std::vector<std::size_t>{rows, cols},
                {static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt),
                 static_cast<std::uint8_t>(8 * container_bytes(format)), 1});
  const auto width = static_cast<std::int64_t>(std::max<std::size_t>(cols, 1));
  const MatrixView v{{static_cast<unsigned char*>(out.data), format,
                      static_cast<std::int64_t>(rows), width, width, Layout::row_major}};
  for (std::int64_t i = 0; i < v.rows; ++i) {
    for (std::int64_t k = 0; k < width; ++k) {
      v.set(i, k, get(static_cast<std::size_t>(i), static_cast<std::size_t>(k)));
    }
  }
  return out.object;
}

}  // namespace

std::vector<MmaCase> cases_from(nb::handle a, nb::handle b, nb::handle c, nb::handle d,
                                const FloatFormat& input, const FloatFormat& input_b,
                                const FloatFormat& accumulator) {
  const BitMatrix ma = bit_matrix(operand(a, "a"), input);
  const BitMatrix mb = bit_matrix(operand(b, "b"), input_b);
  const std::vector<std::uint32_t> vc = bit_vector(operand(c, "c"), accumulator);
  std::vector<std::uint32_t> vd;
  if (!d.is_none()) vd = bit_vector(operand(d, "d"), accumulator);
  const std::int64_t n = ma.view.rows, k = ma.view.cols;
  if (mb.view.rows != n || mb.view.cols != k || static_cast<std::int64_t>(vc.size()) != n ||
      (!d.is_none() && static_cast<std::int64_t>(vd.size()) != n)) {
    throw nb::value_error(("a and b must be [cases, K] and c, d [cases]: a is [" +
                           std::to_string(n) + ", " + std::to_string(k) + "], b [" +
                           std::to_string(mb.view.rows) + ", " + std::to_string(mb.view.cols) +
                           "], c [" + std::to_string(vc.size()) + "]" +
                           (d.is_none() ? "" : ", d [" + std::to_string(vd.size()) + "]"))
                              .c_str());
  }
  std::vector<MmaCase> cases(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    MmaCase& x = cases[static_cast<std::size_t>(i)];
    for (std::int64_t j = 0; j < k; ++j) {
      x.a.push_back(ma.view.get(i, j));
      x.b.push_back(mb.view.get(i, j));
    }
    x.c = vc[static_cast<std::size_t>(i)];
    if (!vd.empty()) x.d = vd[static_cast<std::size_t>(i)];
  }
  return cases;
}

nb::dict cases_to(const std::vector<MmaCase>& cases, const std::vector<std::uint32_t>& d,
                  const FloatFormat& input, const FloatFormat& accumulator) {
  const std::size_t n = cases.size(), k = n == 0 ? 0 : cases.front().a.size();
  nb::dict out;
  out["a"] = bits_array(n, k, input, [&](std::size_t i, std::size_t j) { return cases[i].a[j]; });
  out["b"] = bits_array(n, k, input, [&](std::size_t i, std::size_t j) { return cases[i].b[j]; });
  out["c"] = bits_array(n, 0, accumulator, [&](std::size_t i, std::size_t) { return cases[i].c; });
  out["d"] = bits_array(n, 0, accumulator, [&](std::size_t i, std::size_t) { return d[i]; });
  return out;
}

nb::dict cases_to(const std::vector<MmaCase>& cases, const std::vector<std::uint32_t>& d,
                  const Datapath& datapath) {
  nb::dict out = cases_to(cases, d, datapath.input, datapath.accumulator);
  const std::size_t n = cases.size(), k = n == 0 ? 0 : cases.front().a.size();
  out["b"] = bits_array(n, k, datapath.b_format(),
                        [&](std::size_t i, std::size_t j) { return cases[i].b[j]; });
  if (datapath.block_scaled()) {
    const std::size_t s = n == 0 ? 0 : cases.front().scale_a.size();
    out["scale_a"] = bits_array(n, s, datapath.block_scaling.scale_a,
                                [&](std::size_t i, std::size_t j) { return cases[i].scale_a[j]; });
    out["scale_b"] = bits_array(n, s, datapath.block_scaling.scale_b,
                                [&](std::size_t i, std::size_t j) { return cases[i].scale_b[j]; });
  }
  return out;
}

nb::dict sparse_cases_to(const std::vector<SparseMmaCase>& cases, const FloatFormat& input,
                         const FloatFormat& accumulator) {
  const std::size_t n = cases.size(), k = n == 0 ? 0 : cases.front().b.size();
  nb::dict out;
  out["a"] =
      bits_array(n, k / 2, input, [&](std::size_t i, std::size_t j) { return cases[i].a[j]; });
  const NewArray index =
      new_array({n, k / 2}, {static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt), 8, 1});
  auto* positions = static_cast<std::uint8_t*>(index.data);
  for (std::size_t i = 0; i < n; ++i) {
    std::copy(cases[i].index.begin(), cases[i].index.end(), positions + i * (k / 2));
  }
  out["index"] = index.object;
  out["b"] = bits_array(n, k, input, [&](std::size_t i, std::size_t j) { return cases[i].b[j]; });
  out["c"] = bits_array(n, 0, accumulator, [&](std::size_t i, std::size_t) { return cases[i].c; });
  out["d"] =
      bits_array(n, 0, accumulator, [&](std::size_t i, std::size_t) { return cases[i].d.value(); });
  return out;
}

}  // namespace tcemu::python

// A Workspace kept between calls: the same bits as a call that allocates its own, nothing
// allocated again for calls of the same size or smaller, new buffers for another backend.
#include <gtest/gtest.h>

#include <cstring>

#include <tcemu/host/host_backends.hpp>
#include <tcemu/markidis/presets.hpp>

#include "matrices.hpp"

namespace tcemu::markidis {
namespace {

using testing::Matrix;
using testing::random_matrix;

// D = A B by `scheme` on buffers of `backend` (A m x k column major, B k x n column major, D m x
// n).
std::vector<std::uint32_t> run_on(Backend& backend, const Scheme& scheme, const Matrix& a,
                                  const Matrix& b, Workspace* workspace) {
  const auto put = [&](const Matrix& x) {
    Buffer buffer = backend.allocate(x.v.size() * sizeof(float));
    backend.copy_in(x.v.data(), buffer, x.v.size() * sizeof(float));
    return buffer;
  };
  const auto view = [](const Buffer& buffer, std::int64_t rows, std::int64_t cols) {
    return BufferMatrix{&buffer, 0, formats::fp32, rows, cols, rows, Layout::column_major};
  };
  const Buffer ab = put(a), bb = put(b);
  const Buffer db = backend.allocate(static_cast<std::size_t>(a.rows * b.cols) * sizeof(float));
  gemm(backend, scheme, scheme_datapath(scheme, "sm90"), view(ab, a.rows, a.cols),
       view(bb, b.rows, b.cols), std::nullopt, view(db, a.rows, b.cols), {.workspace = workspace});
  std::vector<std::uint32_t> out(static_cast<std::size_t>(a.rows * b.cols));
  backend.copy_out(db, out.data(), out.size() * sizeof(float));
  return out;
}

TEST(Workspace, RepeatedCallsGiveTheSameBitsAndAllocateOnce) {
  const auto backend = host::make_emulator_backend(2);
  for (const char* name : {"halfhalf", "bf16x3"}) {
    const Scheme scheme = scheme_by_name(name);
    const Matrix a = random_matrix(40, 70, 1), b = random_matrix(70, 30, 2);
    const Matrix small_a = random_matrix(9, 20, 3), small_b = random_matrix(20, 11, 4);
    const auto fresh = run_on(*backend, scheme, a, b, nullptr);
    const auto small_fresh = run_on(*backend, scheme, small_a, small_b, nullptr);

    // The bits of D (m x n, column major) against those of a call without a workspace.
    const auto same = [&](const std::vector<std::uint32_t>& want,
                          const std::vector<std::uint32_t>& got, const Matrix& x, const Matrix& y) {
      return test::same_bits(want, got, x.rows, y.cols,
                             {.inputs = test::gemm_inputs(x.rows, x.cols, x.v.data(), y.v.data()),
                              .value = test::fp32_value});
    };
    Workspace workspace;
    EXPECT_TRUE(same(fresh, run_on(*backend, scheme, a, b, &workspace), a, b)) << name;
    const std::size_t grown = workspace.bytes();
    EXPECT_GT(grown, 0u);
    const Buffer* first = &workspace.buffer(*backend, 0, 1);
    const void* address = first->address();
    EXPECT_TRUE(same(fresh, run_on(*backend, scheme, a, b, &workspace), a, b)) << name;
    EXPECT_TRUE(
        same(small_fresh, run_on(*backend, scheme, small_a, small_b, &workspace), small_a, small_b))
        << name;
    EXPECT_EQ(workspace.bytes(), grown) << name << ": a smaller call allocated";
    EXPECT_EQ(workspace.buffer(*backend, 0, 1).address(), address) << name;
  }
}

TEST(Workspace, ASlotGrowsAndMovesToAnotherBackend) {
  const auto one = host::make_emulator_backend(1), other = host::make_emulator_backend(1);
  Workspace workspace;
  const Buffer& small = workspace.buffer(*one, 2, 16);
  EXPECT_EQ(small.owner(), one.get());
  EXPECT_EQ(small.bytes(), 16u);
  const Buffer& slot0 = workspace.buffer(*one, 0, 8);
  const Buffer& larger = workspace.buffer(*one, 2, 64);
  EXPECT_EQ(larger.bytes(), 64u);
  EXPECT_EQ(&workspace.buffer(*one, 0, 8), &slot0);       // other slots never move
  EXPECT_EQ(workspace.buffer(*one, 2, 32).bytes(), 64u);  // large enough: kept
  EXPECT_EQ(workspace.buffer(*other, 2, 32).owner(), other.get());
  EXPECT_EQ(workspace.bytes(), 8u + 32u);
}

}  // namespace
}  // namespace tcemu::markidis

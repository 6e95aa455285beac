// The integer GEMM, bit-identical to integer_mma_element for every element.
//
// Why the int32 inner loop is exact: A and B are packed into int16 (every operand value fits), a
// product lies in [-32640, 65025], and a partial sum runs over at most instruction_k <= 2^15
// products in saturate mode, so it stays below 2^31 in magnitude (kMaxIntegerInstructionK). It is
// kept in uint32, whose arithmetic is modulo 2^32 by definition; in saturate mode that sum is
// therefore the exact one, read back as int32, and added to the int32 accumulator in int64 and
// clamped: integer_instruction_result. In wrap mode the whole of k is one partial sum: modulo
// 2^32 addition is associative, so the uint32 sum of all products plus C is the chain of
// instructions each wrapping its own result.
#include <tcemu/emulator/integer_gemm.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/emulator/parallel_for.hpp>

namespace tcemu {
namespace {

constexpr std::int64_t kRows = 4;     // rows of D sharing each load of B in the inner loop
constexpr std::int64_t kWidth = 32;   // columns of D per tile: its sums stay in vector registers
constexpr std::int64_t kPanel = 256;  // columns of B whose k x kPanel panel stays in cache
// Row blocks of one task: they share each panel of B while it is in cache.
constexpr std::int64_t kBlocksPerTask = 16;

void check_shape(std::string_view caller, const std::string& name, std::int64_t rows,
                 std::int64_t cols, std::int64_t ld, Layout layout, bool has_data,
                 std::int64_t expected_rows, std::int64_t expected_cols) {
  const auto refuse = [&](const std::string& what) {
    throw std::invalid_argument(std::string(caller) + ": " + what);
  };
  if (rows != expected_rows || cols != expected_cols) {
    refuse(name + " is " + std::to_string(rows) + " x " + std::to_string(cols) + ", expected " +
           std::to_string(expected_rows) + " x " + std::to_string(expected_cols));
  }
  const std::int64_t inner = layout == Layout::row_major ? cols : rows;
  if (ld < std::max<std::int64_t>(1, inner)) {
    refuse("ld" + name + " = " + std::to_string(ld) + " must be >= max(1, " +
           std::to_string(inner) + ")");
  }
  if (!has_data && rows > 0 && cols > 0) refuse(name + " has no data");
}

// The operand (row-major, rows x cols) as int16 values, refusing bytes outside the format.
std::vector<std::int16_t> packed(const char* name, const IntegerOperandView& x) {
  std::vector<std::int16_t> values(static_cast<std::size_t>(x.rows * x.cols));
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) {
      const std::int32_t v = x.get(i, j);
      if (!x.format.holds(v)) {
        const unsigned byte = x.data[x.index(i, j)];
        throw std::invalid_argument(
            "emulated_integer_gemm: " + std::string(name) + "(" + std::to_string(i) + ", " +
            std::to_string(j) + ") holds the byte " + std::to_string(byte) + ", not an " +
            std::string(x.format.name) + " value (" + std::to_string(x.format.min_value()) + ".." +
            std::to_string(x.format.max_value()) + (x.format.is_signed ? ", sign" : ", zero") +
            "-extended in a byte)");
      }
      values[static_cast<std::size_t>(i * x.cols + j)] = static_cast<std::int16_t>(v);
    }
  }
  return values;
}

// Rows [i0, i0 + R) of D over columns [j0, j0 + width), width <= kWidth: each chunk of k (one
// instruction when saturating, all of k when wrapping) is summed into registers and then added to
// the accumulator with the instruction's overflow rule.
template <std::int64_t R>
void tile(const IntegerDatapath& dp, const std::int16_t* a, const std::int16_t* b, std::int64_t k,
          std::int64_t n, std::int64_t i0, std::int64_t j0, std::int64_t width,
          const std::optional<ConstInt32MatrixView>& c, const Int32MatrixView& d) {
  std::int32_t acc[R][kWidth] = {};
  for (std::int64_t r = 0; r < R; ++r) {
    for (std::int64_t j = 0; j < width; ++j) acc[r][j] = c ? c->at(i0 + r, j0 + j) : 0;
  }
  const bool saturate = dp.overflow == IntegerOverflow::saturate;
  const std::int64_t step = saturate ? dp.instruction_k : std::max<std::int64_t>(k, 1);
  const std::int16_t* arows = a + i0 * k;
  const std::int16_t* bcols = b + j0;
  std::int16_t btail[kWidth] = {};
  for (std::int64_t first = 0; first < k; first += step) {
    std::uint32_t partial[R][kWidth] = {};
    const std::int64_t last = std::min(k, first + step);
    for (std::int64_t p = first; p < last; ++p) {
      const std::int16_t* brow = bcols + p * n;
      if (width < kWidth) {  // a tile at the right edge: zero columns beyond n
        std::copy_n(brow, width, btail);
        brow = btail;
      }
      for (std::int64_t r = 0; r < R; ++r) {
        const std::int32_t av = arows[r * k + p];
        for (std::int64_t j = 0; j < kWidth; ++j) {
          partial[r][j] += static_cast<std::uint32_t>(av * std::int32_t{brow[j]});
        }
      }
    }
    for (std::int64_t r = 0; r < R; ++r) {
      for (std::int64_t j = 0; j < kWidth; ++j) {
        acc[r][j] =
            saturate
                ? integer_instruction_result(
                      dp.overflow,
                      std::int64_t{acc[r][j]} + static_cast<std::int32_t>(partial[r][j]))
                : static_cast<std::int32_t>(static_cast<std::uint32_t>(acc[r][j]) + partial[r][j]);
      }
    }
  }
  for (std::int64_t r = 0; r < R; ++r) {
    for (std::int64_t j = 0; j < width; ++j) d.at(i0 + r, j0 + j) = acc[r][j];
  }
}

}  // namespace

void check_integer_gemm_operands(std::string_view caller, const IntegerDatapath& dp,
                                 const IntegerOperandView& a, const IntegerOperandView& b,
                                 const std::optional<ConstInt32MatrixView>& c,
                                 const ConstInt32MatrixView& d) {
  const auto refuse = [&](const std::string& what) {
    throw std::invalid_argument(std::string(caller) + ": " + what);
  };
  try {
    validate(dp);
  } catch (const std::invalid_argument& e) {
    refuse(e.what());
  }
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  if (m < 0 || n < 0 || k < 0 || b.rows < 0) refuse("negative dimension");
  check_shape(caller, "A", a.rows, a.cols, a.ld, a.layout, a.data != nullptr, m, k);
  check_shape(caller, "B", b.rows, b.cols, b.ld, b.layout, b.data != nullptr, k, n);
  if (c) check_shape(caller, "C", c->rows, c->cols, c->ld, c->layout, c->data != nullptr, m, n);
  check_shape(caller, "D", d.rows, d.cols, d.ld, d.layout, d.data != nullptr, m, n);
  if (!(a.format == dp.a_format)) {
    refuse("A holds " + std::string(a.format.name) + ", the datapath's a_format is " +
           std::string(dp.a_format.name));
  }
  if (!(b.format == dp.b_format)) {
    refuse("B holds " + std::string(b.format.name) + ", the datapath's b_format is " +
           std::string(dp.b_format.name));
  }
}

void emulated_integer_gemm(const IntegerDatapath& dp, IntegerOperandView a, IntegerOperandView b,
                           std::optional<ConstInt32MatrixView> c, Int32MatrixView d, int threads) {
  const FloatingPointScope scope;
  check_integer_gemm_operands("emulated_integer_gemm", dp, a, b, c, d);
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  if (m == 0 || n == 0) return;
  const std::vector<std::int16_t> ap = packed("A", a);
  const std::vector<std::int16_t> bp = packed("B", b);
  // A task is kBlocksPerTask blocks of kRows rows of D over every column panel; each element is
  // computed by one tile in a fixed order, whatever the thread count. A tile reads its elements
  // of C before it writes the same elements of D, so C may alias D.
  const std::int64_t blocks = (m + kRows - 1) / kRows;
  detail::parallel_for(threads, blocks, kBlocksPerTask, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t p0 = 0; p0 < n; p0 += kPanel) {
      for (std::int64_t blk = begin; blk < end; ++blk) {
        const std::int64_t i0 = blk * kRows;
        for (std::int64_t j0 = p0; j0 < std::min(n, p0 + kPanel); j0 += kWidth) {
          const std::int64_t width = std::min(kWidth, n - j0);
          if (i0 + kRows <= m) {
            tile<kRows>(dp, ap.data(), bp.data(), k, n, i0, j0, width, c, d);
          } else {
            for (std::int64_t i = i0; i < m; ++i) {
              tile<1>(dp, ap.data(), bp.data(), k, n, i, j0, width, c, d);
            }
          }
        }
      }
    }
  });
}

}  // namespace tcemu

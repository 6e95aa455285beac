// The CRT reconstruction's table of the first moduli, computed on the host (crt_reconstruction.hpp:
// table, product_bits).
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <tcemu/backend/crt_reconstruction.hpp>

namespace tcemu::crt_elements {
namespace {

void check_count(int count) {
  if (count < 1 || count > kMaxModuli) {
    throw std::invalid_argument("crt: " + std::to_string(count) + " moduli (1 to " +
                                std::to_string(kMaxModuli) + ")");
  }
}

// a^-1 mod m for gcd(a, m) = 1 (extended Euclid).
int inverse_mod(int a, int m) {
  int r0 = m, r1 = a % m, t0 = 0, t1 = 1;
  while (r1 != 0) {
    const int q = r0 / r1;
    const int r2 = r0 - q * r1, t2 = t0 - q * t1;
    r0 = r1;
    r1 = r2;
    t0 = t1;
    t1 = t2;
  }
  if (r0 != 1) throw std::logic_error("crt: moduli not coprime");
  return t0 < 0 ? t0 + m : t0;
}

// x (little-endian limbs) times a small factor, in place.
void multiply(std::uint32_t (&x)[kLimbs], int factor) {
  std::uint64_t carry = 0;
  for (std::uint32_t& limb : x) {
    const std::uint64_t y =
        static_cast<std::uint64_t>(limb) * static_cast<unsigned>(factor) + carry;
    limb = static_cast<std::uint32_t>(y);
    carry = y >> 32;
  }
  if (carry != 0) throw std::logic_error("crt: product past the limbs");
}

// x mod m for a small m (little-endian limbs, from the top).
int remainder(const std::uint32_t (&x)[kLimbs], int m) {
  std::uint64_t r = 0;
  for (int i = kLimbs - 1; i >= 0; --i) r = ((r << 32) | x[i]) % static_cast<unsigned>(m);
  return static_cast<int>(r);
}

}  // namespace

Table table(int count) {
  check_count(count);
  Table t;
  t.count = count;
  t.product[0] = 1;
  for (int l = 0; l < count; ++l) {
    const int m = kModuli[l];
    t.moduli[l] = modulus(m);
    multiply(t.product, m);
    std::uint32_t(&w)[kLimbs] = t.weight[l];
    w[0] = 1;
    for (int j = 0; j < count; ++j) {
      if (j != l) multiply(w, kModuli[j]);
    }
    const int inverse = inverse_mod(remainder(w, m), m);
    t.cofactor_inverse[l] = static_cast<std::uint8_t>(inverse);
    multiply(w, inverse);  // (M / m_l) times its inverse: below M
    // Below 2^32: inverse <= m - 1.
    t.fraction[l] =
        static_cast<std::uint32_t>(((static_cast<std::uint64_t>(inverse) << 32) + m / 2) / m);
  }
  // 2^32 kCrtOffset / M = 2^54 / M rounded: 0 once M > 2^55 (so wherever M needs a third limb).
  constexpr std::uint64_t kScaledOffset = std::uint64_t{kCrtOffset} << 32;
  const bool wide = std::any_of(t.product + 2, t.product + kLimbs, [](auto x) { return x != 0; });
  const std::uint64_t low = t.product[0] | std::uint64_t{t.product[1]} << 32;
  t.offset_fraction = wide || low > 2 * kScaledOffset ? 0 : (kScaledOffset + low / 2) / low;
  for (int i = 0; i < kLimbs; ++i) {  // M / 2 (M is even)
    t.half[i] = (t.product[i] >> 1) | (i + 1 < kLimbs ? t.product[i + 1] << 31 : 0u);
  }
  t.limbs = kLimbs;
  while (t.limbs > 1 && t.product[t.limbs - 1] == 0) --t.limbs;
  return t;
}

int product_bits(int count) {
  const Table t = table(count);
  for (int i = kLimbs - 1; i >= 0; --i) {
    if (t.product[i] == 0) continue;
    int lead = 31;
    while (((t.product[i] >> lead) & 1) == 0) --lead;
    return i * 32 + lead;
  }
  return 0;
}

}  // namespace tcemu::crt_elements

// The host-side tables of the CRT element functions (crt_elements.hpp).
#include <stdexcept>
#include <string>

#include <tcemu/backend/crt_elements.hpp>

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

}  // namespace

Table table(int count) {
  check_count(count);
  Table t;
  t.count = count;
  for (int l = 0; l < count; ++l) t.moduli[l] = static_cast<std::uint16_t>(kModuli[l]);
  for (int l = 0; l < count; ++l) {
    for (int j = 0; j < l; ++j) {
      t.inverse[l][j] = static_cast<std::uint8_t>(inverse_mod(kModuli[j] % kModuli[l], kModuli[l]));
    }
  }
  t.product[0] = 1;
  for (int l = 0; l < count; ++l) {
    std::uint64_t carry = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const std::uint64_t x = static_cast<std::uint64_t>(t.product[i]) * kModuli[l] + carry;
      t.product[i] = static_cast<std::uint32_t>(x);
      carry = x >> 32;
    }
  }
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

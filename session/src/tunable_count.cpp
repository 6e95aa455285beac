#include <tcemu/session/tunable_count.hpp>

#include <charconv>
#include <cstdint>

#include <tcemu/backend/crt_moduli.hpp>

namespace tcemu::session {

int most_tunable_count(bool crt) {
  return crt ? crt_elements::kMaxModuli : 1000;
}

std::optional<int> tunable_count(ozaki::Mode mode, bool crt, std::optional<std::string_view> text,
                                 const std::string& tunable, std::string& expected) {
  if (mode != ozaki::Mode::tunable) {
    if (!text) return 0;
    expected = "used outside " + tunable;
    return std::nullopt;
  }
  const int most = most_tunable_count(crt);
  std::int64_t v = 0;
  if (text) {
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (error == std::errc() && end == text->data() + text->size() && v >= 1 && v <= most) {
      return static_cast<int>(v);
    }
  }
  expected = "an integer in [1, " + std::to_string(most) + "], which " + tunable + " needs";
  return std::nullopt;
}

}  // namespace tcemu::session

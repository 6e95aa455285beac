#include "gemm_schemes.hpp"

namespace tcemu::cli {

const std::vector<GemmScheme>& gemm_schemes() {
  static const std::vector<GemmScheme> all = [] {
    std::vector<GemmScheme> schemes;
    for (auto& s : ozaki_schemes()) schemes.push_back(std::move(s));
    for (auto& s : markidis_schemes()) schemes.push_back(std::move(s));
    for (auto& s : accurate_schemes()) schemes.push_back(std::move(s));
    return schemes;
  }();
  return all;
}

}  // namespace tcemu::cli

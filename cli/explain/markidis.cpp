// explain markidis: the fp32 hi/lo splits of the error-corrected SGEMM schemes (Markidis et al.
// 2018; Ootomo and Yokota 2022), computed by the library's split (split_fp32_element,
// fp32_split_elements.hpp) with each scheme preset's parts (markidis/presets.hpp).
#include <bit>
#include <cmath>
#include <stdexcept>

#include <tcemu/backend/fp32_split_elements.hpp>
#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/markidis/presets.hpp>

#include "topics.hpp"
#include "values.hpp"

namespace tcemu::cli::explain {
namespace {

constexpr const char* kUsage =
    R"(usage: tcemu explain markidis [VALUE...] [--schemes LIST] [--format F]

Splits fp32 values into the parts of error-corrected SGEMM schemes with the library's split
(split_fp32_element): part p = round(r_p 2^s_p) in the part format, r_(p+1) = r_p - part_p
2^-s_p (exact in fp32); what is left after the last part is lost. markidis (Markidis et al.
2018): fp16 hi = RN(x), lo = RN(x - hi); halfhalf (Ootomo and Yokota 2022): lo = RN((x - hi)
2^11), so that the residual, about 2^-11 |x|, is not pushed into fp16's subnormals.
  --schemes LIST   scheme presets (tcemu gemm --help lists them); default markidis,halfhalf
Default value: 0.1 (fp32 3dcccccd).

)";

Document run(const session::Arguments& args) {
  std::vector<std::uint32_t> xs;
  for (const std::string& w :
       args.positional().empty() ? std::vector<std::string>{"0.1"} : args.positional()) {
    xs.push_back(value_bits("value", w, formats::fp32));
  }
  std::vector<markidis::Scheme> schemes;
  for (const std::string& name : args.list_or("schemes", "markidis,halfhalf")) {
    try {
      schemes.push_back(markidis::scheme_by_name(name));
    } catch (const std::invalid_argument& e) {
      throw session::UsageError(std::string("--schemes: ") + e.what());
    }
  }
  Document d("The hi/lo splits of error-corrected SGEMM");
  for (const std::uint32_t x : xs) {
    const double xv = std::bit_cast<float>(x);
    for (const markidis::Scheme& s : schemes) {
      d.heading(s.name + " on x = " + decimal(xv) + " (fp32 " + to_hex(formats::fp32, x) + ")");
      std::vector<BitRow> rows{{"x", binary_of(xv), "fp32 " + to_hex(formats::fp32, x), {}}};
      Table parts{{"part", "rounding", "scale", "bits (" + std::string(s.part_format.name) + ")",
                   "significant bits", "value / 2^scale", "residual after it"},
                  {}};
      std::uint32_t r = x;
      for (std::size_t p = 0; p < s.parts.size(); ++p) {
        const markidis::PartSpec& spec = s.parts[p];
        const SplitElement e =
            split_fp32_element(r, s.part_format, spec.rounding, spec.scale_exponent);
        if (e.overflow) throw session::UsageError("x overflows " + std::string(s.part_format.name));
        const double part = std::ldexp(to_double(s.part_format, e.part), -spec.scale_exponent);
        const Decoded q = decode(s.part_format, e.part);
        const std::string name = p == 0 ? "hi" : p == 1 ? "lo" : "part " + std::to_string(p);
        parts.rows.push_back({name, std::string(name_of(spec.rounding)),
                              "2^" + std::to_string(spec.scale_exponent),
                              to_hex(s.part_format, e.part),
                              std::to_string(static_cast<int>(std::bit_width(q.significand))),
                              decimal(part), decimal(std::bit_cast<float>(e.residual))});
        rows.push_back({name, binary_of(part), decimal(part), {}});
        r = e.residual;
      }
      rows.push_back(
          {"lost", binary_of(std::bit_cast<float>(r)), decimal(std::bit_cast<float>(r)), {}});
      d.table(parts);
      d.bits(rows);
      d.why(
          "each residual r - part 2^-s is exact in fp32 (split_fp32_element's proof, "
          "fp32_split_elements.hpp): x = the parts + lost, exactly.");
    }
  }
  d.why(
      "an fp16 part keeps at most 11 bits, and fewer when r 2^s falls below 2^-14, fp16's "
      "smallest normal: the residual is at most 2^-11 |hi|, and halfhalf's 2^11 scaling lifts "
      "it back by as much (Ootomo and Yokota 2022), where markidis lets it sink.");
  return d;
}

}  // namespace

Topic markidis_topic() {
  return {"markidis", "the Markidis / Ootomo-Yokota hi/lo split and what lo loses",
          kUsage,     {"schemes"},
          run,        true};
}

}  // namespace tcemu::cli::explain

#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include <tcemu/backend/fp32_split_elements.hpp>
#include <tcemu/markidis/scheme.hpp>

namespace tcemu::markidis {
namespace {

[[noreturn]] void bad(const Scheme& scheme, const std::string& what) {
  throw std::invalid_argument("scheme " + scheme.name + ": " + what);
}

int weight(const Scheme& scheme, const Product& p) {
  return scheme.parts[p.a_part].scale_exponent + scheme.parts[p.b_part].scale_exponent;
}

}  // namespace

void validate(const Scheme& scheme) {
  if (!is_split_format(scheme.part_format)) {
    bad(scheme, "part_format " + std::string(scheme.part_format.name) +
                    " cannot hold parts of an fp32 split (fp16, bf16, tf32 or e5m2)");
  }
  if (scheme.parts.empty()) bad(scheme, "no parts");
  if (scheme.groups.empty()) bad(scheme, "no accumulator groups");
  const int n = static_cast<int>(scheme.parts.size());
  std::set<std::pair<int, int>> seen;
  for (std::size_t g = 0; g < scheme.groups.size(); ++g) {
    const AccumulatorGroup& group = scheme.groups[g];
    const std::string where = "group " + std::to_string(g);
    if (group.products.empty()) bad(scheme, where + " has no products");
    if (group.takeout_every_instructions < 0) {
      bad(scheme, where + ": takeout_every_instructions = " +
                      std::to_string(group.takeout_every_instructions) + " must be >= 0");
    }
    for (const Product& p : group.products) {
      if (p.a_part < 0 || p.a_part >= n || p.b_part < 0 || p.b_part >= n) {
        bad(scheme, where + ": product (" + std::to_string(p.a_part) + ", " +
                        std::to_string(p.b_part) + ") names a part outside 0.." +
                        std::to_string(n - 1));
      }
      if (!seen.insert({p.a_part, p.b_part}).second) {
        bad(scheme, where + ": product (" + std::to_string(p.a_part) + ", " +
                        std::to_string(p.b_part) + ") is listed twice");
      }
      if (weight(scheme, p) != weight(scheme, group.products.front())) {
        bad(scheme, where + ": products of one accumulator must carry the same scaling, (" +
                        std::to_string(p.a_part) + ", " + std::to_string(p.b_part) + ") has 2^" +
                        std::to_string(weight(scheme, p)) + ", the first 2^" +
                        std::to_string(weight(scheme, group.products.front())));
      }
    }
  }
}

void validate(const Scheme& scheme, const Datapath& datapath) {
  validate(scheme);
  if (!(datapath.input == scheme.part_format)) {
    bad(scheme, "the datapath's input format is " + std::string(datapath.input.name) +
                    ", the parts are " + std::string(scheme.part_format.name));
  }
  if (!(datapath.accumulator == formats::fp32)) {
    bad(scheme, "the datapath's accumulator is " + std::string(datapath.accumulator.name) +
                    ", fp32 is required");
  }
}

Scheme with_takeout_interval(Scheme scheme, int instructions) {
  if (instructions < 1) {
    bad(scheme, "a take-out interval of " + std::to_string(instructions) +
                    " instructions; it must be >= 1");
  }
  bool changed = false;
  for (AccumulatorGroup& group : scheme.groups) {
    if (group.takeout_every_instructions > 0) {
      group.takeout_every_instructions = instructions;
      changed = true;
    }
  }
  if (!changed) bad(scheme, "no accumulator group leaves the Tensor Core: no take-out to change");
  return scheme;
}

int group_weight(const Scheme& scheme, const AccumulatorGroup& group) {
  return weight(scheme, group.products.front());
}

std::string describe(const Scheme& scheme) {
  std::ostringstream out;
  out << scheme.name << ": " << scheme.parts.size() << " " << scheme.part_format.name << " parts (";
  for (std::size_t p = 0; p < scheme.parts.size(); ++p) {
    out << (p ? ", " : "") << name_of(scheme.parts[p].rounding);
    if (scheme.parts[p].scale_exponent != 0) out << " x2^" << scheme.parts[p].scale_exponent;
  }
  out << ")";
  for (std::size_t g = 0; g < scheme.groups.size(); ++g) {
    out << "; acc" << g << " =";
    for (const Product& p : scheme.groups[g].products) out << " " << p.a_part << "*" << p.b_part;
    if (scheme.groups[g].takeout_every_instructions > 0) {
      out << " out every " << scheme.groups[g].takeout_every_instructions << " instr";
    }
  }
  if (scheme.scale_to_exponent) out << "; scaled to 2^" << *scheme.scale_to_exponent;
  return out.str();
}

}  // namespace tcemu::markidis

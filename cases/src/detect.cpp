#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>

#include <tcemu/cases/detect.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

std::size_t count_mismatches(const Datapath& dp, std::span<const MmaCase> cases,
                             std::size_t give_up_after) {
  std::size_t mismatches = 0;
  for (const MmaCase& c : cases) {
    if (mma_case_element(dp, c) != *c.d && ++mismatches > give_up_after) break;
  }
  return mismatches;
}

// Appends `candidate` to `out` if the emulator can run it (validate(); for example a k group or
// a scale group that does not divide its block is left out).
void keep_if_valid(std::vector<Datapath>& out, const Datapath& candidate) {
  try {
    validate(candidate);
  } catch (const std::invalid_argument&) {
    return;
  }
  out.push_back(candidate);
}

// One searchable field: its name and the datapaths obtained by setting each candidate value.
struct Field {
  const char* name;
  std::function<std::vector<Datapath>(const Datapath&)> candidates;
};

// The fields of `start`'s search: a block-scaled datapath adds G and the NaN-scale rule and widens
// F (MMA-Sim's mxf4nvf4 keeps 35 bits) and the floor (its e_zero -139).
std::vector<Field> fields(const Datapath& start) {
  const bool scaled = start.block_scaled();
  auto each = [](auto values, auto set) {
    return [values, set](const Datapath& dp) {
      std::vector<Datapath> out;
      for (const auto& v : values) {
        Datapath candidate = dp;
        set(candidate, v);
        keep_if_valid(out, candidate);
      }
      return out;
    };
  };
  std::vector<std::optional<int>> bits = {std::nullopt};
  for (int b = 10; b <= (scaled ? 40 : 30); ++b) bits.emplace_back(b);
  std::vector<int> floors = {-126, -133, -140, -149, kNoAlignmentFloor};
  if (scaled) {
    floors.assign({kNoAlignmentFloor});
    for (int e = -170; e <= -100; ++e) floors.push_back(e);
  }
  std::vector<Field> searchable = {
      // Block size and k grouping together: the interleaved fp8 halves (16 terms dealt two at
      // a time) beat sequential blocks only when both change.
      {"block_terms/k_group",
       [](const Datapath& dp) {
         std::vector<Datapath> out;
         for (int terms : {1, 2, 4, 8, 16, 32, 64}) {
           // With one block per instruction the grouping deals every term to it: group = terms.
           for (int group = terms == dp.instruction_k ? terms : 1; group <= terms; group *= 2) {
             Datapath candidate = dp;
             candidate.block_terms = terms;
             candidate.k_group = group;
             keep_if_valid(out, candidate);  // the instruction's K a multiple of the block
           }
         }
         return out;
       }},
      {"alignment_fraction_bits",
       each(bits, [](Datapath& dp, std::optional<int> v) { dp.alignment_fraction_bits = v; })},
      {"alignment_floor", each(floors, [](Datapath& dp, int v) { dp.alignment_floor = v; })},
      {"block_rounding", each(std::vector<Rounding>{Rounding::toward_zero, Rounding::nearest_even},
                              [](Datapath& dp, Rounding v) { dp.block_rounding = v; })},
      {"block_result_precision", each(std::vector<int>{11, 14, 24},
                                      [](Datapath& dp, int v) { dp.block_result_precision = v; })},
      {"c_entry", each(std::vector<AccumulatorEntry>{AccumulatorEntry::aligned_in_first_block,
                                                     AccumulatorEntry::added_after_blocks},
                       [](Datapath& dp, AccumulatorEntry v) { dp.c_entry = v; })},
      {"zero_sign", each(std::vector<ZeroSign>{ZeroSign::ieee, ZeroSign::positive},
                         [](Datapath& dp, ZeroSign v) { dp.zero_sign = v; })},
      {"overflow",
       each(std::vector<Overflow>{Overflow::ieee, Overflow::infinity, Overflow::saturate},
            [](Datapath& dp, Overflow v) { dp.overflow = v; })},
  };
  if (scaled) {
    // G and F together, searched first: with fewer exact products per group, more fraction bits
    // can stand in for the exactness the groups lose (and a floor, chosen before them, for a few
    // more cases), local optima that one field at a time does not leave.
    searchable.insert(searchable.begin(), {"group_terms", [bits](const Datapath& dp) {
                                             std::vector<Datapath> out;
                                             for (int group : {1, 2, 4, 8, 16, 32, 64}) {
                                               for (const std::optional<int> f : bits) {
                                                 Datapath candidate = dp;
                                                 candidate.block_scaling.group_terms = group;
                                                 candidate.alignment_fraction_bits = f;
                                                 keep_if_valid(out, candidate);
                                               }
                                             }
                                             return out;
                                           }});
    searchable.push_back(
        {"nan_scale",
         each(std::vector<NanScale>{NanScale::poisons_result, NanScale::ignored_for_zero_products},
              [](Datapath& dp, NanScale v) { dp.block_scaling.nan_scale = v; })});
  }
  return searchable;
}

}  // namespace

Datapath baseline_datapath(const FloatFormat& input, const FloatFormat& accumulator, int k) {
  return block_datapath(input, accumulator, k, k, 24);
}

Datapath baseline_datapath(const Datapath& inputs, int k) {
  Datapath dp = baseline_datapath(inputs.input, inputs.accumulator, k);
  dp.has_input_b = inputs.has_input_b;
  dp.input_b = inputs.input_b;
  dp.block_scaling = BlockScaling{inputs.block_scaling.scale_block, inputs.block_scaling.scale_a,
                                  inputs.block_scaling.scale_b};
  return dp;
}

DatapathFit fit_datapath(const Datapath& start, std::span<const MmaCase> cases) {
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (!cases[i].d) throw std::invalid_argument("case " + std::to_string(i + 1) + " has no d");
    if (cases[i].a.size() != static_cast<std::size_t>(start.instruction_k)) {
      throw std::invalid_argument("case " + std::to_string(i + 1) +
                                  " has K = " + std::to_string(cases[i].a.size()) +
                                  ", not the instruction's " + std::to_string(start.instruction_k));
    }
    const std::size_t scales = start.block_scaled() ? scale_count(start, cases[i].a.size()) : 0;
    if (cases[i].scale_a.size() != scales || cases[i].scale_b.size() != scales) {
      throw std::invalid_argument(
          "case " + std::to_string(i + 1) + " has " + std::to_string(cases[i].scale_a.size()) +
          " and " + std::to_string(cases[i].scale_b.size()) +
          " scales of A and B, the datapath takes " + std::to_string(scales) + " each");
    }
  }
  validate(start);
  Datapath first = start;
  // The NaN the hardware produces: the most frequent NaN pattern among the recorded results.
  std::map<std::uint32_t, std::size_t> nans;
  for (const MmaCase& c : cases) {
    if (decode(start.accumulator, *c.d).value_class == ValueClass::nan) ++nans[*c.d];
  }
  if (!nans.empty()) {
    first.nan_bits = std::max_element(nans.begin(), nans.end(), [](const auto& x, const auto& y) {
                       return x.second < y.second;
                     })->first;
  }
  DatapathFit fit{first, cases.size(), count_mismatches(first, cases, cases.size()), {}};
  const auto searchable = fields(start);
  for (int pass = 0; pass < 8; ++pass) {
    bool changed = false;
    for (const Field& field : searchable) {
      for (const Datapath& candidate : field.candidates(fit.datapath)) {
        const std::size_t m = count_mismatches(candidate, cases, fit.mismatches);
        if (m < fit.mismatches) {
          fit.datapath = candidate;
          fit.mismatches = m;
          changed = true;
        }
      }
    }
    if (!changed || fit.mismatches == 0) break;
  }
  // A field is undetermined when another of its values does as well as the chosen one.
  for (const Field& field : searchable) {
    for (const Datapath& candidate : field.candidates(fit.datapath)) {
      if (candidate == fit.datapath) continue;
      if (count_mismatches(candidate, cases, fit.mismatches) <= fit.mismatches) {
        fit.undetermined.emplace_back(field.name);
        break;
      }
    }
  }
  return fit;
}

}  // namespace tcemu

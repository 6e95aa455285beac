// The bit-for-bit evidence against MMA-Sim 2.1.1 (issue 35, tests/data/mmasim/README.md): the
// Blackwell instructions with FP6/FP4 inputs or block scaling, grouped into the distinct datapaths
// that their preset rows share, and a deterministic generator of one-instruction cases for each.
//
// A case set is (datapath, seed, count): case i is drawn from scenario i mod S (S scenarios) by
// a splitmix64 stream seeded from (seed, the set's stream, i) alone, with no standard-library
// distribution, so the same cases come out of every compiler, standard library and thread count,
// and the first n cases of a longer set are the n cases of a shorter one. Values are chosen with
// the formats' encodings, binary64 arithmetic and IEEE round-to-nearest alone, never with the
// emulated datapath, so that a change of the datapath cannot change the cases that MMA-Sim's
// committed results belong to.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/datapath.hpp>

namespace tcemu {

// An MMA-Sim 2.1.1 instruction: its class in mmasim.nv_ptx (TCGen05MMA, TCGen05MMABlockScale,
// MMA, MMABlockScale), its architecture name (Blackwell, RTX Blackwell) and shape_and_type.
struct MmaSimInstruction {
  std::string cls;
  std::string arch;
  std::string shape_and_type;
};

// One distinct datapath of the evidence: every preset row (arch and instruction) that has it and
// every MMA-Sim instruction that models those rows.
struct EvidenceSet {
  std::string name;  // a file stem: f8f6f4-e4m3-e2m1-fp32, mxf8f6f4-e3m2-e2m3, mxf4-block32-ue8m0
  Datapath datapath;
  std::vector<std::string> rows;  // "sm100 tcgen05.mxf4.block32", ...
  std::vector<MmaSimInstruction> mmasim;
  std::uint64_t stream;  // from the name: each set draws its own cases
};

// The sets, in the order of all_presets(): sm100 tcgen05 kind::f8f6f4 (every pair of e5m2, e4m3,
// e3m2, e2m3, e2m1; fp32 and fp16 results; sm120's mma.sync.m16n8k32 shares each), the
// block-scaled kinds mxf8f6f4.block32 (every pair), mxf4.block32 and mxf4nvf4.block32 (one
// datapath), mxf4nvf4.block16 with ue8m0 and with ue4m3 scales, each shared by tcgen05 and sm120.
std::vector<EvidenceSet> mmasim_evidence_sets();

// The seed of the committed results (tests/data/mmasim).
inline constexpr std::uint64_t kEvidenceSeed = 1;

// The scenarios of a datapath's cases. Block-scaled: random, wide-exponent, cancelling,
// extreme-scale; unscaled: random, wide-exponent, cancelling, special.
std::vector<std::string_view> evidence_scenarios(const Datapath& datapath);

// The scenario of case `index`: evidence_scenarios(datapath)[index mod their count].
std::string_view evidence_scenario(const Datapath& datapath, std::uint64_t index);

// Case `index` of the set (datapath, seed, stream): one output element of one instruction, K =
// datapath.instruction_k terms of a (input format) and b (b_format()), c and, on a block-scaled
// datapath, scale_count(dp, K) scales of A's row and of B's column (empty otherwise), every value
// a bit pattern in the low bits (an e2m1 code is 0..15); no recorded d. tcemu's d for it is
// mma_case_element (case_file.hpp).
MmaCase evidence_case(const Datapath& datapath, std::uint64_t seed, std::uint64_t stream,
                      std::uint64_t index);

// The case as one line: "K=32 a=.. b=.. c=.. scale_a=.. scale_b=..", hex bit patterns.
std::string describe_case(const Datapath& datapath, const MmaCase& x);

// The bytes one result takes in a results file: 4 (fp32) or 2 (fp16), little-endian.
int result_bytes(const Datapath& datapath);

// The comparison of `count` cases of a set with MMA-Sim's d (results[i] for case i), on
// `threads` threads (0: the hardware's).
struct EvidenceMismatch {
  std::uint64_t index;
  std::uint32_t mmasim;
  std::uint32_t tcemu;
};
struct EvidenceCheck {
  std::uint64_t cases = 0;
  std::uint64_t mismatches = 0;
  std::vector<EvidenceMismatch> first;  // the first mismatches by index, at most `keep`
};
EvidenceCheck check_evidence(const EvidenceSet& set, std::uint64_t seed,
                             const std::vector<std::uint32_t>& results, std::size_t keep,
                             int threads = 0);

// A fingerprint of cases 0 .. count-1 of a set: FNV-1a over every bit pattern of every case (a,
// b, c, scale_a, scale_b; 32-bit little-endian words). The results files carry it, so that a
// change of the generator shows as such, not as mismatches.
std::uint64_t evidence_digest(const EvidenceSet& set, std::uint64_t seed, std::uint64_t count);

// The cases for MMA-Sim (scripts/mmasim_reference.py reads them): writes DIR/NAME.a and NAME.b
// (uint8 codes, count x K, row-major), NAME.c (little-endian uint32 or uint16 bit patterns,
// count) and, block-scaled, NAME.scale_a and NAME.scale_b (uint8, count x S), and returns the
// set's line of DIR/cases.tsv (evidence_manifest_header() names its columns). Throws
// std::runtime_error naming a file that cannot be written.
std::string write_evidence_cases(const EvidenceSet& set, std::uint64_t seed, std::uint64_t count,
                                 const std::string& dir);
std::string evidence_manifest_header();

// A line of cases.tsv or of MMA-Sim's results.tsv: the first four tab-separated fields (name,
// count, seed, digest as 16 hex digits); lines starting with '#' are comments.
struct EvidenceRecord {
  std::string name;
  std::uint64_t count;
  std::uint64_t seed;
  std::uint64_t digest;
};
// Throws std::runtime_error naming the file (and line) when it is missing or malformed.
std::vector<EvidenceRecord> read_evidence_manifest(const std::string& path);

// Every set checked against MMA-Sim's results in `dir` (results.tsv and NAME.d, as
// scripts/mmasim_reference.py writes them): per set, an error where no comparison could be made
// (no results for the set, cases of another generator: the digest differs, a count that does not
// match), else the comparison of its first min(count, max_count) cases (max_count 0: all).
// Throws std::runtime_error naming dir/results.tsv when it is missing or malformed.
struct EvidenceSetResult {
  EvidenceSet set;
  std::uint64_t seed = 0;
  std::string error;
  EvidenceCheck check;
};
std::vector<EvidenceSetResult> check_evidence_folder(const std::string& dir,
                                                     std::uint64_t max_count, std::size_t keep,
                                                     int threads = 0);

// A mismatch as a line: the set, case index, scenario, MMA-Sim's and tcemu's d, the case.
std::string describe_mismatch(const EvidenceSet& set, std::uint64_t seed,
                              const EvidenceMismatch& mismatch);

// Reads a results file (count * result_bytes(datapath) little-endian bytes). Throws
// std::runtime_error naming the file when it is missing, unreadable or of a size that is not a
// whole number of results.
std::vector<std::uint32_t> read_evidence_results(const std::string& path, const Datapath& datapath);

}  // namespace tcemu

// The DMMA table. Sources:
//  * PTX ISA (NVIDIA, "Parallel Thread Execution ISA", section "Warp Level Matrix Multiply-
//    Accumulate Instructions: mma", syntax `mma.sync.aligned.shape.row.col.f64.f64.f64.f64`):
//    shape .m8n8k4 with .f64 requires sm_80 or higher; .m16n8k4, .m16n8k8 and .m16n8k16 with .f64
//    require sm_90 or higher. PTX code for an older target runs on every newer one, so sm89 keeps
//    m8n8k4 and sm100 and sm120 keep all four shapes. (sm86 and sm87 devices use the sm80 row.)
//  * The same shapes per architecture in MMA-Sim 2.1.1 (mmasim/nv_ptx/isa_mma.py: m8n8k4.f64 in
//    mma_shape_and_type_from_sm_80, the m16n8 .f64 shapes in mma_shape_and_type_from_sm_90).
//  * What one instruction computes: MMA-Sim 2.1.1's MMA_FMA (mmasim/arithmetic/fma.py), a chain
//    of fused multiply-adds in ascending k order starting from c, which its authors validated on
//    A100, H100/H800 and B200 hardware (arXiv 2511.10909). Not yet measured by us:
//    `tcemu probe --instr dmma` on an H200 decides the order and the fusion (docs/presets.md).
#include <tcemu/emulator/fp64_presets.hpp>

#include <stdexcept>
#include <string>

namespace tcemu {
namespace {

std::vector<Fp64Instruction> table() {
  std::vector<Fp64Instruction> rows;
  const auto add = [&](std::string_view arch, bool sm90_shapes) {
    rows.push_back({arch, "mma.sync.m8n8k4", 8, 8, 4});
    if (!sm90_shapes) return;
    rows.push_back({arch, "mma.sync.m16n8k4", 16, 8, 4});
    rows.push_back({arch, "mma.sync.m16n8k8", 16, 8, 8});
    rows.push_back({arch, "mma.sync.m16n8k16", 16, 8, 16});
  };
  add("sm80", false);
  add("sm89", false);
  add("sm90", true);
  add("sm100", true);
  add("sm120", true);
  return rows;
}

bool known_arch(std::string_view arch) {
  for (std::string_view a : {"sm70", "sm75", "sm80", "sm89", "sm90", "sm100", "sm120"}) {
    if (a == arch) return true;
  }
  return false;
}

std::vector<Fp64Instruction> rows_of(std::string_view arch) {
  std::vector<Fp64Instruction> rows;
  for (const Fp64Instruction& r : fp64_instructions()) {
    if (r.arch == arch) rows.push_back(r);
  }
  return rows;
}

std::string shapes_of(const std::vector<Fp64Instruction>& rows) {
  std::string shapes;
  for (const Fp64Instruction& r : rows) {
    shapes +=
        (shapes.empty() ? "" : ", ") + std::string(r.name) + " (K " + std::to_string(r.k) + ")";
  }
  return shapes;
}

}  // namespace

const std::vector<Fp64Instruction>& fp64_instructions() {
  static const std::vector<Fp64Instruction> rows = table();
  return rows;
}

std::vector<std::string_view> fp64_instruction_names(std::string_view arch) {
  std::vector<std::string_view> names;
  for (const Fp64Instruction& r : rows_of(arch)) {
    if (names.empty()) names.push_back("mma.sync");
    names.push_back(r.name);
  }
  return names;
}

Fp64Instruction fp64_instruction(std::string_view arch, std::string_view instruction) {
  if (!known_arch(arch)) {
    throw std::invalid_argument("unknown architecture '" + std::string(arch) +
                                "' (fp64 MMA: sm80 sm89 sm90 sm100 sm120)");
  }
  const std::vector<Fp64Instruction> rows = rows_of(arch);
  if (rows.empty()) {
    throw std::invalid_argument(std::string(arch) +
                                " has no fp64 MMA instruction (mma.sync .f64 starts with sm_80)");
  }
  if (instruction == "mma.sync") return rows.back();  // the table lists K increasing
  for (const Fp64Instruction& r : rows) {
    if (r.name == instruction) return r;
  }
  throw std::invalid_argument(
      std::string(arch) + " has no fp64 instruction '" + std::string(instruction) + "'; it has " +
      shapes_of(rows) + " (and mma.sync: the largest-K shape)" +
      (arch == "sm80" || arch == "sm89" ? " (the m16n8 .f64 shapes need sm_90)" : ""));
}

Fp64Datapath fp64_preset(std::string_view arch, std::string_view instruction) {
  return {fp64_instruction(arch, instruction).k, Fp64Order::ascending, Fp64Step::fused,
          kFp64PresetNan, Fp64Nan::propagated};
}

void check_fp64_shape_k(std::string_view arch, std::string_view instruction, std::size_t k) {
  const Fp64Instruction row = fp64_instruction(arch, instruction);
  if (instruction == "mma.sync" || k % static_cast<std::size_t>(row.k) == 0) return;
  throw std::invalid_argument("K = " + std::to_string(k) + " is not a multiple of " +
                              std::string(row.name) + "'s K = " + std::to_string(row.k) + "; " +
                              std::string(arch) + " has " + shapes_of(rows_of(arch)) +
                              ", and mma.sync takes any K");
}

}  // namespace tcemu

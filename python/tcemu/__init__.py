"""tcemu: a bit-exact model of NVIDIA Tensor Core MMA, and the accurate-GEMM schemes built on it.

Arrays go in as NumPy arrays (float16, float32, float64, ml_dtypes' bfloat16/float8_e4m3fn/
float8_e5m2/float6_e3m2fn/float6_e2m3fn/float4_e2m1fn/float8_e8m0fnu, or uint8/uint16/uint32 bit
patterns) or any DLPack producer, without a copy where their strides allow; block-scaled
datapaths take scale arrays (matmul's scale_a, scale_b). python/README.md has a tour;
help(tcemu.matmul) and the others say more.
"""

from importlib.metadata import PackageNotFoundError, version

from ._tcemu import (
    NO_ALIGNMENT_FLOOR,
    Comparison,
    Datapath,
    DatapathFit,
    Format,
    Fp64Datapath,
    Fp64Instruction,
    PresetEntry,
    accurate_gemm,
    block_datapath,
    compare,
    detect,
    detect_gpu,
    devices,
    formats,
    fp64_instructions,
    fp64_mma,
    fp64_preset,
    gpu_built,
    gpu_mma,
    instruction_names,
    markidis_datapath,
    markidis_gemm,
    markidis_scheme,
    markidis_schemes,
    matmul,
    mma,
    ozaki_gemm,
    preset,
    preset_names,
    presets,
    probe,
    quantize_mx,
    quantize_nvfp4,
    validate,
)

try:
    __version__ = version("tcemu")
except PackageNotFoundError:  # imported from the source tree
    __version__ = "0.1.0"

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("PackageNotFoundError", "version")]

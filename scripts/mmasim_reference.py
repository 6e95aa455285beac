#!/usr/bin/env python3
"""MMA-Sim 2.1.1's results for the cases that `mmasim_cases write` wrote.

Reads CASES/cases.tsv and each set's case files (NAME.a, NAME.b: uint8 codes, count x K;
NAME.c: little-endian fp32/fp16 bits; NAME.scale_a, NAME.scale_b: uint8, count x S), runs every
MMA-Sim instruction listed for the set through the `dpa` of its class (mmasim.nv_ptx: TCGen05MMA,
TCGen05MMABlockScale, MMA, MMABlockScale), requires all of a set's instructions to give the same
bits, and writes OUT/NAME.d (MMA-Sim's d: little-endian uint32 for fp32 results, uint16 for fp16)
and OUT/results.tsv (name, count, seed and digest from cases.tsv, then the instructions), which
`mmasim_cases check --results OUT` and the CTest MmaSimEvidence read (tests/data/mmasim/README.md).

Operands are given as MMA-Sim reads them: e4m3 and e5m2 as torch.float8_e4m3fn / float8_e5m2;
FP6 as uint8 with the code in bits 5:0 and FP4 in bits 5:2 (kind::f8f6f4, mxf8f6f4); FP4 of
kind::mxf4 and mxf4nvf4 packed two to a byte, element 2i in the high nibble (MMA-Sim's
unpack_uint8_to_fp4); ue8m0 scales as torch.float8_e8m0fnu, ue4m3 as torch.float8_e4m3fn (MMA-Sim
clears bit 7); c as float32 / float16.

Needs numpy, torch (2.7 or later: float8_e8m0fnu) and mmasim 2.1.1, installed or given as its wheel
(--mmasim-wheel: unpacked into a temporary folder; on import mmasim compiles a C++ file with
torch.utils.cpp_extension, which needs a C++ compiler and ninja). Exit status 0 when every set was run
and its instructions agreed, 1 otherwise, 2 for a usage error.
"""

import argparse
import datetime
import importlib.metadata
import pathlib
import sys
import tempfile
import zipfile

import numpy as np

MMASIM_VERSION = "2.1.1"
COLUMNS = ["name", "count", "seed", "digest", "k", "scales", "a", "b", "accumulator",
           "scale_a", "scale_b", "mmasim"]


def read_manifest(path):
    sets = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != len(COLUMNS):
                sys.exit(f"{path}:{number}: expected {len(COLUMNS)} tab-separated fields "
                         f"({', '.join(COLUMNS)}), got {len(fields)}")
            entry = dict(zip(COLUMNS, fields))
            for key in ("count", "k", "scales"):
                entry[key] = int(entry[key])
            entry["mmasim"] = [tuple(i.split("|")) for i in entry["mmasim"].split(";")]
            sets.append(entry)
    return sets


def read_array(path, dtype, shape):
    if not path.is_file():
        sys.exit(f"{path}: no such file")
    data = np.fromfile(path, dtype=dtype)
    if data.size != int(np.prod(shape)):
        sys.exit(f"{path}: {data.size} values, expected {' x '.join(map(str, shape))}")
    return data.reshape(shape)


class Runner:
    def __init__(self, torch, nv_ptx):
        self.torch = torch
        self.nv_ptx = nv_ptx

    def instruction(self, cls, arch, shape_and_type, entry):
        op = getattr(self.nv_ptx, cls)(arch, shape_and_type)
        # The instruction must be the set's: K, formats, accumulator, scales.
        torch = self.torch
        d_type = {"fp32": torch.float32, "fp16": torch.float16}[entry["accumulator"]]
        expected = [("k", op.k, entry["k"]), ("a", op.a_type_ptx, entry["a"]),
                    ("b", op.b_type_ptx, entry["b"]), ("d", op.d_type, d_type)]
        if entry["scales"] > 0:
            s_type = {"ue8m0": torch.float8_e8m0fnu, "ue4m3": torch.float8_e4m3fn}
            expected += [("scales", op.k // op.block_size, entry["scales"]),
                         ("scale type", op.s_type, s_type[entry["scale_a"]])]
        for what, got, want in expected:
            if got != want:
                sys.exit(f"{entry['name']}: {cls}('{arch}', '{shape_and_type}') has {what} "
                         f"{got}, the set {want}")
        return op

    def elements(self, codes, ptx_type, packed):
        torch = self.torch
        if ptx_type == "e4m3":
            return torch.from_numpy(codes).view(torch.float8_e4m3fn)
        if ptx_type == "e5m2":
            return torch.from_numpy(codes).view(torch.float8_e5m2)
        if ptx_type == "e2m1" and packed:
            return torch.from_numpy(np.ascontiguousarray((codes[:, 0::2] << 4) | codes[:, 1::2]))
        if ptx_type == "e2m1":
            return torch.from_numpy(codes << 2)  # FP4 sits in bits 5:2
        return torch.from_numpy(codes.copy())  # FP6 in bits 5:0

    def run(self, op, entry, arrays, begin, end, device):
        torch = self.torch
        a, b, c = (arrays[key][begin:end] for key in ("a", "b", "c"))
        packed = getattr(op, "packing", 1) == 2
        ta = self.elements(a, entry["a"], packed).to(device)
        tb = self.elements(b, entry["b"], packed).to(device)
        if entry["accumulator"] == "fp32":
            tc = torch.from_numpy(c.view(np.int32)).view(torch.float32).to(device)
        else:
            tc = torch.from_numpy(c.view(np.int16)).view(torch.float16).to(device)
        if entry["scales"] > 0:
            scale_dtype = {"ue8m0": torch.float8_e8m0fnu, "ue4m3": torch.float8_e4m3fn}
            sa = torch.from_numpy(arrays["scale_a"][begin:end].copy())
            sb = torch.from_numpy(arrays["scale_b"][begin:end].copy())
            d = op.dpa(ta, tb, tc, sa.view(scale_dtype[entry["scale_a"]]).to(device),
                       sb.view(scale_dtype[entry["scale_b"]]).to(device))
        else:
            d = op.dpa(ta, tb, tc)
        if entry["accumulator"] == "fp32":
            return d.view(torch.int32).cpu().numpy().view(np.uint32)
        return d.view(torch.int16).cpu().numpy().view(np.uint16)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="See tests/data/mmasim/README.md for the command that made the committed results.")
    parser.add_argument("--cases", required=True, type=pathlib.Path,
                        help="the folder of `mmasim_cases write` (cases.tsv and the case files)")
    parser.add_argument("--out", required=True, type=pathlib.Path,
                        help="the folder for NAME.d and results.tsv (created)")
    parser.add_argument("--mmasim-wheel", type=pathlib.Path,
                        help="import mmasim from this wheel (mmasim-2.1.1-py3-none-any.whl)")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                        help="where MMA-Sim runs (auto: CUDA where torch sees a GPU)")
    parser.add_argument("--cpu-check", type=int, default=0, metavar="N",
                        help="on CUDA, run the first N cases of each instruction on the CPU too "
                             "and require the same bits")
    parser.add_argument("--batch", type=int, default=1 << 16, help="cases per dpa call")
    parser.add_argument("--sets", help="only these sets (comma-separated names)")
    args = parser.parse_args()
    if args.batch < 1 or args.cpu_check < 0:
        parser.error("--batch must be positive and --cpu-check non-negative")
    if args.mmasim_wheel is not None:
        if not args.mmasim_wheel.is_file():
            parser.error(f"--mmasim-wheel: no file {args.mmasim_wheel}")
        # Unpacked, not imported from the zip: mmasim compiles a C++ file of its own on import
        # (torch.utils.cpp_extension.load of arithmetic/fma_cpu.cpp, which needs a C++ compiler).
        unpacked = tempfile.mkdtemp(prefix="mmasim-")
        with zipfile.ZipFile(args.mmasim_wheel) as wheel:
            wheel.extractall(unpacked)
        sys.path.insert(0, unpacked)
    try:
        import torch
        import mmasim.nv_ptx as nv_ptx
    except ImportError as e:
        sys.exit(f"mmasim_reference.py: {e} (needs torch and mmasim {MMASIM_VERSION})")
    version = importlib.metadata.version("mmasim")
    if version != MMASIM_VERSION:
        sys.exit(f"mmasim_reference.py: mmasim {version} found, the evidence is of "
                 f"{MMASIM_VERSION}")
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("mmasim_reference.py: --device cuda, but torch sees no GPU")
    device = "cuda" if args.device != "cpu" and torch.cuda.is_available() else "cpu"
    where = torch.cuda.get_device_name(0) if device == "cuda" else "CPU"

    entries = read_manifest(args.cases / "cases.tsv")
    if args.sets:
        wanted = args.sets.split(",")
        unknown = sorted(set(wanted) - {e["name"] for e in entries})
        if unknown:
            parser.error(f"--sets: not in cases.tsv: {', '.join(unknown)}")
        entries = [e for e in entries if e["name"] in wanted]
    args.out.mkdir(parents=True, exist_ok=True)
    runner = Runner(torch, nv_ptx)
    failures = 0
    lines = []
    for entry in entries:
        name, count, k, s = entry["name"], entry["count"], entry["k"], entry["scales"]
        c_dtype = "<u4" if entry["accumulator"] == "fp32" else "<u2"
        arrays = {
            "a": read_array(args.cases / f"{name}.a", np.uint8, (count, k)),
            "b": read_array(args.cases / f"{name}.b", np.uint8, (count, k)),
            "c": read_array(args.cases / f"{name}.c", np.dtype(c_dtype), (count,)),
        }
        if s > 0:
            arrays["scale_a"] = read_array(args.cases / f"{name}.scale_a", np.uint8, (count, s))
            arrays["scale_b"] = read_array(args.cases / f"{name}.scale_b", np.uint8, (count, s))
        results = []
        for cls, arch, shape_and_type in entry["mmasim"]:
            op = runner.instruction(cls, arch, shape_and_type, entry)
            d = np.concatenate([runner.run(op, entry, arrays, i, min(i + args.batch, count), device)
                                for i in range(0, count, args.batch)] or [np.zeros(0, c_dtype)])
            if device == "cuda" and args.cpu_check > 0:
                n = min(args.cpu_check, count)
                on_cpu = runner.run(op, entry, arrays, 0, n, "cpu")
                differ = np.flatnonzero(on_cpu != d[:n])
                if differ.size:
                    failures += 1
                    i = differ[0]
                    print(f"{name}: {cls}('{arch}', '{shape_and_type}') gives other bits on the "
                          f"CPU than on CUDA in {differ.size} of {n} cases; case {i}: CUDA "
                          f"{int(d[i]):x}, CPU {int(on_cpu[i]):x}")
            results.append(((cls, arch, shape_and_type), d))
        reference = results[0][1]
        for instruction, d in results[1:]:
            differ = np.flatnonzero(d != reference)
            if differ.size:
                failures += 1
                i = differ[0]
                print(f"{name}: {instruction} and {results[0][0]} differ in {differ.size} of "
                      f"{count} cases; case {i}: {int(d[i]):x} and {int(reference[i]):x}")
        reference.astype(c_dtype).tofile(args.out / f"{name}.d")
        lines.append("\t".join([name, str(count), entry["seed"], entry["digest"],
                                ";".join("|".join(i) for i, _ in results)]))
        print(f"{name}: {count} cases, {len(results)} MMA-Sim instructions", flush=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    with open(args.out / "results.tsv", "w") as f:
        f.write(f"# MMA-Sim {version}, torch {torch.__version__}, {where}, {stamp}\n"
                "# name\tcount\tseed\tdigest\tMMA-Sim instructions (class|arch|shape_and_type;"
                "...), all giving NAME.d\n")
        f.write("".join(line + "\n" for line in lines))
    print(f"{len(entries)} sets on {where}; {failures} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

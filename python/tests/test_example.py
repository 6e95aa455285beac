"""examples/error_vs_k.py runs and writes its CSV and PNG."""

import csv
import pathlib
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).parents[1] / "examples" / "error_vs_k.py"


def test_error_vs_k(tmp_path):
    subprocess.run([sys.executable, str(EXAMPLE), str(tmp_path), "--k", "16,64,256"], check=True)
    with open(tmp_path / "error_vs_k.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 9
    mean = {(r["datapath"], int(r["k"])): float(r["mean_relative_error"]) for r in rows}
    for k in (16, 64, 256):  # RN blocks beat RZ blocks, sm70's fewer alignment bits lose most
        assert mean[("sm90, RN blocks", k)] < mean[("sm90", k)] < mean[("sm70", k)]
    assert mean[("sm90", 256)] > mean[("sm90", 16)]
    assert (tmp_path / "error_vs_k.png").read_bytes()[:4] == b"\x89PNG"

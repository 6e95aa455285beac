"""Runs the notebooks of python/notebooks headless and renders their figures into
docs/results/notebooks: NAME-N.png (the N-th figure of NAME.ipynb, from 1) and NAME.json, the data
behind each figure (every plotted line's label and x, y values, each axes' title and labels),
recorded in the kernel as the notebook calls plt.show().

    python3 python/notebooks/render.py [OUT_DIR]      (default: docs/results/notebooks)

python/tests/test_notebooks.py runs every notebook through execute() and compares the data of its
figures with the stored NAME.json (compare()), so a stored PNG that no longer shows what its
notebook draws fails the tests. The PNG bytes are not compared: they change with the matplotlib
version. Needs the tcemu package installed (pip install .), matplotlib, nbclient, nbformat and
ipykernel.
"""

import argparse
import base64
import json
import math
import pathlib
import re

import nbformat
from nbclient import NotebookClient

NOTEBOOKS_DIR = pathlib.Path(__file__).resolve().parent
DEFAULT_OUT = NOTEBOOKS_DIR.parents[1] / "docs" / "results" / "notebooks"

# Run first in the kernel: plt.show records the data of every open figure before it draws them.
_RECORD = r'''
import json as _render_json
import matplotlib.pyplot as _render_plt

_render_figures = []


def _render_record(figure):
    axes = []
    for ax in figure.axes:
        lines = [{"label": None if line.get_label().startswith("_") else line.get_label(),
                  "x": [float(v) for v in line.get_xdata()],
                  "y": [float(v) for v in line.get_ydata()]} for line in ax.get_lines()]
        axes.append({"title": ax.get_title(), "xlabel": ax.get_xlabel(),
                     "ylabel": ax.get_ylabel(), "lines": lines})
    return {"axes": axes}


_render_show = _render_plt.show


def _render_show_and_record(*args, **kwargs):
    for number in _render_plt.get_fignums():
        _render_figures.append(_render_record(_render_plt.figure(number)))
    return _render_show(*args, **kwargs)


_render_plt.show = _render_show_and_record
'''
_DUMP = "print(_render_json.dumps(_render_figures))"


def notebooks():
    return sorted(NOTEBOOKS_DIR.glob("*.ipynb"))


def execute(path, cwd):
    """Runs the notebook at path top to bottom in a fresh kernel (working directory cwd). Returns
    (figures, data): the PNG bytes of every figure it displayed, in order, and the recorded data
    of each figure (one entry per figure, as stored in NAME.json)."""
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(_RECORD))
    notebook.cells.append(nbformat.v4.new_code_cell(_DUMP))
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(cwd)}}).execute()
    figures = [base64.b64decode(output["data"]["image/png"])
               for cell in notebook.cells[1:-1] for output in cell.get("outputs", [])
               if "image/png" in output.get("data", {})]
    dump = "".join(output.get("text", "") for output in notebook.cells[-1].outputs
                   if output.get("name") == "stdout")
    data = json.loads(dump)
    if len(data) != len(figures):
        raise RuntimeError(f"{path.name}: {len(figures)} figures displayed, {len(data)} recorded "
                           "(draw each figure with plt.show())")
    return figures, data


# Values within a factor of 2: the figures are log plots of errors; the last-bit differences of
# NumPy's exp and log between machines move a point by far less, a change of what the notebook
# computes or draws by more (and the structure, labels and lengths must be equal).
_FACTOR = 2.0


def _close(a, b):
    if a == b or (math.isnan(a) and math.isnan(b)):
        return True
    if a == 0 or b == 0 or (a < 0) != (b < 0) or not (math.isfinite(a) and math.isfinite(b)):
        return False
    return abs(math.log(abs(a) / abs(b))) <= math.log(_FACTOR)


def compare(data, stored):
    """The differences between a run's figure data and the stored one, as readable lines."""
    differences = []
    if len(data) != len(stored):
        return [f"{len(data)} figures, stored {len(stored)}"]
    for f, (figure, old_figure) in enumerate(zip(data, stored), 1):
        if len(figure["axes"]) != len(old_figure["axes"]):
            differences.append(f"figure {f}: {len(figure['axes'])} axes, stored "
                               f"{len(old_figure['axes'])}")
            continue
        for ax, old_ax in zip(figure["axes"], old_figure["axes"]):
            for key in ("title", "xlabel", "ylabel"):
                if ax[key] != old_ax[key]:
                    differences.append(f"figure {f}: {key} {ax[key]!r}, stored {old_ax[key]!r}")
            labels = [line["label"] for line in ax["lines"]]
            old_labels = [line["label"] for line in old_ax["lines"]]
            if labels != old_labels:
                differences.append(f"figure {f}: lines {labels}, stored {old_labels}")
                continue
            for line, old_line in zip(ax["lines"], old_ax["lines"]):
                for key in ("x", "y"):
                    values, old_values = line[key], old_line[key]
                    if len(values) != len(old_values):
                        differences.append(f"figure {f}, line {line['label']}: {len(values)} "
                                           f"{key} values, stored {len(old_values)}")
                    elif not all(_close(a, b) for a, b in zip(values, old_values)):
                        differences.append(f"figure {f}, line {line['label']}: {key} "
                                           f"{values}, stored {old_values}")
    return differences


def main():
    parser = argparse.ArgumentParser(
        description="Run the notebooks of python/notebooks and render their figures (PNG) and the "
        "data behind them (JSON).")
    parser.add_argument("out", nargs="?", type=pathlib.Path, default=DEFAULT_OUT,
                        help=f"the folder to write into (default: {DEFAULT_OUT})")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    for path in notebooks():
        figures, data = execute(path, out)
        for old in out.glob(f"{path.stem}-*.png"):
            old.unlink()
        for n, png in enumerate(figures, 1):
            (out / f"{path.stem}-{n}.png").write_bytes(png)
        text = json.dumps(data, indent=1)
        text = re.sub(r"\[\s+([^\[\]{}]*?)\s+\]",  # each list of values on one line
                      lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
        (out / f"{path.stem}.json").write_text(text + "\n")
        print(f"{path.name}: {len(figures)} figure(s) -> {out}")


if __name__ == "__main__":
    main()

"""The teaching notebooks of python/notebooks run top to bottom (headless, nbclient), so that they
never rot: each asserts its own claims in its cells (an exact dot product equal to the exact
value rounded once, CR mode equal to the exact product rounded once, RN blocks with exact
alignment far below the truncating datapaths). Their figures are stored in docs/results/notebooks
(python/notebooks/render.py); the data behind each figure must match the stored NAME.json, so the
stored PNGs show what the notebooks draw today."""

import json
import pathlib
import sys

import pytest

NOTEBOOKS_DIR = pathlib.Path(__file__).parents[1] / "notebooks"
sys.path.insert(0, str(NOTEBOOKS_DIR))
import render  # noqa: E402

NOTEBOOKS = render.notebooks()
STORED = pathlib.Path(__file__).parents[2] / "docs" / "results" / "notebooks"


def test_every_notebook_is_found():
    assert [n.name for n in NOTEBOOKS] == [
        "error_free_dot_products.ipynb",
        "ozaki_slices.ipynb",
        "truncation_against_k.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(path, tmp_path):
    figures, data = render.execute(path, tmp_path)
    assert figures, f"{path.name} drew no figure"
    stale = "; run python3 python/notebooks/render.py to render docs/results/notebooks again"
    stored = json.loads((STORED / f"{path.stem}.json").read_text())
    differences = render.compare(data, stored)
    assert not differences, "\n".join(differences) + stale
    assert sorted(p.name for p in STORED.glob(f"{path.stem}-*.png")) == sorted(
        f"{path.stem}-{n}.png" for n in range(1, len(figures) + 1)), stale

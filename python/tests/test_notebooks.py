"""The teaching notebooks of python/notebooks run top to bottom (headless, nbclient), so that they
never rot: each asserts its own claims in its cells (an exact dot product equal to the exact
value rounded once, CR mode equal to the exact product rounded once, RN blocks with exact
alignment far below the truncating datapaths)."""

import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((pathlib.Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))


def test_every_notebook_is_found():
    assert [n.name for n in NOTEBOOKS] == [
        "error_free_dot_products.ipynb",
        "ozaki_slices.ipynb",
        "truncation_against_k.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(path, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    figures = [o for cell in notebook.cells for o in cell.get("outputs", [])
               if "image/png" in o.get("data", {})]
    assert figures, f"{path.name} drew no figure"

"""The Python examples run: the notebook's code cells in order (as Jupyter would, without needing
a kernel), and the scripts at their --small sizes."""
import json
import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.environ.get("VIGOR_SOURCE_DIR", os.path.join(
    os.path.dirname(__file__), "..", "..")), "examples", "python")


def test_notebook_runs():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    with open(os.path.join(EXAMPLES, "henon_heiles.ipynb")) as f:
        nb = json.load(f)
    scope = {}
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(cells) >= 4
    for cell in cells:
        exec(compile("".join(cell["source"]), "henon_heiles.ipynb", "exec"), scope)
    assert scope["res"].summary["trajectories"] == len(scope["megno"])


@pytest.mark.parametrize("script", ["henon_heiles_section.py", "megno_map.py"])
def test_example_script_runs(script, tmp_path):
    pytest.importorskip("matplotlib")
    figure = tmp_path / "figure.png"
    done = subprocess.run([sys.executable, os.path.join(EXAMPLES, script), "--small", "--out",
                           str(figure)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert figure.stat().st_size > 10000
    assert "wrote" in done.stdout

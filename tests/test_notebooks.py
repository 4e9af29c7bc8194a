#!/usr/bin/python3
"""The notebooks of examples/ (docs/python.md), executed top to bottom so that they cannot rot:
`python3 -m nbconvert --to notebook --execute` (Debian's python3-nbconvert and python3-ipykernel),
with the module of the build under test on the kernel's path. Each notebook checks its own
results (asserts in its cells), so a notebook that runs is one whose claims still hold. They are
kept without outputs (checked here), so that a diff shows only what changed in them.

Environment: CUBESIM_BIN (the binary; default build/cubesim): the module is BUILD/python.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.abspath(os.environ.get("CUBESIM_BIN", os.path.join(ROOT, "build", "cubesim")))
NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "examples", "*.ipynb")))


class Notebooks(unittest.TestCase):
    def test_there_are_the_three_notebooks(self):
        self.assertEqual([os.path.basename(n) for n in NOTEBOOKS],
                         ["foh_efficiency_fit.ipynb", "selection_map.ipynb", "tr530_fig3_broadcast.ipynb"])

    def test_stored_without_outputs(self):
        for n in NOTEBOOKS:
            with open(n, encoding="utf-8") as f:
                nb = json.load(f)
            for i, c in enumerate(nb["cells"]):
                if c["cell_type"] == "code":
                    self.assertEqual((c["outputs"], c["execution_count"]), ([], None), f"{n}: cell {i}")

    def test_each_runs_top_to_bottom(self):
        env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(BIN), "python"), MPLBACKEND="agg")
        with tempfile.TemporaryDirectory() as out:
            for n in NOTEBOOKS:
                start = time.monotonic()
                p = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
                                    "--ExecutePreprocessor.timeout=120", "--output-dir", out, n],
                                   capture_output=True, text=True, env=env, cwd=ROOT)
                took = time.monotonic() - start
                print(f"{os.path.relpath(n, ROOT)}: {took:.1f} s", file=sys.stderr)
                self.assertEqual(p.returncode, 0, f"{n}:\n{p.stderr[-4000:]}")
                with open(os.path.join(out, os.path.basename(n)), encoding="utf-8") as f:
                    nb = json.load(f)
                errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
                self.assertEqual(errors, [], n)


if __name__ == "__main__":
    unittest.main(verbosity=2)

#!/usr/bin/python3
"""scripts/scale-pass.py (docs/performance.md "Every scale target in one pass"): every point of a
sweep run alone (a shard of one point) and tabled, labelled as cubesim labels it; a failed point
named with its error (exit 1), a point over a target marked and, with --strict, failing; options
after -- passed to each run; a config that is not valid or no binary: exit 2. And the shipped
bench/scale/*.json are valid, with the issue's number of points."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUBESIM = os.environ.get("CUBESIM_BIN") or os.path.join(ROOT, "build", "cubesim")
SCRIPT = os.path.join(ROOT, "scripts", "scale-pass.py")


def sweep(dim=4, algorithms=("broadcast.sbt", "allgather.sbt")):
    return {
        "schema": "cubesim.config/1",
        "name": "small",
        "machine": "ipsc-nx",
        "topology": {"kind": "hypercube", "dim": dim},
        "algorithm": algorithms[0],
        "params": {"M": 64, "B": 16},
        "mode": "timing",
        "sweep": {"algorithm": list(algorithms), "machine_overrides.ports": ["one", "all"]},
    }


class ScalePass(unittest.TestCase):
    def run_script(self, cfg, *args):
        with tempfile.TemporaryDirectory(prefix="cubesim-scale-pass-test-") as tmp:
            path = os.path.join(tmp, "small.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(cfg, f)
            return subprocess.run([sys.executable, SCRIPT, "--cubesim", CUBESIM, "--idle", "0", path, *args],
                                  capture_output=True, text=True)

    def rows(self, out):
        return [line for line in out.splitlines() if line.startswith("| small.json |")]

    def test_every_point_alone_in_every_pass(self):
        p = self.run_script(sweep(), "--passes", "2")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        rows = self.rows(p.stdout)
        self.assertEqual(len(rows), 4, p.stdout)
        self.assertTrue(any("| broadcast.sbt one |" in r for r in rows), p.stdout)
        self.assertTrue(any("| allgather.sbt all |" in r for r in rows), p.stdout)
        for r in rows:
            self.assertEqual(r.count(" s |"), 2, r)  # two passes
            self.assertTrue(r.endswith("| yes |"), r)
        self.assertIn("4 of 4 points under 5 s in every pass", p.stdout)
        # the events column is the report's count
        events = [r.split("|")[-3].strip() for r in rows]
        self.assertTrue(all(e.replace(",", "").isdigit() and int(e.replace(",", "")) > 0 for e in events), events)

    def test_a_point_over_a_target_is_marked_and_fails_only_when_strict(self):
        p = self.run_script(sweep(algorithms=("broadcast.sbt",)), "--limit", "0.000001")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(all(r.endswith("| **no** |") for r in self.rows(p.stdout)), p.stdout)
        self.assertIn("0 of 2 points under", p.stdout)
        p = self.run_script(sweep(algorithms=("broadcast.sbt",)), "--memory", "1", "--strict")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("2 over, 0 failed", p.stdout)

    def test_a_failed_point_is_named_with_its_error_and_options_reach_the_runs(self):
        p = self.run_script(sweep(algorithms=("broadcast.sbt",)), "--", "--max-events", "5")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        rows = self.rows(p.stdout)
        self.assertEqual(len(rows), 2, p.stdout)
        for r in rows:
            self.assertIn("failed: the budget of 5 events is spent", r)
        self.assertIn("2 failed", p.stdout)

    def test_a_config_that_is_not_valid_is_exit_2_before_any_run(self):
        p = self.run_script(sweep(dim=30, algorithms=("broadcast.sbt",)))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("/topology/dim", p.stderr)
        self.assertEqual(self.rows(p.stdout), [])

    def test_no_binary_is_exit_2(self):
        p = subprocess.run([sys.executable, SCRIPT, "--cubesim", "/nonexistent/cubesim"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no cubesim at /nonexistent/cubesim", p.stderr)

    def test_the_shipped_targets(self):
        # issue 35's rows: 21 primitives on 2^16 and CRA, GCEA on 2^12, both
        # port models; 9 multiplications on both; 7 CM transposes
        counts = {}
        folder = os.path.join(ROOT, "bench", "scale")
        for name in sorted(os.listdir(folder)):
            p = subprocess.run([CUBESIM, "predict", "--json", os.path.join(folder, name)], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, f"{name}: {p.stderr}")
            counts[name] = len(json.loads(p.stdout)["runs"])
        self.assertEqual(counts, {"cm-transposes.json": 7, "matmul2d.json": 18, "primitives-n12.json": 4,
                                  "primitives.json": 42})


if __name__ == "__main__":
    unittest.main()

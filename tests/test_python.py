#!/usr/bin/python3
"""The Python module (docs/python.md): `import cubesim` from the build's python/ folder, each
function against the command line's output for the same input (bit for bit where the command
line prints JSON), keyword overrides, the exceptions, Ctrl-C, DataFrames, and the README's example.

Environment: CUBESIM_BIN (the binary; default build/cubesim); the module is taken from the
binary's folder (BUILD/python). Run from the repository root (ctest does).
"""
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from contextlib import redirect_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.abspath(os.environ.get("CUBESIM_BIN", os.path.join(ROOT, "build", "cubesim")))
sys.path.insert(0, os.path.join(os.path.dirname(BIN), "python"))
import cubesim  # noqa: E402

QUICK = "configs/quickstart.json"


def cli(*args, check=True):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, cwd=ROOT)
    if check and p.returncode not in (0, 1):
        raise AssertionError(f"cubesim {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p


def slow_config(points):
    """A sweep of `points` points of 0.1-0.3 s each (bench/python/allgather-sbt-2e12.json:
    an all-to-all broadcast on 4,096 nodes, timing mode, 45 MB)."""
    with open(os.path.join(ROOT, "bench", "python", "allgather-sbt-2e12.json"), encoding="utf-8") as f:
        doc = json.load(f)
    doc["sweep"] = {"params.M": list(range(1, 1 + points))}
    return doc


class Run(unittest.TestCase):
    def test_the_report_is_the_command_lines_byte_for_byte(self):
        r = cubesim.run(QUICK, reproducible=True)
        self.assertEqual(r.json_text, cli("run", QUICK, "--json", "--reproducible").stdout)
        self.assertEqual(r.exit_code, 0)
        self.assertEqual(len(r.runs), 14)
        self.assertEqual(r.json["schema"], "cubesim.report/1")
        # The text report is `cubesim run`'s table.
        self.assertEqual(r.text, cli("run", QUICK, "--reproducible").stdout)

    def test_out_writes_the_command_lines_files(self):
        with tempfile.TemporaryDirectory() as d:
            cubesim.run(QUICK, out=os.path.join(d, "py"), reproducible=True, jobs=2)
            cli("run", QUICK, "--out", os.path.join(d, "cli"), "--reproducible")
            for f in ("report.json", "runs.csv"):
                with open(os.path.join(d, "py", f), "rb") as a, open(os.path.join(d, "cli", f), "rb") as b:
                    self.assertEqual(a.read(), b.read(), f)

    def test_a_config_given_as_a_dict(self):
        with open(os.path.join(ROOT, QUICK), encoding="utf-8") as f:
            doc = json.load(f)
        a = cubesim.run(doc, reproducible=True).json
        b = cubesim.run(QUICK, reproducible=True).json
        self.assertEqual(a["runs"], b["runs"])

    def test_jobs_do_not_change_the_report(self):
        one = cubesim.run(QUICK, reproducible=True, jobs=1).json_text
        self.assertEqual(one, cubesim.run(QUICK, reproducible=True, jobs=2).json_text)

    def test_wall_clock_fields_are_filled_unless_reproducible(self):
        r = cubesim.run(QUICK, dim=7)
        self.assertTrue(all(run["simulated"]["wall_s"] > 0 for run in r.runs))


class Overrides(unittest.TestCase):
    def test_the_issues_example_is_set_and_machine(self):
        r = cubesim.run(QUICK, dim=6, machine="ipsc-os2", reproducible=True)
        want = cli("run", QUICK, "--json", "--reproducible", "--machine", "ipsc-os2", "--set", "topology.dim=6").stdout
        self.assertEqual(r.json_text, want)
        self.assertEqual([run["point"]["topology.dim"] for run in r.runs], [6, 6])
        self.assertEqual(r.json["machine"]["name"], "ipsc-os2")

    def test_shorthands_and_dotted_keys_map_to_set(self):
        r = cubesim.run(QUICK, M=1024, tau="100us", set={"sweep.topology.dim": [2, 3]}, reproducible=True)
        want = cli("run", QUICK, "--json", "--reproducible", "--set", "sweep.topology.dim=[2,3]",
                   "--set", "params.M=1024", "--set", "machine.tau=100us").stdout
        self.assertEqual(r.json_text, want)
        df = r.to_pandas()
        self.assertEqual(sorted(set(df["M"])), [1024])
        self.assertEqual(sorted(set(df["topology.dim"])), [2, 3])
        r2 = cubesim.run(QUICK, reproducible=True, **{"params.M": 1024, "sweep.topology.dim": [2, 3],
                                                         "machine.tau": "100us"})
        self.assertEqual(r2.json["runs"], r.json["runs"])

    def test_a_bad_override_is_the_command_lines_error(self):
        with self.assertRaises(cubesim.InputError) as e:
            cubesim.run(QUICK, M="x")
        self.assertEqual(str(e.exception), cli("run", QUICK, "--set", "params.M=x", check=False).stderr.strip())
        self.assertEqual(e.exception.pointer, "--set params.M")


class Predict(unittest.TestCase):
    def test_predict_is_predict_json(self):
        p = cubesim.predict(QUICK, dim=5)
        self.assertEqual(p.json, json.loads(cli("predict", QUICK, "--json", "--set", "topology.dim=5").stdout))
        df = p.to_pandas()
        self.assertEqual(len(df), 2)
        for c in ("predicted_s", "pred_startups", "pred_element_transfers", "relation", "source"):
            self.assertIn(c, df.columns)


class Validate(unittest.TestCase):
    def test_a_valid_config(self):
        self.assertEqual(cubesim.validate(QUICK), {"name": "quickstart", "algorithm": "broadcast.sbt", "runs": 14})

    def test_errors_carry_the_command_lines_line_file_and_pointer(self):
        bad = {"schema": "cubesim.config/1", "name": "bad", "machine": "ipsc-nx",
               "topology": {"kind": "hypercube", "dim": 3}, "algorithm": "broadcast.sbt", "params": {"M": -1}}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(bad, f)
            p = cli("validate", path, check=False)
            self.assertEqual(p.returncode, 2)
            with self.assertRaises(cubesim.InputError) as e:
                cubesim.validate(path)
            self.assertEqual(str(e.exception), p.stderr.strip())
            self.assertEqual(e.exception.file, path)
            self.assertEqual(e.exception.pointer, "/params/M")
            self.assertIn("M must be", e.exception.reason)
            self.assertIsInstance(e.exception, ValueError)
        with self.assertRaises(cubesim.InputError) as e:  # a dict: named <dict>
            cubesim.validate(bad)
        self.assertTrue(str(e.exception).startswith("<dict>: /params/M: "), str(e.exception))
        with self.assertRaises(cubesim.InputError) as e:
            cubesim.run(dict(bad, algorithm="broadcast.sbtt"))
        self.assertIn("did you mean", str(e.exception))
        with self.assertRaises(cubesim.InputError):
            cubesim.run("no/such/config.json")
        with self.assertRaises(TypeError):
            cubesim.run(42)


class Replay(unittest.TestCase):
    TRACE = "traces/samples/quickstart.trace"

    def test_replay_is_replay_json(self):
        r = cubesim.replay(self.TRACE, machine="caltech-mark2", reproducible=True)
        want = cli("replay", self.TRACE, "--machine", "caltech-mark2", "--json", "--reproducible").stdout
        self.assertEqual(r.json_text, want)
        self.assertEqual(r.exit_code, 0)
        self.assertEqual(len(r.to_pandas()), 1)
        with self.assertRaises(cubesim.InputError):
            cubesim.replay(self.TRACE, machine="no-such-machine")

    def test_trace_events(self):
        t = cubesim.trace_events(self.TRACE)
        df = t.to_pandas()
        self.assertEqual(t.meta["format"], "cubesim")
        self.assertEqual(list(df.columns), ["node", "strand", "step", "kind", "op", "peer", "amount", "tag", "id"])
        sends, recvs = df[df.op == "send"], df[df.op == "recv"]
        # A broadcast on 16 nodes: 15 messages of M elements, each sent once and received once.
        self.assertEqual((len(sends), len(recvs)), (15, 15))
        self.assertEqual(sends.amount.sum(), recvs.amount.sum())
        self.assertEqual(set(df.amount), {t.meta["header"]["params"]["M"]})


class Frames(unittest.TestCase):
    def test_columns(self):
        df = cubesim.run(QUICK, reproducible=True).to_pandas()
        self.assertEqual(len(df), 14)
        for c in ("machine_overrides.ports", "topology.dim", "nodes", "M", "B", "simulated_s", "simulated_ps",
                  "predicted_s", "predicted_ps", "ratio", "relation", "relation_holds", "cp_startups",
                  "cp_element_transfers", "cp_flops", "cp_copies", "pred_startups", "pred_element_transfers",
                  "terms_match", "messages", "packets", "events", "verified", "error"):
            self.assertIn(c, df.columns)
        self.assertTrue((df.simulated_ps == df.predicted_ps).all())
        self.assertTrue(df.verified.all())
        # The same numbers as runs.csv.
        import pandas
        with tempfile.TemporaryDirectory() as d:
            cli("run", QUICK, "--out", d, "--reproducible")
            csv = pandas.read_csv(os.path.join(d, "runs.csv"), float_precision="round_trip")
        for c in csv.columns:
            if c != "error":
                self.assertEqual(list(csv[c]), list(df[c]), c)

    def test_machines_algorithms_describe(self):
        names = [m["name"] for m in cubesim.machines()]
        self.assertEqual(names, [ln.split()[0] for ln in cli("list", "machines").stdout.splitlines()])
        algos = [a["name"] for a in cubesim.algorithms()]
        self.assertEqual(algos, [ln.split()[0] for ln in cli("list", "algorithms").stdout.splitlines()])
        self.assertEqual(cubesim.describe("broadcast.sbt"), cli("describe", "broadcast.sbt").stdout)
        with self.assertRaises(cubesim.InputError):
            cubesim.describe("broadcast.nope")


class Interrupt(unittest.TestCase):
    def test_ctrl_c_stops_a_sweep_with_the_points_that_finished(self):
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        start = time.monotonic()
        timer.start()
        try:
            with self.assertRaises(cubesim.Interrupted) as e:
                cubesim.run(slow_config(48), jobs=1, reproducible=True)
        finally:
            timer.cancel()  # no stray SIGINT in a later test when the run ended first
        took = time.monotonic() - start
        self.assertIsInstance(e.exception, KeyboardInterrupt)
        r = e.exception.report
        self.assertLess(took, 15, "stopped within the point under way")
        self.assertLess(len(r.runs), 48)
        self.assertEqual(r.exit_code, 130)
        self.assertEqual(r.json["partial"]["signal"], "SIGINT")
        self.assertIn("PARTIAL: stopped by SIGINT", r.text)
        # The finished points are those of an uninterrupted run.
        if r.runs:
            full = cubesim.run(slow_config(len(r.runs)), jobs=1, reproducible=True)
            self.assertEqual(r.runs, full.runs)
        # The module stays usable, and Python's own handler is in place again.
        self.assertEqual(cubesim.run(QUICK, dim=2, reproducible=True).exit_code, 0)
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)


class PlotInProcess(unittest.TestCase):
    """`cubesim plot`, `figures` and `claims` (app/plot/) run their configs through the module, not
    the binary: the same files as `cubesim run --out --reproducible`, and no process started."""

    def test_figures_run_configs_in_process(self):
        sys.path.insert(0, os.path.join(ROOT, "app", "plot"))
        import cubesim_plot

        def no_process(*args, **kwargs):
            raise AssertionError(f"a process was started: {args}")
        real = cubesim_plot.subprocess.run
        cubesim_plot.subprocess.run = no_process
        try:
            self.assertIsNotNone(cubesim_plot.cubesim_module(BIN))
            with tempfile.TemporaryDirectory() as d:
                report = cubesim_plot.run_config(BIN, os.path.join(ROOT, QUICK), d, "test")
                code, msg = cubesim_plot.run_cubesim(BIN, os.path.join(ROOT, "no-such.json"), os.path.join(d, "x"))
                cubesim_plot.subprocess.run = real
                cli("run", os.path.join(ROOT, QUICK), "--out", os.path.join(d, "cli"), "--reproducible")
                for f in ("report.json", "runs.csv"):
                    with open(os.path.join(os.path.dirname(report), f), "rb") as a, \
                            open(os.path.join(d, "cli", f), "rb") as b:
                        self.assertEqual(a.read(), b.read(), f)
                p = cli("run", os.path.join(ROOT, "no-such.json"), "--out", os.path.join(d, "y"), "--reproducible",
                        check=False)
                self.assertEqual((code, msg), (p.returncode, p.stderr.strip()))
        finally:
            cubesim_plot.subprocess.run = real


class Readme(unittest.TestCase):
    def test_the_readmes_python_example_runs(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            text = f.read()
        section = text[text.index("## Python"):]
        code = section[section.index("```python\n") + 10:section.index("\n```", section.index("```python"))]
        out = io.StringIO()
        with redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
        self.assertIn("simulated_s", out.getvalue())

    def test_the_python_blocks_of_docs_python_md_run(self):
        with open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8") as f:
            text = f.read()
        blocks = [b.split("\n```", 1)[0] for b in text.split("```python\n")[1:]]
        self.assertGreaterEqual(len(blocks), 2)
        out = io.StringIO()
        with redirect_stdout(out):
            for b in blocks:
                exec(compile(b, "docs/python.md", "exec"), {})
        self.assertIn("/params/M", out.getvalue())


if __name__ == "__main__":
    unittest.main(verbosity=2)

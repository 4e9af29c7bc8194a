#!/usr/bin/python3
"""Tests of `cubesim plot` and `cubesim figures` (docs/figures.md), run by ctest as plot.cli and
plot.figures: every shipped sweep config's report plots, every figure recipe runs, each image is
non-empty and was drawn from the expected series (the data beside the image is checked, not the
pixels), the committed figures/ are current, and bad input ends in one line and exit 2.

  CUBESIM_BIN=build/cubesim /usr/bin/python3 tests/test_plot.py [PlotCli|PlotSweeps|Figures]

PlotSweeps and Figures take CUBESIM_TEST_SHARD=I/N: only every N-th config or recipe from the I-th
(ctest runs them as plot.sweeps_I and plot.figures_I, each under a minute; docs/reliability.md).
"""
import contextlib
import io
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("CUBESIM_BIN", os.path.join(ROOT, "build", "cubesim"))
RECIPES = os.path.join(ROOT, "figures", "recipes")

# Sweeps that take minutes or near one (fig21, fig22: 20,480 runs, 60 s here on two cores; fig23:
# 165 s; fig26: 3,520 n-port runs on 1,024 nodes, about 17 min of CPU): the tests run them thinned to the first values of each
# numeric sweep key (every algorithm and N1 kept): four of eight for Figs. 21-22, two for Fig. 23,
# one for Fig. 26 (a 1,024-node map: one cell of 55 runs, 9 s here). Their committed figures are
# checked cell by cell on the cells the thinned grid has (test_committed_figures_are_current).
SLOW = {"configs/tr530/maps/fig21-map-2d.json": 4, "configs/tr530/maps/fig22-map-2d.json": 4,
        "configs/tr530/maps/fig23-map-2d.json": 2, "configs/tr530/maps/fig23-map-2d-tau1000.json": 2,
        "configs/tr530/maps/fig26-map-2d-nport.json": 1}
# Seconds each recipe takes alone here (two cores; `cubesim figures --only NAME`, thinned as
# above), to deal the recipes to the shards of plot.figures_I so that each stays under a minute
# (longest first, each to the least loaded shard). Others count 1.5 s.
RECIPE_SECONDS = {"tr530-fig13-map": 19, "tr530-fig20-map": 17, "tr530-fig25-map": 19, "tr530-fig26-map": 10,
                  "tr530-fig23-map": 8, "tr530-fig23-map-tau1000": 8,
                  "tr530-fig21-map": 8, "tr530-fig22-map": 8, "tr572-fig16-18-cm2": 5, "gao-theorems": 5,
                  "tr572-fig16-18": 6, "tr530-fig11-map": 3.6, "tr530-fig12-map": 3.6, "tr530-fig14-map": 3.7}
sys.path.insert(0, os.path.join(ROOT, "app", "plot"))
import cubesim_plot  # noqa: E402  (drawn in-process where the command line is not what is tested)


def shard():
    """(index, count) from CUBESIM_TEST_SHARD=I/N; (0, 1) when unset."""
    v = os.environ.get("CUBESIM_TEST_SHARD", "0/1")
    i, n = (int(x) for x in v.split("/"))
    assert 0 <= i < n, v
    return i, n


def dealt(recipes):
    """This shard's recipes: longest first (RECIPE_SECONDS), each to the least loaded shard."""
    i, n = shard()
    load_s, mine_ = [0.0] * n, []
    for rec in sorted(recipes, key=lambda x: (-RECIPE_SECONDS.get(x[1]["name"], 1.5), x[1]["name"])):
        k = min(range(n), key=lambda j: (load_s[j], j))
        load_s[k] += RECIPE_SECONDS.get(rec[1]["name"], 1.5)
        if k == i:
            mine_.append(rec)
    return sorted(mine_, key=lambda x: x[1]["name"])


def mine(items):
    i, n = shard()
    return [x for k, x in enumerate(items) if k % n == i]


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def save(obj, path):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def cubesim(*args, cwd=ROOT):
    return subprocess.run([BIN, *args], cwd=cwd, capture_output=True, text=True)


def sweep_configs():
    out = []
    for f in sorted(glob.glob(os.path.join(ROOT, "configs", "**", "*.json"), recursive=True)):
        c = load(f)
        if isinstance(c, dict) and c.get("schema") == "cubesim.config/1" and \
                any(len(v) > 1 for v in c.get("sweep", {}).values()):
            out.append((os.path.relpath(f, ROOT), c))
    return out


def thinned(config, tmp):
    """A copy of a slow config with each numeric sweep list cut to its first values (SLOW; two
    for the other maps)."""
    c = load(os.path.join(ROOT, config))
    for k, v in c["sweep"].items():
        if all(isinstance(x, (int, float)) for x in v) and k != "params.N1":
            c["sweep"][k] = v[:SLOW.get(config, 2)]
    path = os.path.join(tmp, os.path.basename(config))
    save(c, path)
    return path, c


def run_config(path, out, broken_ok=False):
    """Runs a config into `out`; `broken_ok`: exit 1 with a report written (a relation that does
    not hold, which a claims config may show on purpose: docs/claims.md) is data, not a failure."""
    p = cubesim("run", path, "--out", out, "--reproducible")
    ok = p.returncode == 0 or (broken_ok and p.returncode == 1 and os.path.isfile(os.path.join(out, "report.json")))
    assert ok, f"cubesim run {path}: {p.returncode} {p.stderr}"
    return os.path.join(out, "report.json")


def check_image(test, path):
    test.assertTrue(os.path.isfile(path), path)
    data = read_bytes(path)
    test.assertGreater(len(data), 2000, path)
    if path.endswith(".svg"):
        test.assertIn(b"<svg", data[:2000], path)
        test.assertIn(b"</svg>", data[-100:], path)
    elif path.endswith(".png"):
        test.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n", path)


class PlotSweeps(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cubesim-plot-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_every_shipped_sweep_config_plots(self):
        """The default plot of each sweep that no figure recipe runs (Figures checks the default
        plot of the others on the reports it made, so that no config runs twice)."""
        configs = sweep_configs()
        self.assertGreater(len(configs), 60)
        used = recipe_configs()
        for rel, c in mine([x for x in configs if x[0] not in SLOW and x[0] not in used]):
            with self.subTest(config=rel):
                path = rel
                if "/maps/" in rel:  # the maps are drawn whole by the figures below
                    path, c = thinned(rel, self.tmp)
                name = os.path.splitext(os.path.basename(rel))[0]
                out = os.path.join(self.tmp, name)
                run_config(path, out, broken_ok=True)
                check_default_plot(self, c, out)
                shutil.rmtree(out)


def check_default_plot(test, c, out):
    """The default plot of the sweep `c` whose report is out/report.json: x is the last numeric
    varying key, one series per combination of the other varying keys, each with a point per x
    value (counted from the config, not from the plotting code)."""
    svg, data = os.path.join(out, "plot.svg"), os.path.join(out, "plot.json")
    # In-process: one Python start a config would cost more than the drawing.
    # PlotCli below runs the command line itself.
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        rc = cubesim_plot.main(["plot", out, "--data", data])
    cubesim_plot.pyplot().close("all")  # in-process: the figures would pile up
    test.assertEqual(rc, 0)
    test.assertEqual(printed.getvalue().strip(), svg)
    check_image(test, svg)
    d = load(data)
    report = load(os.path.join(out, "report.json"))

    def values(k, v):
        # A preset selector ("presets:kind=formula,..."): the presets it named, as run.
        return sorted({r["point"][k] for r in report["runs"]}) if isinstance(v, str) else v

    varying = {k: values(k, v) for k, v in c["sweep"].items() if len(values(k, v)) > 1}
    numeric = [k for k, v in varying.items() if all(isinstance(x, (int, float)) for x in v)]
    x = (numeric or list(varying))[-1]
    test.assertEqual(d["x"], x)
    test.assertEqual(d["y"], ["simulated", "predicted"])
    want = 1
    for k, v in varying.items():
        if k != x:
            want *= len(v)
    test.assertEqual(len(d["series"]), want)
    test.assertEqual(sorted(d["series_keys"]), sorted(k for k in varying if k != x))
    for s in d["series"]:
        test.assertEqual(sorted(map(str, s["x"])), sorted(str(v).replace(" ", "") for v in varying[x]), s["label"])
        # A 0-cube (shift.gc at dim 0) takes no time.
        test.assertTrue(all(isinstance(v, (int, float)) and v >= 0 for v in s["y"]["simulated"]), s["label"])


def small_config(name, sweep, **change):
    """A small broadcast sweep (an SBT on a 3-cube of the iPSC, M = 1024): runs in milliseconds."""
    c = {"schema": "cubesim.config/1", "name": name, "machine": "ipsc-nx", "topology": {"kind": "hypercube", "dim": 3},
         "algorithm": "broadcast.sbt", "params": {"root": 0, "M": 1024}, "sweep": sweep, "verify": True}
    c.update(change)
    return c


class PlotCli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cubesim-plot-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def report(self, name, sweep, **change):
        """Runs small_config(name, sweep) and returns its --out folder."""
        cfg = os.path.join(self.tmp, name + ".json")
        save(small_config(name, sweep, **change), cfg)
        out = os.path.join(self.tmp, name)
        run_config(cfg, out)
        return out

    def plot(self, *args):
        """cubesim plot ARGS --data D in-process: (exit status, stderr, the data, the figure);
        the figure is left open for the test to look at (closed at the test's end)."""
        plt = cubesim_plot.pyplot()
        plt.close("all")
        self.addCleanup(plt.close, "all")
        data = os.path.join(self.tmp, "plot-data.json")
        if os.path.exists(data):
            os.remove(data)
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = cubesim_plot.main(["plot", *args, "--out", os.path.join(self.tmp, "plot.svg"), "--data", data])
        figs = plt.get_fignums()
        return rc, err.getvalue(), load(data) if rc == 0 else None, plt.figure(figs[-1]) if figs else None

    def test_reports_with_different_sweep_keys_plot_together(self):
        """Issue 33: two reports whose sweeps have different keys, or --series naming a key by its
        short name, ended in "TypeError: Object of type object is not JSON serializable"."""
        algs = self.report("algs", {"algorithm": ["broadcast.sbt", "broadcast.nesbt", "broadcast.gc"]})
        ports = self.report("ports", {"machine_overrides.ports": ["one", "all"], "topology.dim": [1, 2, 3]})
        sizes = self.report("sizes", {"params.M": [256, 1024, 4096]})
        for pair in ((algs, ports), (ports, sizes)):
            with self.subTest(pair=pair):
                p = cubesim("plot", *pair, "--out", os.path.join(self.tmp, "two.svg"),
                            "--data", os.path.join(self.tmp, "two.json"))
                self.assertEqual((p.returncode, p.stderr), (0, ""))
                d = load(os.path.join(self.tmp, "two.json"))
                # A series of the report without a key leaves that key out of its label.
                labels = [s["label"] for s in d["series"]]
                self.assertEqual(len(labels), len(set(labels)), labels)
                self.assertTrue(all("object" not in l for l in labels), labels)
        d = load(os.path.join(self.tmp, "two.json"))
        self.assertEqual(d["x"], "params.M")
        self.assertEqual(d["series"][-1]["label"], "dim=3, sizes")
        self.assertEqual(d["series"][-1]["keys"]["machine_overrides.ports"], None)
        self.assertEqual(d["series"][-1]["x"], [256, 1024, 4096])
        # --series by the legend's short name of a sweep key.
        p = cubesim("plot", ports, "--series", "ports", "--out", os.path.join(self.tmp, "p.svg"),
                    "--data", os.path.join(self.tmp, "p.json"))
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        self.assertEqual([s["label"] for s in load(os.path.join(self.tmp, "p.json"))["series"]], ["ports=all", "ports=one"])
        # A series key that no run has is bad input.
        p = cubesim("plot", ports, "--series", "nosuch", "--out", os.path.join(self.tmp, "n.svg"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.splitlines(), ['cubesim plot: no run has a value for series "nosuch" '
                                                 '(sweep keys: machine_overrides.ports, topology.dim)'])
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "n.svg")))

    def test_categories_are_points_not_a_trend(self):
        """Issue 33: algorithm names were joined by lines as if they were a trend. A categorical x
        is drawn as points (no line) at integer positions with the names as tick labels; several
        series sit side by side in each column."""
        algs = ["broadcast.sbt", "broadcast.nesbt", "broadcast.gc"]
        out = self.report("algs", {"algorithm": algs})
        rc, err, d, fig = self.plot(out)
        self.assertEqual((rc, err), (0, ""))
        ax = fig.axes[0]
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], algs)
        self.assertEqual(len(ax.lines), 2)  # simulated and predicted
        for line in ax.lines:
            self.assertEqual(line.get_linestyle(), "None")
            self.assertNotEqual(line.get_marker(), "None")
            self.assertEqual(list(line.get_xdata()), [0, 1, 2])
        self.assertEqual((d["x"], d["x_kind"]), ("algorithm", "category"))
        # Two series: side by side around each category's position, never on it together.
        two = self.report("algs2", {"machine_overrides.ports": ["one", "all"], "algorithm": algs[:2]})
        rc, err, d, fig = self.plot(two, "--x", "algorithm")
        self.assertEqual((rc, err, d["x_kind"]), (0, "", "category"))
        sim = [l for l in fig.axes[0].lines if l.get_label().endswith(": simulated")]
        self.assertEqual(len(sim), 2)
        a, b = (list(l.get_xdata()) for l in sim)
        for i in range(2):
            self.assertLess(a[i], b[i])
            self.assertAlmostEqual((a[i] + b[i]) / 2, i)
            self.assertLess(b[i] - a[i], 0.5)

    def test_time_strings_are_numbers_with_units(self):
        """Issue 33: time strings ("100us", "5ms") were spaced as categories. They are drawn at
        their values, in the unit that suits them, and are the default x before a category."""
        taus = ["100us", "500us", "1ms", "5ms"]
        out = self.report("tau", {"machine_overrides.tau": taus, "algorithm": ["broadcast.sbt", "broadcast.nesbt"]})
        rc, err, d, fig = self.plot(out)
        self.assertEqual((rc, err), (0, ""))
        ax = fig.axes[0]
        self.assertEqual(ax.get_xlabel(), "machine_overrides.tau (ms)")
        for line in ax.lines:
            self.assertEqual([round(v, 12) for v in line.get_xdata()], [0.1, 0.5, 1.0, 5.0])
            self.assertNotEqual(line.get_linestyle(), "None")  # a trend: joined
        self.assertEqual((d["x"], d["x_kind"], d["x_unit"]), ("machine_overrides.tau", "time", "ms"))
        self.assertEqual([s["label"] for s in d["series"]], ["broadcast.nesbt", "broadcast.sbt"])
        for s in d["series"]:
            self.assertEqual(s["x"], taus)
            self.assertEqual(s["x_s"], [1e-4, 5e-4, 1e-3, 5e-3])
        # The seconds are what fit sees, and what --where compares a number with.
        p = cubesim("fit", out, "--x", "machine_overrides.tau", "--y", "simulated", "--series", "algorithm", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([f["points"] for f in json.loads(p.stdout)["fits"]], [4, 4])
        rc, err, d, _ = self.plot(out, "--where", "machine_overrides.tau=0.001", "--x", "algorithm")
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual([s["x"] for s in d["series"]], [["broadcast.sbt", "broadcast.nesbt"]])
        self.assertEqual(cubesim_plot.parse_time("1.5 µs"), 1.5e-6)
        self.assertEqual(cubesim_plot.parse_time("2ps"), 2e-12)
        self.assertIsNone(cubesim_plot.parse_time("5 minutes"))

    def test_identical_series_stay_visible(self):
        """Issue 33: identical series hid each other (the last drawn covered the others). A series
        equal to an earlier one is drawn dashed over it, says so in the legend ("(= ...)") and in
        the data (same_as); a point where an earlier series has one gets a wider hollow ring."""
        sweep = {"topology.dim": [1, 2, 3]}
        a, b = self.report("first", sweep), self.report("second", sweep)
        rc, err, d, fig = self.plot(a, b, "--y", "simulated")
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual([s["label"] for s in d["series"]], ["first", "second"])
        ax = fig.axes[0]
        self.assertEqual([t.get_text() for t in ax.get_legend().get_texts()], ["first", "second (= first)"])
        self.assertNotIn("same_as", d["series"][0])
        self.assertEqual(d["series"][1]["same_as"], "first")
        one, two = (l for l in ax.lines if not l.get_label().startswith("_"))
        self.assertEqual(one.get_linestyle(), "-")
        self.assertNotEqual(two.get_linestyle(), "-")  # dashed: the first shows in its gaps
        rings = [l for l in ax.lines if l.get_label().startswith("_")]
        self.assertEqual(len(rings), 1)
        self.assertEqual(rings[0].get_color(), two.get_color())
        self.assertEqual(rings[0].get_markerfacecolor(), "none")
        self.assertGreater(rings[0].get_markersize(), one.get_markersize())
        self.assertEqual(list(rings[0].get_xdata()), [1, 2, 3])
        # Series that meet at some points only: rings there, no "(= ...)".
        ports = self.report("ports", {"machine_overrides.ports": ["one", "all"], "topology.dim": [1, 2, 3]})
        rc, err, d, fig = self.plot(ports, "--y", "simulated")
        self.assertEqual((rc, err), (0, ""))
        self.assertTrue(all("same_as" not in s for s in d["series"]))
        rings = [l for l in fig.axes[0].lines if l.get_label().startswith("_")]
        self.assertEqual([list(r.get_xdata()) for r in rings], [[1]])  # one and all ports agree on a 1-cube

    def test_the_legend_is_readable(self):
        """Issue 33: the legend was 7 pt, and 6 pt past ten entries. It is 8 pt or more: inside
        for a few entries, outside the axes to the right for more."""
        few = self.report("few", {"machine_overrides.ports": ["one", "all"], "topology.dim": [1, 2]})
        many = self.report("many", {"params.M": [256, 512, 1024, 2048, 4096, 8192], "topology.dim": [1, 2]})
        for out, entries, outside in ((few, 4, False), (many, 12, True)):
            with self.subTest(entries=entries):
                rc, err, d, fig = self.plot(out, "--x", "topology.dim")
                self.assertEqual((rc, err), (0, ""))
                legend = fig.axes[0].get_legend()
                self.assertEqual(len(legend.get_texts()), entries)
                self.assertTrue(all(t.get_fontsize() >= 8 for t in legend.get_texts()),
                                [t.get_fontsize() for t in legend.get_texts()])
                fig.canvas.draw()
                box = legend.get_window_extent()
                axes = fig.axes[0].get_window_extent()
                self.assertEqual(box.x0 >= axes.x1, outside, (box, axes))

    def test_a_bug_is_one_line_and_exit_1(self):
        """An unexpected exception (a bug, not the input) is one line on stderr and exit 1."""
        out = self.report("sizes", {"params.M": [256, 1024]})

        def broken(*args, **kwargs):
            raise ValueError("boom\nsecond line")

        real = cubesim_plot.draw_lines
        cubesim_plot.draw_lines = broken
        try:
            rc, err, _, _ = self.plot(out)
        finally:
            cubesim_plot.draw_lines = real
        self.assertEqual(rc, 1)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("cubesim plot: internal error: ValueError: boom"), err)
        self.assertNotIn("Traceback", err)

    def test_data_file_takes_numpy_and_missing_values(self):
        import numpy
        path = os.path.join(self.tmp, "d.json")
        cubesim_plot.write_json(path, {"a": numpy.float64(1.5), "b": numpy.int64(3), "c": [numpy.arange(2)],
                                       "d": cubesim_plot.MISSING})
        self.assertEqual(load(path), {"a": 1.5, "b": 3, "c": [[0, 1]], "d": None})

    def test_options_select_axes_series_and_runs(self):
        out = os.path.join(self.tmp, "q")
        run_config("configs/quickstart.json", out)
        data = os.path.join(self.tmp, "q.json")
        png = os.path.join(self.tmp, "q.png")
        p = cubesim("plot", os.path.join(out, "report.json"), "--x", "nodes", "--y", "ratio,startups",
                    "--where", "machine_overrides.ports=one", "--out", png, "--data", data)
        self.assertEqual(p.returncode, 0, p.stderr)
        check_image(self, png)
        d = load(data)
        self.assertEqual(d["x"], "nodes")
        self.assertEqual(d["series_keys"], [])  # the ports key is fixed by --where
        self.assertEqual(len(d["series"]), 1)
        s = d["series"][0]
        self.assertEqual(s["x"], [2, 4, 8, 16, 32, 64, 128])
        self.assertEqual(s["y"]["ratio"], [1.0] * 7)  # the quickstart is exact
        self.assertEqual(s["y"]["startups"], [60 * n for n in range(1, 8)])  # one-port SBT: n P start-ups
        # An expression over keys, and two reports side by side (a series per report).
        out2 = os.path.join(self.tmp, "f3")
        os.makedirs(out2)
        a = run_config("configs/tr530/fig3-sbt.json", os.path.join(out2, "a"))
        b = run_config("configs/tr530/fig3-nesbt.json", os.path.join(out2, "b"))
        p = cubesim("plot", a, b, "--x", "log2(nodes)", "--y", "simulated.time_s * 1000", "--out",
                    os.path.join(self.tmp, "f3.pdf"), "--data", data)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(read_bytes(os.path.join(self.tmp, "f3.pdf"))[:5], b"%PDF-")
        d = load(data)
        self.assertEqual([s["label"] for s in d["series"]], ["tr530-fig3-nesbt", "tr530-fig3-sbt"])
        self.assertEqual(d["series"][1]["x"], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
        self.assertAlmostEqual(d["series"][1]["y"]["simulated.time_s * 1000"][0], 151.44)

    def test_the_same_report_gives_the_same_bytes(self):
        out = os.path.join(self.tmp, "q")
        run_config("configs/quickstart.json", out)
        images = []
        for i in range(2):
            f = os.path.join(self.tmp, f"q{i}.svg")
            self.assertEqual(cubesim("plot", out, "--out", f).returncode, 0)
            images.append(read_bytes(f))
        self.assertEqual(images[0], images[1])

    def test_bad_input_is_one_line_and_exit_2(self):
        out = os.path.join(self.tmp, "q")
        run_config("configs/quickstart.json", out)
        notrep = os.path.join(self.tmp, "config.json")
        shutil.copy(os.path.join(ROOT, "configs", "quickstart.json"), notrep)
        broken = os.path.join(self.tmp, "broken.json")
        with open(broken, "w", encoding="utf-8") as f:
            f.write('{"schema": "cubesim.report/1", "runs": [')
        cases = [
            (["plot", os.path.join(self.tmp, "missing.json")], "missing.json: cannot read the report"),
            (["plot", notrep], "config.json: /schema: not a cubesim report"),
            (["plot", broken], "broken.json: line 1, column"),
            (["plot", out, "--x", "params.nosuch"], 'no run has a value for x = "params.nosuch"'),
            (["plot", out, "--y", "machine.name"], 'no run has a number for y = "machine.name"'),
            (["plot", out, "--x", "__import__('os')"], "--x: "),
            (["plot", out, "--where", "ports"], '--where: "ports": want KEY=VALUE'),
            # Issue 33: a --where that kept no run said "nothing varies between the runs".
            (["plot", out, "--where", "topology.dim=9"],
             "--where: no run has topology.dim=9 (values present: 1, 2, 3, 4, 5, 6, 7)"),
            (["plot", out, "--where", "machine_overrides.ports=two"],
             "--where: no run has machine_overrides.ports=two (values present: one, all)"),
            (["plot", out, "--where", "ports=one", "--where", "params.M=1"], "--where: no run has params.M=1 (values present: 15360)"),
            (["fit", out, "--x", "nodes", "--y", "simulated", "--where", "ports=two"],
             "--where: no run has ports=two (values present: one, all)"),
            (["plot", out, "--out", os.path.join(self.tmp, "x.gif")], "the plot is written as .svg, .png or .pdf"),
            (["plot", out, "--out", os.path.join(self.tmp, "no", "dir.svg")], "no folder"),
            (["plot", out, "--bogus"], "cubesim plot: unrecognized arguments: --bogus"),
            (["plot"], "cubesim plot: the following arguments are required"),
            (["figures", "--only", "nosuch", "--out", self.tmp], '--only: no recipe "nosuch"'),
            (["figures", "--report", "x", "--out", self.tmp], '--report: "x": want CONFIG=REPORT'),
            # Issue 39: a pair no recipe uses is refused, not ignored (and its config rerun).
            (["figures", "--report", f"configs/none.json={out}", "--out", self.tmp],
             '--report: "configs/none.json" is the config of no recipe'),
            (["figures", "--out", broken], "--out: \"" + broken + "\" exists and is not a folder"),
            (["figures", "--out", os.path.join(broken, "sub")], "--out: "),
        ]
        for args, want in cases:
            with self.subTest(args=args):
                before = sorted(os.listdir(self.tmp))
                p = cubesim(*args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(p.stdout, "")
                lines = p.stderr.splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn(want, lines[0])
                self.assertEqual(sorted(os.listdir(self.tmp)), before)

    def test_bad_recipes(self):
        base = load(os.path.join(RECIPES, "tr530-fig3.json"))
        cfg = os.path.join(ROOT, "configs", "tr530", "fig3-sbt.json")
        out = os.path.join(self.tmp, "out")
        os.makedirs(out)

        def recipe(**change):
            r = json.loads(json.dumps(base))
            r["configs"] = [cfg]
            for k, v in change.items():
                if v is None:
                    r.pop(k)
                else:
                    r[k] = v
            return r

        panel = base["panels"][0]
        cases = [
            (recipe(bogus=1), "/bogus: unknown key"),
            (recipe(schema="x"), '/schema: want "cubesim.figure/1"'),
            (recipe(name=None), "/name: missing"),
            (recipe(configs=[]), "/configs: a non-empty list"),
            (recipe(configs=["nosuch.json"]), "/configs: no config nosuch.json"),
            (recipe(panels=[dict(panel, kind="pie")]), '/panels/0/kind: "line" or "map", not "pie"'),
            (recipe(panels=[dict(panel, colour=1)]), "/panels/0/colour: unknown key"),
            (recipe(panels=[dict(panel, x="params.nosuch")]), 'no run has a value for x = "params.nosuch"'),
            (recipe(panels=[dict(panel, y="open('x')")]), "/panels/0/y: "),
            (recipe(panels=[dict(panel, paper=[{"label": "a"}])]), "/panels/0/paper/0: a paper curve is"),
            (recipe(panels=[dict(panel, paper=[{"label": "a", "expr": "x +"}])]), "/panels/0/paper/0/expr"),
            (recipe(panels=[dict(panel, kind="map", facet="params.Q", y="params.R")]), "a map needs a compare sweep"),
            (recipe(panels=[dict(panel, kind="map", y="simulated,predicted")]), "/panels/0/y: "),
            (recipe(panels=[dict(panel, where=["machine"])]), "/panels/0/where: must be an object"),
            (recipe(panels=[dict(panel, logy="yes")]), '/panels/0/logy: "auto", "on" or "off"'),
            (recipe(panels=[dict(panel, paper=[{"label": "a", "expr": "x", "colour": "red"}])]),
             "/panels/0/paper/0/colour: unknown key"),
            (recipe(size=[0, 3]), "/size: want [width, height]"),
        ]
        for i, (r, want) in enumerate(cases):
            with self.subTest(case=i, want=want):
                path = os.path.join(self.tmp, f"r{i}.json")
                save(r, path)
                p = cubesim("figures", "--recipes", path, "--out", out, "--work", os.path.join(self.tmp, "work"))
                self.assertEqual(p.returncode, 2, p.stderr)
                lines = p.stderr.splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn(want, lines[0])
                self.assertEqual(os.listdir(out), [])


class MapVolumes(unittest.TestCase):
    """Selection-map volumes with ties shared (issue 32): a point where k algorithms tie counts
    1/k to each, from the simulated and from the predicted times alike."""

    @staticmethod
    def mk(algorithm, sim, pred=None, n1=1):
        return {"algorithm": algorithm, "point": {"algorithm": algorithm, "params.N1": n1},
                "simulated": {"time_ps": sim}, "predicted": {"time_ps": sim if pred is None else pred}}

    def test_fastest_names_every_algorithm_that_ties_once(self):
        r = self.mk
        runs = [r("a1", 7), r("a2", 5, 6), r("a4", 5, 5), r("a2", 5, 5, n1=2), r("a3", 9)]
        self.assertEqual(cubesim_plot.fastest(runs), ["a2", "a4"])
        self.assertEqual(cubesim_plot.fastest(runs, "predicted"), ["a4", "a2"])
        self.assertEqual(cubesim_plot.fastest([r("a1", 3), r("a2", 4)]), ["a1"])

    def test_a_tie_counts_one_kth_to_each(self):
        cells = {(1, 1, 1): ["a1"], (1, 1, 2): ["a2", "a4"], (2, 1, 1): ["a4"], (2, 2, 2): ["a1", "a2", "a4"]}
        v = cubesim_plot.map_volumes(cells)
        self.assertAlmostEqual(v["a1"], (1 + 1 / 3) / 4, places=15)
        self.assertAlmostEqual(v["a2"], (1 / 2 + 1 / 3) / 4, places=15)
        self.assertAlmostEqual(v["a4"], (1 / 2 + 1 + 1 / 3) / 4, places=15)
        self.assertAlmostEqual(sum(v.values()), 1.0, places=15)
        self.assertEqual(cubesim_plot.map_volumes({}), {})

    def test_committed_maps_give_volumes_that_sum_to_one(self):
        for f in sorted(glob.glob(os.path.join(ROOT, "figures", "tr530-fig*-map*.data.json"))):
            panel = load(f)["panels"][0]
            with self.subTest(figure=os.path.basename(f)):
                for source in ("simulated", "predicted"):
                    self.assertAlmostEqual(sum(panel["volumes"][source].values()), 1.0, places=12)
                tied = [c for c in panel["cells"] if "tied" in c]
                self.assertEqual(len(tied), panel["volumes"]["ties"])
                self.assertTrue(all(len(c["tied"]) > 1 and c["winner"] in c["tied"] for c in tied))


# The series each figure must show (per panel), as the recipes and configs define them; the
# paper's curves by label. A map's series are its winners, checked against the config's algorithms.
EXPECTED = {
    "tr572-fig16-18-cm2": [(["cm-router, dim=12", "cm-router, dim=16", "cm2, dim=12", "cm2, dim=16"], [])],
    "tr530-fig3": [(["broadcast.nesbt", "broadcast.sbt"], []),
                   (["all runs"], ["speed-up = log N (Fig. 3, dashed)"])],
    "tr530-fig9": [(["matmul1d.a1.gcea", "matmul1d.a1.sbt"], [])] * 3
                  + [(["ipsc-nx", "ipsc-os1", "ipsc-os2"], ["GCEA 10 % higher", "GCEA 100 % higher"])],
    "tr530-fig10": [(["all runs"], [])] * 2 + [(["all runs"], ["2^k PQ/N x 4 bytes", "the 1 KB internal packet"])],
    "tr530-fig19": [(["P/R=2", "P/R=8", "P/R=32"], ["measured minima at N1/N2 = P/R"])],
    "tr572-fig10-12": [(["B_copy=0", "B_copy=16", "B_copy=64", "B_copy=256"], [])] * 3,
    "tr572-fig13": [(["dim=2", "dim=6"], [])] * 2,
    "tr572-fig14": [(["P=16", "P=64", "P=256", "P=1024"], [])] * 2,
    "tr572-fig15": [(["transpose.gray_combined, P=64", "transpose.gray_combined, P=256",
                      "transpose.gray_naive, P=64", "transpose.gray_naive, P=256"], [])] * 1 +
                   [(["transpose.gray_combined, P=64", "transpose.gray_combined, P=256",
                      "transpose.gray_naive, P=64", "transpose.gray_naive, P=256"],
                     ["combined: n steps", "naive: 2n - 2 steps"])],
    "tr572-fig16-18": [(["dim=12", "dim=14", "dim=16"], [])],
    "tr572-fig19": [(["transpose.exchange", "transpose.spt_steps"], [])] * 3,
    "foh-fig5": [(["all runs"], ["123 µs M / 16 (eq. (16) over 16 nodes)"])],
    "tr572-fig16": [(["cm-router", "cm2"], [])],
    "foh-figA1-2": [([f"broadcast.{a}, dim={r}" for a in ("split", "tree") for r in (2, 3, 4)],
                     ["(A.3), r = 2", "(A.3), r = 3", "(A.3), r = 4"]),
                    ([f"broadcast.{a}, dim={r}" for a in ("split", "tree") for r in (2, 3, 4)], [])],
    "foh-fig4": [(["caltech-mark2", "caltech-mark2-measured"], ["eq. (16): 119 µs + 123 µs M"])],
    "foh-figB1": [(["caltech-mark2", "caltech-mark2-measured"],
                   ["t_comm ~ 70 µs, several packets (App. B)", "t_loop, scalar end (B.1): 57 µs",
                    "t_loop, vector end (B.1): 34 µs"])],
    "foh-fig6-8": [(["dim=4", "dim=6"], ["FOH eq. (17): slope 1.39"]),
                   (["dim=4", "dim=6"], ["FOH Fig. 8: slope 3.61 (16 nodes)", "FOH Fig. 8: slope 7.49 (64 nodes)"])],
    "foh-fig6-8-measured": [(["dim=4", "dim=6"], ["FOH eq. (17): slope 1.39 (fitted)"]),
                            (["dim=4", "dim=6"], ["FOH Fig. 8: slope 3.61 (16 nodes)", "FOH Fig. 8: slope 7.49 (64 nodes)"])],
    "foh-fig9-10": [(["matmul.foh", "matmul.foh_ring"], [])],
    "gao-theorems": [(["matmul.gao1d", "matmul.gao2d", "matmul.gao3d"], ["p", "sqrt(p)", "p^(1/3)"]),
                     (["matmul.gao1d", "matmul.gao2d", "matmul.gao3d"], ["n^2", "n^2 / sqrt(p)", "n^2 / p^(2/3)"])],
}


def recipe_configs():
    """Every config a figure recipe runs."""
    return {c for _, _, configs in recipe_list() for c in configs}


def recipe_list():
    out = []
    for f in sorted(os.listdir(RECIPES)):
        if f.endswith(".json"):
            r = load(os.path.join(RECIPES, f))
            configs = [os.path.relpath(os.path.normpath(os.path.join(RECIPES, c)), ROOT) for c in r["configs"]]
            out.append((os.path.join(RECIPES, f), r, configs))
    return out


class Figures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="cubesim-figures-test-")
        cls.out = os.path.join(cls.tmp, "new", "figures")  # `figures --out` creates it (issue 33 point 8)
        cls.reports = {}
        cls.recipes = dealt(recipe_list())
        for _, _, configs in cls.recipes:
            for c in configs:
                if c in SLOW and c not in cls.reports:
                    path, _ = thinned(c, cls.tmp)
                    cls.reports[c] = run_config(path, os.path.join(cls.tmp, "thin-" + os.path.basename(c)))
        args = ["figures", "--out", cls.out, "--work", os.path.join(cls.tmp, "work")]
        for _, r, _ in cls.recipes:
            args += ["--only", r["name"]]
        for c, rep in cls.reports.items():
            args += ["--report", f"{c}={rep}"]
        cls.result = cubesim(*args)
        cls.names = {r["name"] for _, r, _ in cls.recipes}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_every_recipe_draws_its_figure(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.assertGreaterEqual(len(recipe_list()), 19)
        recipes = self.recipes
        self.assertEqual(len(self.result.stdout.split()), len(recipes))
        for path, r, configs in recipes:
            with self.subTest(recipe=r["name"]):
                check_image(self, os.path.join(self.out, r["name"] + ".svg"))
                d = load(os.path.join(self.out, r["name"] + ".data.json"))
                self.assertEqual(d["name"], r["name"])
                self.assertEqual(len(d["panels"]), len(r["panels"]))
                if r["panels"][0]["kind"] == "map":
                    cfg = load(os.path.join(ROOT, configs[0]))
                    panel = d["panels"][0]
                    winner = r["panels"][0].get("winner")
                    if winner is None:  # a selection map: the fastest algorithm
                        choices = set(cfg["sweep"]["algorithm"])
                    else:  # a compared parameter's best value (TR-530 Figs 18, 24: "best.params.N1")
                        choices = {str(v) for v in cfg["sweep"][winner.removeprefix("best.")]}
                    self.assertTrue({s["label"] for s in panel["series"]} <= choices)
                    grid = 1  # a cell for every point of the sweep's keys that are not compared
                    for k, values in cfg["sweep"].items():
                        if k not in cfg["compare"]:
                            grid *= len(values) if configs[0] not in SLOW else SLOW[configs[0]]
                    self.assertEqual(len(panel["cells"]), grid)
                    self.assertEqual(sum(s["cells"] for s in panel["series"]), grid)
                    if "2d" in configs[0]:  # each cell names the winner's N1, a power of two up to N
                        self.assertTrue(all(c["text"] is not None for c in panel["cells"]))
                    continue
                self.assertIn(r["name"], EXPECTED, "add the recipe's series to EXPECTED")
                for i, (series, paper) in enumerate(EXPECTED[r["name"]]):
                    panel = d["panels"][i]
                    self.assertEqual([s["label"] for s in panel["series"]], series, f"panel {i}")
                    self.assertEqual([c["label"] for c in panel["paper"]], paper, f"panel {i}")
                    for s in panel["series"]:
                        self.assertGreaterEqual(len(s["x"]), 2, s["label"])
                        for y, vals in s["y"].items():
                            self.assertTrue(all(isinstance(v, (int, float)) for v in vals), f"{s['label']} {y}")

    def test_default_plots_of_the_sweeps_it_ran(self):
        """PlotSweeps' check, for the sweeps the recipes of this shard ran (on their reports)."""
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        sweeps = dict(sweep_configs())
        done = set()
        for _, _, configs in self.recipes:
            for rel in configs:
                if rel not in sweeps or rel in done:
                    continue
                done.add(rel)
                with self.subTest(config=rel):
                    if rel in self.reports:  # thinned (SLOW)
                        _, c = thinned(rel, self.tmp)
                        out = os.path.dirname(self.reports[rel])
                    else:
                        c = sweeps[rel]
                        out = os.path.join(self.tmp, "work", os.path.splitext(os.path.basename(rel))[0])
                    check_default_plot(self, c, out)

    def test_tr530_fig3_speedup_stays_below_log_n(self):
        if "tr530-fig3" not in self.names:
            self.skipTest("tr530-fig3 is drawn by another shard")
        d = load(os.path.join(self.out, "tr530-fig3.data.json"))
        s = d["panels"][1]["series"][0]
        for n, sim, pred in zip(s["x"], s["y"]["simulated"], s["y"]["predicted"]):
            # n P / (P + n), P = 60 packets, from n = 2; on a 1-cube both trees are the one edge.
            self.assertAlmostEqual(sim, 1.0 if n == 1 else n * 60 / (60 + n), places=9)
            if n > 1:  # Table 1 is exact; nESBT-b(1,1) is an upper bound on the 1-cube (one packet more)
                self.assertAlmostEqual(sim, pred, places=12)
            else:
                self.assertAlmostEqual(pred, 60 / 61, places=12)
            self.assertLessEqual(sim, n)

    def test_tr530_fig9_right_panel_arithmetic_ratio_is_one(self):
        """The right panel: GCEA's critical-path arithmetic over SBT's is 1 on every preset (the
        model charges flops only; the paper measures 1.1-2, claim tr530-s5.1-fig9-gcea-arith-10-100pct)."""
        if "tr530-fig9" not in self.names:
            self.skipTest("tr530-fig9 is drawn by another shard")
        d = load(os.path.join(self.out, "tr530-fig9.data.json"))
        series = d["panels"][3]["series"]
        self.assertEqual(len(series), 3)
        for s in series:
            vals = next(iter(s["y"].values()))
            self.assertEqual(len(vals), 5, s["label"])
            for v in vals:
                self.assertAlmostEqual(v, 1.0, places=12, msg=s["label"])

    def test_foh_figA1_2_tree_and_split_ring_in_t_comm(self):
        """FOH App. A on the figure's data, in t_comm (70 µs a word, p = M/2 packets): the split ring
        on all links is (A.3), 2^r + 2p - 2; the tree is 2 r p on either port model; the split
        ring wins from p = 3 on all links."""
        if "foh-figA1-2" not in self.names:
            self.skipTest("foh-figA1-2 is drawn by another shard")
        d = load(os.path.join(self.out, "foh-figA1-2.data.json"))
        for k, panel in enumerate(d["panels"]):
            got = {s["label"]: dict(zip(s["x"], next(iter(s["y"].values())))) for s in panel["series"]}
            for r in (2, 3, 4):
                split, tree = got[f"broadcast.split, dim={r}"], got[f"broadcast.tree, dim={r}"]
                self.assertEqual(sorted(split), sorted(tree))
                for m, t in tree.items():
                    self.assertAlmostEqual(t, r * m, places=6)
                    if k == 0:  # every link at once
                        self.assertAlmostEqual(split[m], 2**r + m - 2, places=6)
                        if m >= 6:
                            self.assertLess(split[m], t, f"r={r} M={m}")

    def test_tr572_fig16_one_element_grows_with_the_machine(self):
        """Fig. 16's shape on both CM models: the time grows with the machine, stays above the
        lower bound, and the CM-2 (16 processors sharing a router chip) is the slower."""
        if "tr572-fig16" not in self.names:
            self.skipTest("tr572-fig16 is drawn by another shard")
        d = load(os.path.join(self.out, "tr572-fig16.data.json"))
        configs = [c for _, r, c in self.recipes if r["name"] == "tr572-fig16"][0]
        self.assertEqual(configs, [f"configs/tr572/fig16/one-element-{n}.json" for n in (8, 10, 12, 14, 16)])
        got = {s["label"]: s for s in d["panels"][0]["series"]}
        for label, s in got.items():
            self.assertEqual(s["x"], [2**n for n in (8, 10, 12, 14, 16)], label)
            sim, pred = s["y"]["simulated"], s["y"]["predicted"]
            self.assertEqual(sim, sorted(sim), label)
            self.assertTrue(all(a >= b for a, b in zip(sim, pred)), label)
        for a, b in zip(got["cm2"]["y"]["simulated"], got["cm-router"]["y"]["simulated"]):
            self.assertGreater(a, b)

    def test_tr572_fig19_the_exchange_moves_half_the_elements(self):
        """TR-572 §9 on the figure's own configs: the 1-D exchange moves exactly half the
        elements of the 2-D SPT steps, run for run."""
        if "tr572-fig19" not in self.names:
            self.skipTest("tr572-fig19 is drawn by another shard")
        runs = {}
        for c in ("configs/tr572/fig19-1d-vs-2d.json", "configs/tr572/fig19-2d-spt-steps.json"):
            rep = load(run_config(c, os.path.join(self.tmp, "half-" + os.path.basename(c))))
            runs[c] = {json.dumps(r["point"], sort_keys=True): r["simulated"]["critical_path"]["element_transfers"]
                       for r in rep["runs"]}
        one, two = runs.values()
        self.assertEqual(sorted(one), sorted(two))
        for point, e in one.items():
            self.assertEqual(2 * e, two[point], point)

    def test_committed_figures_are_current(self):
        """figures/NAME.data.json is what `cubesim figures` draws today; a thinned map (SLOW) is
        compared on the cells its thinned grid has, each cell's winner, text and margin equal to
        the committed one's. Regenerate with `./build/cubesim figures`."""
        for path, r, configs in self.recipes:
            with self.subTest(recipe=r["name"]):
                committed = os.path.join(ROOT, "figures", r["name"] + ".data.json")
                self.assertTrue(os.path.isfile(committed), committed + " missing: run ./build/cubesim figures")
                self.assertTrue(os.path.isfile(os.path.join(ROOT, "figures", r["name"] + ".svg")))
                old, new = load(committed), load(os.path.join(self.out, r["name"] + ".data.json"))
                if not any(c in SLOW for c in configs):
                    self.assertEqual(old, new, "stale: run ./build/cubesim figures")
                    continue
                self.assertEqual(len(old["panels"]), len(new["panels"]))
                for po, pn in zip(old["panels"], new["panels"]):
                    self.assertEqual(po["kind"], "map")
                    key = lambda c: (c.get("facet"), c["x"], c["y"])  # noqa: E731
                    whole = {key(c): c for c in po["cells"]}
                    self.assertGreater(len(pn["cells"]), 0)
                    for c in pn["cells"]:
                        self.assertIn(key(c), whole, "a cell the committed map lacks: stale, run ./build/cubesim figures")
                        self.assertEqual(c, whole[key(c)], "stale: run ./build/cubesim figures")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]], verbosity=2)

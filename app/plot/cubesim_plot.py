#!/usr/bin/python3
"""cubesim plot and cubesim figures: plots of cubesim reports, drawn with matplotlib.

  cubesim plot REPORT.json|DIR [REPORT ...] [--x KEY] [--y simulated,predicted|ratio|KEY]
               [--series KEY[,KEY]] [--where KEY=VALUE] [--out FILE.svg|.png|.pdf] [--data FILE.json]
  cubesim figures [--only NAME] [--out DIR] [--recipes DIR] [--report CONFIG=REPORT] [--list]

`cubesim` runs this file with Debian's /usr/bin/python3 (python3-matplotlib); docs/figures.md
describes both commands and the recipe format (cubesim.figure/1). Simulated values come only
from reports that `cubesim run` wrote; nothing here computes a simulated time. The paper's
curves and claims that a recipe draws beside them are marked as the paper's.

Bad input (a missing or malformed report or recipe, a key that no run has) ends in one line
`FILE: PLACE: what is wrong` on stderr and exit 2, and nothing is written.
"""
import argparse
import ast
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT_SCHEMA = "cubesim.report/1"
FIGURE_SCHEMA = "cubesim.figure/1"


class ArgParser(argparse.ArgumentParser):
    """argparse with its errors on one line (exit 2), like every other cubesim error, and its help
    in the layout of the other commands' (CLI11's): the description, "Usage:", "Positionals:",
    "Options:", each entry's help from column 30 (one help style for every cubesim command)."""

    def error(self, message):
        raise InputError(self.prog, message)

    def format_help(self):
        width = 30
        fmt = self._get_formatter()

        def entry(left, text):
            text = " ".join((text or "").split())
            if len(left) + 2 >= width:
                return f"  {left}\n" + (f"{' ' * width}{text}\n" if text else "")
            return f"  {left:<{width - 2}}{text}\n".rstrip() + "\n"

        def metavar(a):
            if a.metavar is not None:
                return a.metavar if isinstance(a.metavar, str) else " ".join(a.metavar)
            if a.choices is not None:
                return "{" + ",".join(str(c) for c in a.choices) + "}"
            return a.dest.upper() if a.option_strings else a.dest

        shown = [a for a in self._actions if a.help != argparse.SUPPRESS]
        pos = [a for a in shown if not a.option_strings]
        opts = [a for a in shown if a.option_strings]
        many = ("+", "*", argparse.REMAINDER)
        out = (" ".join(self.description.split()) + "\n") if self.description else ""
        out += f"Usage: {self.prog} [OPTIONS]" + "".join(
            f" {metavar(a)}" + (" ..." if a.nargs in many else "") for a in pos) + "\n"
        if pos:
            out += "\nPositionals:\n"
            for a in pos:
                req = " REQUIRED" if a.nargs not in ("?", "*") else ""
                out += entry(metavar(a) + (" ..." if a.nargs in many else "") + req, fmt._expand_help(a) if a.help else "")
        if opts:
            out += "\nOptions:\n"
            for a in opts:
                left = ",".join(a.option_strings) + ("" if a.nargs == 0 else " " + metavar(a))
                text = ("Print this help message and exit" if "-h" in a.option_strings
                        else fmt._expand_help(a) if a.help else "")
                out += entry(left, text)
        if self.epilog:
            out += "\n" + self.epilog.strip() + "\n"
        return out


class InputError(Exception):
    """Bad input: printed as one line, exit 2."""

    def __init__(self, where, what):
        super().__init__(f"{where}: {what}")


def one_line(text):
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


# --- reports -------------------------------------------------------------------------------------

def load_json(path, what):
    if os.path.isdir(path):
        path = os.path.join(path, "report.json")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise InputError(path, f"cannot read {what}: {e.strerror}")
    try:
        return path, json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(path, f"line {e.lineno}, column {e.colno}: not JSON: {e.msg}")
    except ValueError as e:
        raise InputError(path, f"not JSON: {e}")


def load_report(path):
    path, rep = load_json(path, "the report")
    if not isinstance(rep, dict) or rep.get("schema") != REPORT_SCHEMA:
        raise InputError(path, f"/schema: not a cubesim report (want \"{REPORT_SCHEMA}\"; "
                               "cubesim run CONFIG --out DIR writes DIR/report.json)")
    runs = rep.get("runs")
    if not isinstance(runs, list) or not runs or not all(isinstance(r, dict) for r in runs):
        raise InputError(path, "/runs: a report needs a non-empty list of runs")
    return path, rep


MISSING = object()
# --y shortcuts: the report fields most plots want.
Y_ALIASES = {
    "simulated": "simulated.time_s",
    "predicted": "predicted.time_s",
    "startups": "simulated.critical_path.startups",
    "element_transfers": "simulated.critical_path.element_transfers",
    "events": "simulated.events",
    "events_per_s": "simulated.events_per_s",
}


def lookup(rep, run, key):
    """The value of a dotted key for one run: a sweep key of its point, a resolved parameter
    (params.X), a field of the run (simulated.time_s, nodes), or of the report (machine.tau_s);
    "algorithm", "machine" and "report" name the run's algorithm, machine and report."""
    key = Y_ALIASES.get(key, key)
    point = run.get("point") or {}
    if key in point:
        return point[key]
    if key == "algorithm":
        return run.get("algorithm", rep.get("algorithm"))
    if key == "machine":
        return (rep.get("machine") or {}).get("name", MISSING)
    if key == "report":
        return rep.get("name", MISSING)
    if key == "topology.dim" and isinstance(run.get("nodes"), int) and run["nodes"] > 0 \
            and str(run.get("topology", "")).startswith("hypercube"):
        return run["nodes"].bit_length() - 1
    for root in (run, rep):
        v = walk(root, key.split("."))
        if v is not MISSING:
            return v
    # A short name for a sweep key, as the legend writes it: "ports" for machine_overrides.ports,
    # "dim" for topology.dim, when exactly one sweep key of the run ends with it.
    hits = [k for k in point if k.endswith("." + key)]
    if len(hits) == 1:
        return point[hits[0]]
    return MISSING


def walk(v, parts):
    """Follows parts into nested objects; a key may itself hold dots ("best" -> "params.N1")."""
    if not parts:
        return v
    if not isinstance(v, dict):
        return MISSING
    for n in range(len(parts), 0, -1):
        k = ".".join(parts[:n])
        if k in v:
            got = walk(v[k], parts[n:])
            if got is not MISSING:
                return got
    return MISSING


class Expr:
    """A key, or arithmetic over keys and numbers: "params.P / nodes", "simulated.time_s * 1e3",
    "log2(nodes)". Parsed with Python's ast and evaluated by walking it (no eval)."""
    FUNCS = {"log2": math.log2, "log10": math.log10, "log": math.log, "sqrt": math.sqrt,
             "ceil": math.ceil, "floor": math.floor, "abs": abs, "min": min, "max": max}

    def __init__(self, text, where):
        self.text, self.where = text, where
        try:
            self.tree = ast.parse(text, mode="eval").body
        except SyntaxError:
            raise InputError(where, f"\"{text}\" is neither a key nor an expression over keys")
        self.keys = []
        self._check(self.tree)
        self.simple = isinstance(self.tree, (ast.Name, ast.Attribute))

    def _dotted(self, node):
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            inner = self._dotted(node.value)
            return None if inner is None else inner + "." + node.attr
        return None

    def _check(self, node):
        if isinstance(node, (ast.Name, ast.Attribute)):
            d = self._dotted(node)
            if d is None:
                raise InputError(self.where, f"\"{self.text}\": only keys, numbers and + - * / ** and "
                                             f"{', '.join(sorted(self.FUNCS))}")
            self.keys.append(Y_ALIASES.get(d, d))
            return
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
            self._check(node.left)
            self._check(node.right)
            return
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            self._check(node.operand)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.FUNCS \
                and not node.keywords:
            for a in node.args:
                self._check(a)
            return
        raise InputError(self.where, f"\"{self.text}\": only keys, numbers and + - * / ** and "
                                     f"{', '.join(sorted(self.FUNCS))}")

    def __call__(self, rep, run, env=None):
        return self._eval(self.tree, rep, run, env or {})

    def _eval(self, node, rep, run, env):
        if isinstance(node, (ast.Name, ast.Attribute)):
            d = self._dotted(node)
            if d in env:
                return env[d]
            return lookup(rep, run, d)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand, rep, run, env)
            return v if v is MISSING else (-v if isinstance(node.op, ast.USub) else v)
        if isinstance(node, ast.Call):
            args = [self._eval(a, rep, run, env) for a in node.args]
            if any(a is MISSING or not isinstance(a, (int, float)) for a in args):
                return MISSING
            try:
                return self.FUNCS[node.func.id](*args)
            except (ValueError, ZeroDivisionError):
                return MISSING
        a, b = self._eval(node.left, rep, run, env), self._eval(node.right, rep, run, env)
        if a is MISSING or b is MISSING or not all(isinstance(v, (int, float)) for v in (a, b)):
            return MISSING
        try:
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.Div):
                return a / b
            return a ** b
        except (ZeroDivisionError, OverflowError):
            return MISSING


def label_of(key):
    return key.rsplit(".", 1)[-1] if key.count(".") == 1 and not key.startswith(("simulated", "predicted")) else key


def value_text(v):
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v)


# Times as the configs write them (DESIGN.md: "Times are numbers in seconds or strings with a
# unit (ps ns us ms s)"); µs and μs are read as us.
TIME_UNITS = {"ps": 1e12, "ns": 1e9, "us": 1e6, "µs": 1e6, "μs": 1e6, "ms": 1e3, "s": 1.0}  # per second
TIME_RE = None


def parse_time(v):
    """Seconds for a time string ("100us", "1.5 ms"), else None."""
    global TIME_RE
    if not isinstance(v, str):
        return None
    if TIME_RE is None:
        import re
        TIME_RE = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(ps|ns|us|µs|μs|ms|s)\s*")
    m = TIME_RE.fullmatch(v)
    return float(m.group(1)) / TIME_UNITS[m.group(2)] if m else None  # "100us": 1e-4 exactly, not 1e-4 - 1 ulp


def seconds(v):
    """A number as it is, a time string in seconds, else None."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v
    return parse_time(v)


def series_label(keys, values, names=None):
    """The legend's text for one series; a key the series' runs do not have (None: a report
    without that sweep key, beside one with it) is left out."""
    parts = []
    for k, v in zip(keys, values):
        if v is None:
            continue
        name = (names or {}).get(k, label_of(k))
        parts.append(value_text(v) if k in ("algorithm", "report", "machine") else f"{name}={value_text(v)}")
    return ", ".join(parts) if parts else "all runs"


def varying_keys(reports, where=()):
    """Sweep keys whose value differs between the runs --where keeps, in sweep order (first key
    outermost)."""
    order, seen = [], {}
    for _, rep in reports:
        for run in rep["runs"]:
            if not matches(rep, run, where):
                continue
            for k, v in (run.get("point") or {}).items():
                if k not in seen:
                    seen[k] = set()
                    order.append(k)
                seen[k].add(json.dumps(v, sort_keys=True))
    return [k for k in order if len(seen[k]) > 1]


def parse_where(items, where):
    """--where KEY=VALUE (repeatable): keep runs whose key has that value (numbers compared as numbers)."""
    out = []
    for item in items or []:
        if "=" not in item:
            raise InputError(where, f"\"{item}\": want KEY=VALUE")
        k, v = item.split("=", 1)
        try:
            val = json.loads(v)
        except ValueError:
            val = v
        out.append((k.strip(), val))
    return out


def same_value(got, want):
    """A run's value equals a --where value: as JSON values, or as times ("1ms" == 0.001)."""
    if got is not MISSING and got == want:
        return True
    a, b = seconds(got), seconds(want)
    return a is not None and b is not None and (isinstance(got, str) or isinstance(want, str)) \
        and math.isclose(a, b, rel_tol=1e-9)


def matches(rep, run, conditions):
    for k, want in conditions:
        got = lookup(rep, run, k)
        if isinstance(want, list):
            if not any(same_value(got, w) for w in want):
                return False
        elif not same_value(got, want):
            return False
    return True


def check_where(reports, where, place="--where"):
    """--where that keeps no run is bad input: which condition matched nothing, and the values
    that the runs do have."""
    runs = [(rep, run) for _, rep in reports for run in rep["runs"]]
    for k, want in where:
        if any(matches(rep, run, [(k, want)]) for rep, run in runs):
            continue
        present = []
        for rep, run in runs:
            v = lookup(rep, run, k)
            v = None if v is MISSING else value_text(hashable(v))
            if v is not None and v not in present:
                present.append(v)
        wanted = "|".join(value_text(w) for w in want) if isinstance(want, list) else value_text(want)
        if present:
            shown = ", ".join(present[:20]) + (f", ... ({len(present)} in all)" if len(present) > 20 else "")
            raise InputError(place, f"no run has {k}={wanted} (values present: {shown})")
        keys = sorted({p for _, run in runs for p in (run.get("point") or {})})
        raise InputError(place, f"no run has {k}={wanted}: no run has a value for {k}"
                                + (f" (sweep keys: {', '.join(keys)})" if keys else ""))
    if where and not any(matches(rep, run, where) for rep, run in runs):
        raise InputError(place, "no run has " + " and ".join(f"{k}={value_text(v)}" for k, v in where)
                                + " together (each alone matches some runs)")


def hashable(v):
    """A sweep value as a series key or x value: lists and objects (params.perm) by their JSON;
    no value (MISSING: a report that lacks the key, beside one that has it) is None."""
    if v is MISSING:
        return None
    return json.dumps(v, separators=(",", ":"), default=str) if isinstance(v, (list, dict)) else v


class Table:
    """The points a plot is drawn from: per series, x against one or more y quantities."""

    def __init__(self, reports, x, ys, series, where, place):
        self.x, self.ys, self.series_keys = x, ys, [k.text for k in series]
        self.series = {}  # tuple of series values -> {"x": [], ys...}
        used = 0
        for path, rep in reports:
            for run in rep["runs"]:
                if not matches(rep, run, where):
                    continue
                xv = x(rep, run)
                if xv is MISSING:
                    continue
                xv = hashable(xv)
                key = tuple(hashable(k(rep, run)) for k in series)
                s = self.series.setdefault(key, {"x": [], **{y.text: [] for y in ys}})
                s["x"].append(xv)
                for y in ys:
                    yv = y(rep, run)
                    yv = parse_time(yv) if isinstance(yv, str) else yv  # "5ms" as 0.005
                    s[y.text].append(None if yv is MISSING or not isinstance(yv, (int, float)) else yv)
                used += 1
        if used == 0:
            keys = sorted({k for _, rep in reports for run in rep["runs"] for k in (run.get("point") or {})})
            raise InputError(place, f"no run has a value for x = \"{x.text}\""
                                    + (f" (sweep keys: {', '.join(keys)})" if keys else "")
                                    + (" among the runs --where keeps" if where else ""))
        for y in ys:
            if all(v is None for s in self.series.values() for v in s[y.text]):
                raise InputError(place, f"no run has a number for y = \"{y.text}\"")
        for i, k in enumerate(self.series_keys):
            if all(key[i] is None for key in self.series):
                keys = sorted({k for _, rep in reports for run in rep["runs"] for k in (run.get("point") or {})})
                raise InputError(place, f"no run has a value for series \"{k}\""
                                        + (f" (sweep keys: {', '.join(keys)})" if keys else ""))

    def ordered(self):
        def sort_key(item):
            return tuple((0, v, "") if isinstance(v, (int, float)) and not isinstance(v, bool)
                         else (1, 0, json.dumps(v, default=str)) for v in item[0])
        return sorted(self.series.items(), key=sort_key)


# --- drawing -------------------------------------------------------------------------------------

def pyplot():
    try:
        import matplotlib
    except ImportError:
        raise InputError("cubesim plot", "matplotlib is not installed: apt-get install python3-matplotlib "
                                         "(scripts/deps.sh installs it)")
    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.hashsalt": "cubesim", "svg.fonttype": "none",
                                "figure.dpi": 100, "savefig.dpi": 100, "font.size": 9})
    import matplotlib.pyplot as plt
    return plt


def numeric(values):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def wants_log(values, setting):
    if setting in ("on", "log"):
        return True
    if setting in ("off", "linear"):
        return False
    vals = [v for v in values if v is not None]
    return bool(vals) and numeric(vals) and min(vals) > 0 and max(vals) / min(vals) >= 50


LINE_STYLES = ["-", "--", ":", "-."]
LEGEND_PT = 8  # cubesim plot's legend: the smallest text that reads at 100 dpi
# The papers' figures keep 7 pt: their panels are small, laid out by the recipes, and at 8 pt
# "best" can find no place that hides no data (TR-572 Fig. 15's steps panel).
FIGURE_LEGEND_PT = 7
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]


def number_like(values):
    """Numbers, or times: numbers and time strings with at least one string ("100us", "5ms")."""
    return bool(values) and all(seconds(v) is not None for v in values) and not numeric(values)


def time_unit(values_s):
    """The unit of a time axis: the largest of s, ms, µs, ns, ps in which the largest value is
    at least 1."""
    top = max((abs(v) for v in values_s), default=0.0)
    for name, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if top >= scale:
            return name, scale
    return "ps", 1e-12


def x_kind(values):
    """How an x axis is drawn: "number", "time" (time strings, drawn as numbers in a unit) or
    "category" (anything else: algorithm names, port models, lists), drawn as points."""
    if numeric(values):
        return "number"
    return "time" if number_like(values) else "category"


def draw_lines(ax, table, logx="auto", logy="auto", xlabel=None, ylabel=None, y_labels=None, series_names=None):
    """One colour per series, one line style per y quantity (simulated solid, predicted dashed).

    The x axis is one of three kinds (x_kind): numbers, drawn as lines; time strings ("100us",
    "5ms"), drawn as lines against their value in the unit that suits them (the axis label names
    it); categories (algorithm names, port models), drawn as points without lines, one column
    per category in the order met, the series side by side in it. Returns the series as drawn
    and {"x_kind", and "x_unit" for a time axis}."""
    data = []
    ordered = table.ordered()
    all_x = [v for _, s in ordered for v in s["x"]]
    kind = x_kind(all_x)
    info = {"x_kind": kind}
    cats, scale = [], 1.0
    if kind == "category":
        for v in all_x:
            if v not in cats:
                cats.append(v)
    elif kind == "time":
        unit, scale = time_unit([seconds(v) for v in all_x])
        info["x_unit"] = unit
    n = len(ordered)
    width = min(0.6 / n, 0.2) if kind == "category" and n > 1 else 0.0

    def position(v, i):
        if kind == "category":
            return cats.index(v) + (i - (n - 1) / 2) * width
        if kind == "time":
            return seconds(v) / scale
        return v

    all_y = [v for _, s in table.series.items() for y in table.ys for v in s[y.text] if v is not None]
    # Series that coincide must not hide each other. A series equal to an earlier one, point for
    # point in every quantity, is drawn dashed over it (the earlier colour shows in the gaps)
    # and its legend entry says "(= EARLIER)"; a point that coincides with an earlier series'
    # point has its marker drawn as a larger hollow ring around that one. On a categorical axis
    # the series already stand side by side.
    def close(v):
        return float(f"{v:.12g}")

    order = {"category": lambda v: cats.index(v), "time": seconds, "number": lambda v: v}[kind]
    signatures, seen = {}, [dict() for _ in table.ys]
    for i, (key, s) in enumerate(ordered):
        colour = f"C{i % 10}"
        pts = sorted(range(len(s["x"])), key=lambda j: order(s["x"][j]))
        xs = [s["x"][j] for j in pts]
        entry = {"label": series_label(table.series_keys, key, series_names), "keys": dict(zip(table.series_keys, key)),
                 "x": xs, "y": {}}
        if kind == "time":
            entry["x_s"] = [seconds(v) for v in xs]
        for y in table.ys:
            entry["y"][y.text] = [s[y.text][j] for j in pts]
        sig = tuple(tuple((order(a), close(b)) for a, b in zip(xs, entry["y"][y.text]) if b is not None) for y in table.ys)
        same_as = signatures.get(sig) if any(sig) else None
        signatures.setdefault(sig, entry["label"])
        if same_as is not None:
            entry["same_as"] = same_as
        for k, y in enumerate(table.ys):
            xy = [(position(a, i), b) for a, b in zip(xs, entry["y"][y.text]) if b is not None]
            if not xy:
                continue
            name = (y_labels or {}).get(y.text, y.text)
            label = entry["label"] if len(table.ys) == 1 else f"{entry['label']}: {name}"
            if same_as is not None:
                label += f" (= {same_as})"
            # The first quantity solid with the series' marker; the others (the prediction) dashed
            # with crosses, so that a prediction that equals the simulation still shows. Categories
            # are not a trend: points only.
            style = "none" if kind == "category" else LINE_STYLES[k % len(LINE_STYLES)]
            if same_as is not None and kind != "category":
                style = (0, (3, 3)) if k == 0 else (0, (1, 2))
            marker = MARKERS[i % len(MARKERS)] if k == 0 else "x"
            size = (4 if k == 0 else 6) + (2 if kind == "category" else 0)
            # covered[j]: how many earlier series have a point where this one's j-th point is.
            covered = [seen[k].get((close(a), close(b)), 0) for a, b in xy]
            for a, b in xy:
                seen[k][(close(a), close(b))] = seen[k].get((close(a), close(b)), 0) + 1
            ax.plot([p[0] for p in xy], [p[1] for p in xy], linestyle=style, color=colour, marker=marker,
                    markersize=size, linewidth=1.4 if k == 0 else 1.0, label=label,
                    markevery=[c == 0 for c in covered] if any(covered) else None)
            for c in sorted(set(covered) - {0}):  # rings, wider for each series already there
                ring = [p for p, n in zip(xy, covered) if n == c]
                ax.plot([p[0] for p in ring], [p[1] for p in ring], linestyle="none", color=colour,
                        marker=marker if k == 0 else "+", markersize=size * (1 + 0.55 * c) if k == 0 else size * (1 + 0.4 * c),
                        markerfacecolor="none", markeredgewidth=1.1, label="_nolegend_")
        data.append(entry)
    xs_drawn = [position(v, 0) for v in all_x] if kind != "category" else []
    if kind == "category":
        texts = [value_text(c) for c in cats]
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels(texts, rotation=20 if sum(len(t) for t in texts) > 60 else 0,
                           ha="right" if sum(len(t) for t in texts) > 60 else "center")
        ax.set_xlim(-0.5, len(cats) - 0.5)
        ax.grid(False, axis="x")
    elif wants_log(xs_drawn, logx):
        ax.set_xscale("log", base=2 if all(v > 0 and math.log2(v).is_integer() for v in xs_drawn) else 10)
        if kind == "time":  # 0.1, 1, 10 ms rather than 10^-1
            from matplotlib.ticker import FuncFormatter
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    elif all(float(v).is_integer() for v in xs_drawn):
        from matplotlib.ticker import MaxNLocator
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if wants_log(all_y, logy):
        ax.set_yscale("log")
    label = xlabel or table.x.text
    ax.set_xlabel(f"{label} ({info['x_unit']})" if kind == "time" else label)
    times = all(Y_ALIASES.get(y.text, y.text) in ("simulated.time_s", "predicted.time_s") for y in table.ys)
    ax.set_ylabel(ylabel or ("time (s)" if times else ", ".join((y_labels or {}).get(y.text, y.text) for y in table.ys)))
    ax.grid(True, which="both", axis="y" if kind == "category" else "both", linewidth=0.3, alpha=0.5)
    return data, info


def save(fig, out, place):
    ext = os.path.splitext(out)[1].lower()
    if ext not in (".svg", ".png", ".pdf"):
        raise InputError(place, f"\"{out}\": the plot is written as .svg, .png or .pdf")
    d = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(d):
        raise InputError(place, f"\"{out}\": no folder {d}")
    tmp = out + f".tmp{os.getpid()}"
    meta = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}, "png": {}}[ext[1:]]
    fig.savefig(tmp, format=ext[1:], metadata=meta, bbox_inches="tight")
    os.replace(tmp, out)


def plain(v):
    """What json.dump cannot write, as JSON: numpy scalars and arrays by their values, no value
    (MISSING) as null, sets as sorted lists, anything else by its text."""
    if v is MISSING:
        return None
    if hasattr(v, "tolist"):  # numpy scalars and arrays
        return v.tolist()
    if isinstance(v, (set, frozenset, tuple)):
        return sorted(v, key=lambda e: json.dumps(e, default=str)) if not isinstance(v, tuple) else list(v)
    return str(v)


def write_json(path, obj):
    tmp = path + f".tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, sort_keys=False, default=plain)
        f.write("\n")
    os.replace(tmp, path)


# --- cubesim plot --------------------------------------------------------------------------------

def cmd_plot(argv):
    ap = ArgParser(prog="cubesim plot", description="a line plot of any cubesim sweep report")
    ap.add_argument("reports", nargs="+", metavar="REPORT", help="report.json, or a folder holding one")
    ap.add_argument("--x", help="x axis: a sweep key or an expression over keys (default: the last varying sweep key)")
    ap.add_argument("--y", default="simulated,predicted",
                    help="comma-separated: simulated, predicted, ratio, startups, element_transfers, events, "
                         "events_per_s, or any dotted key or expression (default simulated,predicted)")
    ap.add_argument("--series", help="comma-separated keys, one line per value (default: the other varying keys)")
    ap.add_argument("--where", action="append", metavar="KEY=VALUE", help="keep only runs with this value (repeatable)")
    ap.add_argument("--out", help="FILE.svg, .png or .pdf (default: plot.svg beside the first report)")
    ap.add_argument("--data", help="also write the plotted points as JSON here")
    ap.add_argument("--title")
    ap.add_argument("--logx", choices=["auto", "on", "off"], default="auto")
    ap.add_argument("--logy", choices=["auto", "on", "off"], default="auto")
    a = ap.parse_args(argv)
    reports = [load_report(p) for p in a.reports]
    where = parse_where(a.where, "--where")
    check_where(reports, where)
    varying = varying_keys(reports, where)
    if len({rep.get("name") for _, rep in reports}) > 1:
        varying.append("report")
    if a.x is None:
        if not varying:
            raise InputError(reports[0][0], "nothing varies between the runs: a plot needs a sweep (or --x KEY)")
        # Numbers and time strings make an x axis before categories do.
        num = [k for k in varying if k != "report" and x_kind([lookup(r, run, k) for _, r in reports for run in r["runs"]
                                                               if lookup(r, run, k) is not MISSING]) != "category"]
        a.x = (num or varying)[-1]
    x = Expr(a.x, "--x")
    ys = [Expr(t.strip(), "--y") for t in a.y.split(",") if t.strip()]
    if not ys:
        raise InputError("--y", "names nothing to plot")
    if a.series is None:
        # The other varying keys, less those that x determines (topology.dim when x is nodes).
        def determined(k):
            seen = {}
            for _, rep in reports:
                for run in rep["runs"]:
                    if matches(rep, run, where):
                        v = json.dumps(lookup(rep, run, k), default=str)
                        if seen.setdefault(json.dumps(x(rep, run), default=str), v) != v:
                            return False
            return True
        series = [Expr(k, "--series") for k in varying if k not in x.keys and not determined(k)]
    else:
        series = [Expr(s.strip(), "--series") for s in a.series.split(",") if s.strip()]
    table = Table(reports, x, ys, series, where, "cubesim plot")
    out = a.out or os.path.join(os.path.dirname(os.path.abspath(reports[0][0])), "plot.svg")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    data, info = draw_lines(ax, table, a.logx, a.logy)
    names = sorted({rep.get("name", "?") for _, rep in reports})
    ax.set_title(a.title or ", ".join(names), fontsize=9)
    # The legend at 8 pt (LEGEND_PT): inside where it hides least for a few entries, outside to the
    # right for more (the image widens to hold it), in columns of at most 30.
    entries = len(ax.get_legend_handles_labels()[0])
    if entries <= 6:
        ax.legend(fontsize=LEGEND_PT, loc="best")
    elif entries <= 90:
        ax.legend(fontsize=LEGEND_PT, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
                  ncol=(entries + 29) // 30)
    else:  # too many to name: the data file (--data) lists them
        ax.text(0.99, 0.01, f"{len(data)} series (listed by --data)", transform=ax.transAxes, ha="right",
                va="bottom", fontsize=LEGEND_PT)
    save(fig, out, "--out")
    if a.data:
        write_json(a.data, {"schema": "cubesim.plot-data/1", "reports": [p for p, _ in reports], "x": x.text,
                            **info, "y": [y.text for y in ys], "series_keys": table.series_keys, "series": data})
    print(out)
    return 0


# --- figure recipes ------------------------------------------------------------------------------

def need(obj, key, kind, path, ptr="", default=MISSING):
    """obj[key], which must be of `kind`; errors name the file and the JSON pointer ptr/key."""
    if key not in obj:
        if default is not MISSING:
            return default
        raise InputError(path, f"{ptr}/{key}: missing")
    v = obj[key]
    if (kind is not None and not isinstance(v, kind)) or (isinstance(v, bool) and kind is not bool):
        names = {str: "a string", list: "a list", dict: "an object", bool: "true or false"}
        raise InputError(path, f"{ptr}/{key}: must be {names.get(kind, kind)}")
    return v


RECIPE_KEYS = {"schema", "name", "title", "paper", "note", "configs", "panels", "size"}
PANEL_KEYS = {"kind", "title", "x", "y", "y_labels", "series", "series_labels", "where", "ratio", "xlabel", "ylabel", "logx",
              "logy", "paper", "facet", "facet_label", "winner", "cell_text"}


PAPER_KEYS = {"label", "expr", "points", "vline", "style", "color", "marker", "smooth"}


def load_recipe(path):
    path, r = load_json(path, "the recipe")
    if not isinstance(r, dict):
        raise InputError(path, "a recipe is a JSON object")
    for k in r:
        if k not in RECIPE_KEYS:
            raise InputError(path, f"/{k}: unknown key (known: {', '.join(sorted(RECIPE_KEYS))})")
    if r.get("schema") != FIGURE_SCHEMA:
        raise InputError(path, f"/schema: want \"{FIGURE_SCHEMA}\"")
    size = r.get("size", [1, 1])
    if not isinstance(size, list) or len(size) != 2 or not numeric(size) or min(size) <= 0:
        raise InputError(path, "/size: want [width, height] in inches")
    need(r, "name", str, path)
    need(r, "title", str, path)
    configs = need(r, "configs", list, path)
    if not configs or not all(isinstance(c, str) for c in configs):
        raise InputError(path, "/configs: a non-empty list of config paths (relative to the recipe)")
    panels = need(r, "panels", list, path)
    if not panels:
        raise InputError(path, "/panels: at least one panel")
    for i, p in enumerate(panels):
        ptr = f"/panels/{i}"
        where = f"{path}: {ptr}"
        if not isinstance(p, dict):
            raise InputError(where, "a panel is an object")
        for k in p:
            if k not in PANEL_KEYS:
                raise InputError(path, f"{ptr}/{k}: unknown key (known: {', '.join(sorted(PANEL_KEYS))})")
        kind = need(p, "kind", str, path, ptr)
        if kind not in ("line", "map"):
            raise InputError(path, f"{ptr}/kind: \"line\" or \"map\", not \"{kind}\"")
        need(p, "x", str, path, ptr)
        need(p, "y", str, path, ptr)
        # The optional keys' types, so that a wrong one is refused here rather than crashing later.
        for k, types, what in (("title", (str,), "a string"), ("xlabel", (str,), "a string"),
                               ("ylabel", (str,), "a string"), ("where", (dict,), "an object"),
                               ("ratio", (dict,), "an object"), ("y_labels", (dict,), "an object"),
                               ("series_labels", (dict,), "an object"), ("series", (str, list), "a key or a list of keys"),
                               ("paper", (list,), "a list")):
            if k in p and not isinstance(p[k], types):
                raise InputError(path, f"{ptr}/{k}: must be {what}")
        if isinstance(p.get("series"), list) and not all(isinstance(k, str) for k in p["series"]):
            raise InputError(path, f"{ptr}/series: must be a key or a list of keys")
        for k in ("logx", "logy"):
            if k in p and p[k] not in ("auto", "on", "off"):
                raise InputError(path, f"{ptr}/{k}: \"auto\", \"on\" or \"off\"")
        if kind == "map":
            need(p, "facet", str, path, ptr, None)
            for k in ("x", "y", "facet", "winner", "cell_text"):
                if isinstance(p.get(k), str):
                    Expr(p[k], f"{where}/{k}")
        for j, c in enumerate(p.get("paper", [])):
            w = f"{where}/paper/{j}"
            if isinstance(c, dict) and set(c) - PAPER_KEYS:
                raise InputError(path, f"{ptr}/paper/{j}/{sorted(set(c) - PAPER_KEYS)[0]}: unknown key (known: {', '.join(sorted(PAPER_KEYS))})")
            if not isinstance(c, dict) or not isinstance(c.get("label"), str) \
                    or sum(k in c for k in ("expr", "points", "vline")) != 1:
                raise InputError(w, "a paper curve is {\"label\", and one of \"expr\" (in x), \"points\" "
                                    "{\"x\": [], \"y\": []} or \"vline\": [x values]}")
            if "vline" in c:
                if not isinstance(c["vline"], list) or not c["vline"] or not numeric(c["vline"]):
                    raise InputError(w + "/vline", "want a list of numbers")
            elif "expr" in c:
                Expr(c["expr"], w + "/expr")
            else:
                pts = c["points"]
                if not isinstance(pts, dict) or not isinstance(pts.get("x"), list) or not isinstance(pts.get("y"), list) \
                        or len(pts["x"]) != len(pts["y"]) or not numeric(pts["x"] + pts["y"]):
                    raise InputError(w + "/points", "want {\"x\": [numbers], \"y\": [numbers]} of one length")
    return path, r


_MODULE = {}


def cubesim_module(cubesim):
    """The Python module (docs/python.md) of the build that made the binary `cubesim`
    (BUILD/python/cubesim), or None where that build has none (then the binary runs as a
    process). Its log is off: a run's messages reach the caller as they did from the process's
    captured stderr, through the exception or the report."""
    if cubesim not in _MODULE:
        _MODULE[cubesim] = None
        folder = os.path.join(os.path.dirname(os.path.abspath(cubesim)), "python")
        if os.environ.get("CUBESIM_IN_PROCESS", "1") != "0" and os.path.isfile(os.path.join(folder, "cubesim", "__init__.py")):
            import importlib.util
            spec = importlib.util.spec_from_file_location("cubesim", os.path.join(folder, "cubesim", "__init__.py"),
                                                          submodule_search_locations=[os.path.join(folder, "cubesim")])
            try:
                mod = sys.modules.get("cubesim")
                if mod is None or os.path.dirname(os.path.abspath(mod.__file__)) != os.path.join(folder, "cubesim"):
                    mod = importlib.util.module_from_spec(spec)
                    sys.modules["cubesim"] = mod
                    spec.loader.exec_module(mod)
                mod.set_log_level("off")
                _MODULE[cubesim] = mod
            except ImportError:
                sys.modules.pop("cubesim", None)
    return _MODULE[cubesim]


def run_cubesim(cubesim, config, out, jobs=None):
    """`cubesim run CONFIG --out OUT --reproducible [--jobs N]`, in-process through the module when
    the build has one, else as a process: (exit status, the last line the process would have
    written on stderr, or "" when it ran in-process and succeeded). The files written are the
    same byte for byte either way (tests/test_python.py)."""
    mod = cubesim_module(cubesim)
    if mod is None:
        args = [cubesim, "run", config, "--out", out, "--reproducible"] + (["--jobs", str(jobs)] if jobs else [])
        p = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        return p.returncode, (p.stderr.strip().splitlines() or ["(no message)"])[-1]
    try:
        r = mod.run(config, out=out, reproducible=True, jobs=jobs or 0, progress=False)
    except mod.InputError as e:
        return 2, str(e)
    except mod.Interrupted:
        raise KeyboardInterrupt from None
    except RuntimeError as e:
        return 1, f"cubesim: error: {e}"
    errors = [f"{r.json.get('name')}: {run['error']}" for run in r.runs if run.get("error")]
    return r.exit_code, (errors or ["(no message)"])[-1]


def run_config(cubesim, config, work, place):
    name = os.path.splitext(os.path.basename(config))[0]
    out = os.path.join(work, name)
    if os.path.exists(os.path.join(out, "report.json")):
        return os.path.join(out, "report.json")
    code, msg = run_cubesim(cubesim, config, out)
    if code != 0:
        raise RuntimeError(f"{place}: cubesim run {config} failed (exit {code}): {msg}")
    return os.path.join(out, "report.json")


def draw_paper(ax, panel, xs_all, where):
    drawn = []
    for j, c in enumerate(panel.get("paper", [])):
        if "vline" in c:
            for k, v in enumerate(c["vline"]):
                ax.axvline(v, linestyle=c.get("style", ":"), color=c.get("color", "black"), linewidth=1.0,
                           label=f"paper: {c['label']}" if k == 0 else None)
            drawn.append({"label": c["label"], "vline": c["vline"]})
            continue
        if "points" in c:
            px, py = c["points"]["x"], c["points"]["y"]
        else:
            e = Expr(c["expr"], f"{where}/paper/{j}/expr")
            lo, hi = min(xs_all), max(xs_all)
            px = sorted(set(xs_all) | {lo + (hi - lo) * k / 64 for k in range(65)}) if c.get("smooth", True) else sorted(set(xs_all))
            py = [e({}, {}, {"x": v}) for v in px]
            keep = [(a, b) for a, b in zip(px, py) if b is not MISSING]
            px, py = [a for a, _ in keep], [b for _, b in keep]
        ax.plot(px, py, c.get("style", "--"), color=c.get("color", "black"), linewidth=1.0,
                marker=c.get("marker"), markersize=4, label=f"paper: {c['label']}")
        drawn.append({"label": c["label"], "x": px, "y": py})
    return drawn


def ratio_table(table, spec, where):
    """y = value(of) / value(to), runs paired by x and the other series keys: a speed-up."""
    of, to = spec.get("of"), spec.get("to")
    if not isinstance(of, dict) or not isinstance(to, dict):
        raise InputError(where + "/ratio", "want {\"of\": {KEY: VALUE}, \"to\": {KEY: VALUE}}")
    ys = [y.text for y in table.ys]
    pick = lambda want: {k: s for k, s in table.series.items()
                         if all(dict(zip(table.series_keys, k)).get(kk) == vv for kk, vv in want.items())}
    num, den = pick(of), pick(to)
    if not num or not den:
        raise InputError(where + "/ratio", f"no series matches {json.dumps(of if not num else to)}")
    rest = [i for i, k in enumerate(table.series_keys) if k not in of]
    out = {}
    for nk, ns in num.items():
        for dk, ds in den.items():
            if [nk[i] for i in rest] != [dk[i] for i in rest]:
                continue
            key = tuple(nk[i] for i in rest)
            s = out.setdefault(key, {"x": [], **{y: [] for y in ys}})
            dmaps = {y: {x: v for x, v in zip(ds["x"], ds[y])} for y in ys}
            for j, x in enumerate(ns["x"]):
                if x not in dmaps[ys[0]]:
                    continue
                s["x"].append(x)
                for y in ys:
                    num_v, den_v = ns[y][j], dmaps[y].get(x)
                    s[y].append(num_v / den_v if num_v is not None and den_v else None)
    table.series = out
    table.series_keys = [table.series_keys[i] for i in rest]
    return table


def draw_line_panel(ax, panel, reports, where):
    x = Expr(panel["x"], where + "/x")
    ys = [Expr(t.strip(), where + "/y") for t in panel["y"].split(",")]
    series = panel.get("series", [])
    series = [Expr(k, where + "/series") for k in ([series] if isinstance(series, str) else series)]
    table = Table(reports, x, ys, series, list((panel.get("where") or {}).items()), where)
    if "ratio" in panel:
        table = ratio_table(table, panel["ratio"], where)
    data, info = draw_lines(ax, table, panel.get("logx", "auto"), panel.get("logy", "auto"),
                            panel.get("xlabel"), panel.get("ylabel"), panel.get("y_labels"), panel.get("series_labels"))
    if panel.get("paper") and info["x_kind"] != "number":
        raise InputError(where + "/paper", f"the paper's curves need a numeric x, and \"{x.text}\" is "
                                           + ("a time string" if info["x_kind"] == "time" else "a category"))
    xs_all = [v for s in data for v in s["x"]]
    paper = draw_paper(ax, panel, xs_all, where) if panel.get("paper") else []
    ax.legend(fontsize=FIGURE_LEGEND_PT, loc="best")
    return {"kind": "line", "x": x.text, "y": [y.text for y in ys], "series_keys": table.series_keys,
            "series": data, "paper": paper}


def fastest(runs, source="simulated", label=lambda run: run.get("algorithm")):
    """The labels of the runs with the least `source` time ("simulated" or "predicted", in integer
    picoseconds) among the compared runs at one point of a map: several where they tie, in
    order, each once (an algorithm tying with itself at two N1 counts once)."""
    times = [r[source]["time_ps"] for r in runs]
    best = min(times)
    out = []
    for r, t in zip(runs, times):
        w = label(r)
        if t == best and w not in out:
            out.append(w)
    return out


def map_volumes(cells):
    """Region volumes of a selection map with ties shared: `cells` maps each point to the labels
    fastest there; a tie of k counts 1/k of the point to each. Returns {label: fraction of the
    points}, exact fractions summed, then as floats."""
    from fractions import Fraction
    vol = {}
    for tied in cells.values():
        for w in tied:
            vol[w] = vol.get(w, Fraction(0)) + Fraction(1, len(tied))
    return {w: float(v / len(cells)) for w, v in sorted(vol.items())} if cells else {}


def draw_map_panel(axs, panel, reports, where, plt):
    """A selection map (TR-530 Figs 11-14, 20-26): the fastest algorithm at every point of a
    compare sweep, one panel per facet value, cells coloured by the winner ("winner": a key,
    default the run's winner) and labelled with "cell_text" (default the winner's N1). With the
    default winner, algorithms that tie at a point (equal simulated time to the picosecond)
    share the cell: it is drawn in stripes, one colour each, and counts 1/k to each of the k in
    the volumes. The panel's data gives the volumes from the simulated times and, from the same
    runs, from the predicted ones."""
    x, y = Expr(panel["x"], where + "/x"), Expr(panel["y"], where + "/y")
    facet = Expr(panel["facet"], where + "/facet") if panel.get("facet") else None
    winner = Expr(panel.get("winner", "winner"), where + "/winner")
    text = Expr(panel.get("cell_text", "best.params.N1"), where + "/cell_text")
    share_ties = "winner" not in panel
    cells, runs_at = {}, {}
    for _, rep in reports:
        for run in rep["runs"]:
            if "winner" not in run:
                raise InputError(where, "a map needs a compare sweep (the report's runs have no \"winner\")")
            key = (facet(rep, run) if facet else None, x(rep, run), y(rep, run))
            if MISSING in key:
                raise InputError(where, f"a run has no value for {' or '.join(e.text for e in (facet, x, y) if e)}")
            runs_at.setdefault(key, []).append(run)
            if key not in cells:
                w, t = winner(rep, run), text(rep, run)
                cells[key] = {"winner": value_text(w), "text": None if t is MISSING else value_text(t),
                              "margin": run.get("margin")}
    tied, tied_pred = {}, {}
    for key, c in cells.items():
        runs = runs_at[key]
        timed = share_ties and all("time_ps" in r.get("simulated", {}) and "time_ps" in r.get("predicted", {})
                                   for r in runs)
        tied[key] = [value_text(w) for w in fastest(runs)] if timed else [c["winner"]]
        tied_pred[key] = [value_text(w) for w in fastest(runs, "predicted")] if timed else [c["winner"]]
        if len(tied[key]) > 1:
            c["tied"] = tied[key]
    facets = sorted({k[0] for k in cells}, key=lambda v: (v is None, v))
    xs = sorted({k[1] for k in cells})
    ys = sorted({k[2] for k in cells})
    winners = sorted({c["winner"] for c in cells.values()} | {w for t in tied.values() for w in t})
    colours = {w: f"C{i % 10}" for i, w in enumerate(winners)}
    volumes = map_volumes(tied)
    from matplotlib.patches import Patch
    for i, fv in enumerate(facets):
        ax = axs[i]
        for (f, xv, yv), c in cells.items():
            if f != fv:
                continue
            stripes = c.get("tied", [c["winner"]])
            for j, w in enumerate(stripes):  # a tie: one vertical stripe a winner
                ax.add_patch(plt.Rectangle((xs.index(xv) - 0.5 + j / len(stripes), ys.index(yv) - 0.5), 1 / len(stripes),
                                           1, facecolor=colours[w], edgecolor="none", alpha=0.85))
            ax.add_patch(plt.Rectangle((xs.index(xv) - 0.5, ys.index(yv) - 0.5), 1, 1, fill=False,
                                       edgecolor="white", linewidth=0.4))
            if c["text"] is not None:
                ax.text(xs.index(xv), ys.index(yv), c["text"], ha="center", va="center", fontsize=5)
        ax.set_xlim(-0.5, len(xs) - 0.5)
        ax.set_ylim(-0.5, len(ys) - 0.5)
        ax.set_xticks(range(len(xs)))
        ax.set_xticklabels([value_text(v) for v in xs], fontsize=6)
        ax.set_yticks(range(len(ys)))
        ax.set_yticklabels([value_text(v) for v in ys], fontsize=6)
        ax.set_xlabel(panel.get("xlabel", x.text), fontsize=7)
        ax.set_ylabel(panel.get("ylabel", y.text), fontsize=7)
        if facet:
            ax.set_title(f"{panel.get('facet_label', facet.text)} = {value_text(fv)}", fontsize=7)
        ax.set_aspect("equal")
    for ax in axs[len(facets):]:
        ax.set_visible(False)
    n_tied = sum(1 for c in cells.values() if "tied" in c)
    axs[0].figure.legend(handles=[Patch(color=colours[w], label=f"{w} {100 * volumes.get(w, 0):.1f} %") for w in winners],
                         loc="center right", fontsize=7, frameon=False,
                         title="fastest (volume,\nties shared)" + (f"\nstriped: {n_tied} ties" if n_tied else ""),
                         title_fontsize=7)
    return {"kind": "map", "x": x.text, "y": y.text, "facet": facet.text if facet else None,
            "series_keys": [winner.text],
            "series": [{"label": w, "keys": {winner.text: w}, "cells": sum(1 for c in cells.values() if c["winner"] == w)}
                       for w in winners],
            "volumes": {"simulated": volumes, "predicted": map_volumes(tied_pred), "ties": n_tied},
            "cells": [{"facet": k[0], "x": k[1], "y": k[2], **c}
                      for k, c in sorted(cells.items(), key=lambda kv: json.dumps(kv[0]))]}


def make_figure(recipe_path, recipe, reports, out_dir, plt, fmt="svg"):
    panels = recipe["panels"]
    data = {"schema": "cubesim.figure-data/1", "name": recipe["name"], "title": recipe["title"],
            "paper": recipe.get("paper", ""), "configs": recipe["configs"], "panels": []}
    if any(p["kind"] == "map" for p in panels):
        if len(panels) != 1:
            raise InputError(recipe_path, "/panels: a map is the figure's only panel")
        p = panels[0]
        nf = len({Expr(p["facet"], "facet")(rep, run) for _, rep in reports for run in rep["runs"]}) if p.get("facet") else 1
        cols = min(nf, 4)
        rows = (nf + cols - 1) // cols
        fig, axs = plt.subplots(rows, cols, figsize=(2.4 * cols + 0.4, 2.5 * rows + 0.7), squeeze=False)
        data["panels"].append(draw_map_panel([a for row in axs for a in row], p, reports, f"{recipe_path}: /panels/0", plt))
        fig.tight_layout(rect=(0, 0.06, 0.84, 0.95))
    else:
        w, h = recipe.get("size", [5.0 * len(panels), 3.9])
        fig, axs = plt.subplots(1, len(panels), figsize=(w, h), squeeze=False)
        for i, p in enumerate(panels):
            d = draw_line_panel(axs[0][i], p, reports, f"{recipe_path}: /panels/{i}")
            if p.get("title"):
                axs[0][i].set_title(p["title"], fontsize=8)
            data["panels"].append(d)
        fig.tight_layout(rect=(0, 0.06, 1, 0.94))
    fig.suptitle(recipe["title"], fontsize=9)
    if recipe.get("note"):
        width = int(fig.get_figwidth() * 19)
        fig.text(0.5, 0.0, textwrap.fill(recipe["note"], width), ha="center", va="top", fontsize=7)
    svg = os.path.join(out_dir, recipe["name"] + "." + fmt)
    save(fig, svg, recipe_path)
    plt.close(fig)
    write_json(os.path.join(out_dir, recipe["name"] + ".data.json"), data)
    return svg


def cmd_figures(argv):
    ap = ArgParser(prog="cubesim figures",
                                 description="regenerate the papers' figures from simulation (figures/recipes/*.json)")
    ap.add_argument("--recipes", default=os.path.join(ROOT, "figures", "recipes"), help="folder of recipes or one recipe file")
    ap.add_argument("--out", default="figures",
                    help="where NAME.svg and NAME.data.json go, created if need be (default: figures/ in the current "
                         "folder; the committed figures are regenerated from the repository's root)")
    ap.add_argument("--only", action="append", metavar="NAME", help="only this figure (repeatable)")
    ap.add_argument("--report", action="append", default=[], metavar="CONFIG=REPORT",
                    help="draw CONFIG's data from this report instead of running it (repeatable)")
    ap.add_argument("--work", help="keep the runs' reports here (default: a temporary folder)")
    ap.add_argument("--format", choices=["svg", "png", "pdf"], default="svg", help="image format (default svg)")
    ap.add_argument("--list", action="store_true", help="list the recipes and exit")
    a = ap.parse_args(argv)
    if os.path.isdir(a.recipes):
        paths = sorted(os.path.join(a.recipes, f) for f in os.listdir(a.recipes) if f.endswith(".json"))
    else:
        paths = [a.recipes]
    recipes = [load_recipe(p) for p in paths]
    names = [r["name"] for _, r in recipes]
    for n in a.only or []:
        if n not in names:
            raise InputError("--only", f"no recipe \"{n}\" (recipes: {', '.join(names)})")
    if a.list:
        for p, r in recipes:
            print(f"{r['name']:<28} {r['title']}")
        return 0
    given = {}
    for item in a.report:
        if "=" not in item:
            raise InputError("--report", f"\"{item}\": want CONFIG=REPORT")
        c, rp = item.split("=", 1)
        given[os.path.realpath(c)] = load_report(rp)
        # A pair no recipe uses would be ignored and its config simulated from scratch (for
        # Fig. 26, 17 minutes of CPU): refuse it (issue 39).
        used = {os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(p)), cc))
                for p, r in recipes if not a.only or r["name"] in a.only for cc in r["configs"]}
        if os.path.realpath(c) not in used:
            raise InputError("--report", f"\"{c}\" is the config of no recipe" +
                             (" selected by --only" if a.only else "") +
                             " (name it as from where you run cubesim, e.g. configs/tr530/maps/fig26-map-2d-nport.json)")
    if os.path.exists(a.out) and not os.path.isdir(a.out):
        raise InputError("--out", f"\"{a.out}\" exists and is not a folder")
    try:
        os.makedirs(a.out, exist_ok=True)  # as `cubesim run --out` does
    except OSError as e:
        raise InputError("--out", f"\"{a.out}\": cannot create the folder ({e.strerror})")
    cubesim = os.environ.get("CUBESIM_BIN") or os.path.join(ROOT, "build", "cubesim")
    plt = pyplot()
    with tempfile.TemporaryDirectory(prefix="cubesim-figures-") as tmp:
        work = a.work or tmp
        os.makedirs(work, exist_ok=True)
        for path, recipe in recipes:
            if a.only and recipe["name"] not in a.only:
                continue
            base = os.path.dirname(os.path.abspath(path))
            reports = []
            for c in recipe["configs"]:
                cfg = os.path.realpath(os.path.join(base, c))
                if cfg in given:
                    reports.append(given[cfg])
                    continue
                if not os.path.isfile(cfg):
                    raise InputError(path, f"/configs: no config {c} (paths are relative to the recipe)")
                reports.append(load_report(run_config(cubesim, cfg, work, path)))
            svg = make_figure(path, recipe, reports, a.out, plt, a.format)
            print(svg)
    return 0



# --- fits ----------------------------------------------------------------------------------------

# Two-sided 95 % quantiles of Student's t by degrees of freedom; between rows the smaller df's
# (the wider interval) is used.
T95 = [(1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (5, 2.571), (6, 2.447), (7, 2.365), (8, 2.306),
       (9, 2.262), (10, 2.228), (12, 2.179), (15, 2.131), (20, 2.086), (30, 2.042), (60, 2.000), (120, 1.980)]


def t95(df):
    return [t for d, t in T95 if d <= df][-1]


def least_squares(xs, ys):
    """slope, intercept, their 95 % half-widths, r^2 of y = a + b x."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    syy = sum((y - my) ** 2 for y in ys)
    b = sxy / sxx
    a = my - b * mx
    rss = max(sum((y - a - b * x) ** 2 for x, y in zip(xs, ys)), 0.0)
    s2 = rss / (n - 2) if n > 2 else 0.0
    t = t95(n - 2) if n > 2 else float("inf")
    se_b = math.sqrt(s2 / sxx)
    se_a = math.sqrt(s2 * (1 / n + mx * mx / sxx))
    r2 = 1.0 - rss / syy if syy > 0 else 1.0
    return b, a, t * se_b, t * se_a, r2


def cmd_fit(argv):
    ap = ArgParser(prog="cubesim fit", description="a least-squares line (or, with --log, a power law) through a "
                                                   "sweep's runs: slope and intercept with 95 % intervals")
    ap.add_argument("reports", nargs="+", metavar="REPORT", help="report.json, or a folder holding one")
    ap.add_argument("--x", required=True, help="a key or an expression over keys")
    ap.add_argument("--y", required=True, help="a key or an expression over keys")
    ap.add_argument("--where", action="append", metavar="KEY=VALUE", help="keep only runs with this value (repeatable)")
    ap.add_argument("--series", help="comma-separated keys: one fit per value (default: one fit)")
    ap.add_argument("--log", action="store_true", help="fit log y against log x: the slope is the exponent of y ~ x^k")
    ap.add_argument("--min-x", type=float, help="fit only the runs with x at least this")
    ap.add_argument("--max-x", type=float, help="fit only the runs with x at most this")
    ap.add_argument("--expect", help="the value the slope should have (a number or an expression: 1/3); printed "
                                     "beside the fit, with whether its interval holds it")
    ap.add_argument("--json", action="store_true", help="print the fits as JSON (cubesim.fit/1)")
    a = ap.parse_args(argv)
    reports = [load_report(p) for p in a.reports]
    where = parse_where(a.where, "--where")
    check_where(reports, where)
    x, y = Expr(a.x, "--x"), Expr(a.y, "--y")
    series = [Expr(t.strip(), "--series") for t in (a.series or "").split(",") if t.strip()]
    expect = None
    if a.expect is not None:
        expect = Expr(a.expect, "--expect")(None, None)
        if not isinstance(expect, (int, float)) or expect is MISSING:
            raise InputError("--expect", f"\"{a.expect}\" is not a number")
    table = Table(reports, x, [y], series, where, "cubesim fit")
    fits = []
    for key, pts in table.ordered():
        pairs = [(xv, yv) for xv, yv in zip(map(seconds, pts["x"]), pts[y.text])  # "5ms" as 0.005
                 if xv is not None and yv is not None and (a.min_x is None or xv >= a.min_x)
                 and (a.max_x is None or xv <= a.max_x)]
        if a.log:
            bad = [p for p in pairs if p[0] <= 0 or p[1] <= 0]
            if bad:
                raise InputError("--log", f"x = {bad[0][0]}, y = {bad[0][1]}: a power law needs positive values")
            pairs = [(math.log(xv), math.log(yv)) for xv, yv in pairs]
        label = series_label(table.series_keys, key) if series else "all runs"
        if len({p[0] for p in pairs}) < 3:
            raise InputError("cubesim fit", f"{label}: a fit needs runs at 3 or more values of x, found "
                                            f"{len({p[0] for p in pairs})}")
        b, c, db, dc, r2 = least_squares([p[0] for p in pairs], [p[1] for p in pairs])
        fit = {"series": dict(zip(table.series_keys, key)), "points": len(pairs), "slope": b, "slope_ci95": db,
               "intercept": c, "intercept_ci95": dc, "r2": r2}
        if expect is not None:
            fit["expect"] = expect
            fit["expect_within_ci95"] = abs(b - expect) <= db
        fits.append((label, fit))
    if a.json:
        print(json.dumps({"schema": "cubesim.fit/1", "reports": [p for p, _ in reports], "x": x.text, "y": y.text,
                          "log": a.log, "min_x": a.min_x, "max_x": a.max_x, "fits": [f for _, f in fits]}, indent=1, sort_keys=True))
        return 0
    what = f"log({y.text}) against log({x.text})" if a.log else f"{y.text} against {x.text}"
    print(f"fit of {what}" + (f", x >= {a.min_x:g}" if a.min_x is not None else "")
          + (f", x <= {a.max_x:g}" if a.max_x is not None else ""))
    for label, f in fits:
        line = (f"  {label}: {'exponent' if a.log else 'slope'} {f['slope']:.4g} ± {f['slope_ci95']:.2g}, "
                f"intercept {f['intercept']:.4g} ± {f['intercept_ci95']:.2g}, r² {f['r2']:.6f}, {f['points']} runs")
        if expect is not None:
            line += f"; expected {expect:.4g}: {'within' if f['expect_within_ci95'] else 'outside'} the 95 % interval"
        print(line)
    return 0


def cmd_claims(argv):
    """cubesim claims: in app/plot/cubesim_claims.py, which builds on this file's Expr and fits."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.modules.setdefault("cubesim_plot", sys.modules[__name__])  # one InputError, whether run or imported
    import cubesim_claims
    return cubesim_claims.cmd_claims(argv)


def main(argv):
    commands = {"plot": cmd_plot, "figures": cmd_figures, "fit": cmd_fit, "claims": cmd_claims}
    if not argv or argv[0] not in commands:
        print("usage: cubesim_plot.py plot|figures|fit|claims ...", file=sys.stderr)
        return 2
    try:
        return commands[argv[0]](argv[1:])
    except InputError as e:
        print(one_line(e), file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(one_line(e), file=sys.stderr)
        return 1
    except Exception as e:  # a bug, not the input: one line and exit 1, never a traceback
        print(one_line(f"cubesim {argv[0]}: internal error: {type(e).__name__}: {e} (a bug in "
                       f"app/plot/cubesim_plot.py: please report it with the command line)"), file=sys.stderr)
        return 1


if __name__ == "__main__":
    try:
        rc = main(sys.argv[1:])
    except KeyboardInterrupt:
        rc = 130
    except BaseException as e:  # SystemExit from a library, or an error while reporting one
        if isinstance(e, SystemExit) and isinstance(e.code, int):
            raise
        print(one_line(f"cubesim: internal error: {type(e).__name__}: {e}"), file=sys.stderr)
        rc = 1
    sys.exit(rc)

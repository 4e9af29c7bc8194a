"""cubesim from Python: the simulator's library in-process (docs/python.md).

    import cubesim
    report = cubesim.run("configs/quickstart.json", dim=6, machine="ipsc-os2")
    df = report.to_pandas()          # one row a run
    cubesim.predict("configs/quickstart.json").to_pandas()
    cubesim.validate({"schema": "cubesim.config/1", ...})   # cubesim.InputError on bad input

Every function runs the code of the command of the same name (`cubesim run`, `predict`,
`validate`, `replay`, `list`, `describe`): a report is the command line's byte for byte
(Report.json_text is what `cubesim run --json` prints).

Keyword overrides are `--set KEY=VALUE` of the command line: a dotted config key given as
``**{"params.M": 1024}`` or ``set={"machine.tau": "100us"}``, or one of the shorthands

    machine=NAME|FILE        --machine (the config's machine replaced)
    dim=, shape=, kind=      topology.dim, topology.shape, topology.kind
    algorithm=, name=, verify=, mode=, compare=     the config's own keys
    tau=, tau_msg=, t_c=, t_a=, t_copy=, packet_elements=, ports=, switching=, element_bytes=
                             machine.KEY (machine_overrides.KEY)
    any other name           params.NAME (root=, M=, B=, P=, Q=, R=, N1=, N2=, ...)
"""
import json
import os
import sys

from . import _cubesim
from ._cubesim import InputError

__all__ = ["run", "predict", "validate", "replay", "trace_events", "machines", "algorithms", "describe",
           "Report", "Predictions", "Replay", "InputError", "Interrupted", "set_log_level", "set_text"]

InputError.__doc__ = """Bad input (a config, a machine, a trace, an argument): the command line's one line
`FILE: /json/pointer: what is wrong` (exit 2 there) as str(error), and its parts as .file,
.pointer and .reason."""

_TOPOLOGY = {"dim", "shape", "kind"}
_CONFIG = {"algorithm", "name", "verify", "mode", "compare"}
_MACHINE = {"tau", "tau_msg", "t_c", "t_a", "t_copy", "packet_elements", "ports", "switching", "element_bytes"}


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (KeyboardInterrupt): the points that finished are in .report (a
    partial Report, as `cubesim run` prints after SIGINT)."""

    def __init__(self, report):
        super().__init__(f"stopped by SIGINT after {len(report.runs)} of {report.points} points")
        self.report = report


def set_log_level(level):
    """The library's log on stderr: "off", "error", "warn" (default), "info" (`cubesim -v`)."""
    _cubesim.set_log_level(level)


def set_text(value):
    """VALUE of `--set KEY=VALUE` for a Python value: a string as it is (unless it would read as
    JSON: then quoted), anything else as compact JSON."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return value
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"))


def _key(name):
    if "." in name:
        return name
    if name in _TOPOLOGY:
        return "topology." + name
    if name in _CONFIG:
        return name
    if name in _MACHINE:
        return "machine." + name
    return "params." + name


def _config(config, overrides, set):
    """(path, text or None, machine, ["KEY=VALUE", ...]) of a config given as a path or a dict."""
    machine = ""
    sets = []
    for k, v in list((set or {}).items()) + list(overrides.items()):
        if k == "machine":
            if isinstance(v, str):
                machine = v
                continue
            sets.append("machine=" + set_text(v))  # an inline machine object
            continue
        sets.append(_key(k) + "=" + set_text(v))
    if isinstance(config, dict):
        return "<dict>", json.dumps(config), machine, sets
    if isinstance(config, os.PathLike):
        config = os.fspath(config)
    if not isinstance(config, str):
        raise TypeError(f"config: a path or a dict, not {type(config).__name__}")
    return config, None, machine, sets


def _runs_frame(runs, columns):
    import pandas  # only when asked: importing pandas takes longer than many runs
    return pandas.DataFrame([columns(r) for r in runs])


def _run_row(r):
    """A run of a report as the columns of runs.csv (app/report.cpp report_csv), with the point's
    swept values first and the critical path's flops and copies beside its other terms."""
    row = dict(r.get("point") or {})
    s = r.get("simulated") or {}
    p = r.get("predicted") or {}
    cp = s.get("critical_path") or {}
    row.update({
        "algorithm": r.get("algorithm"), "nodes": r.get("nodes"),
        "M": (r.get("params") or {}).get("M"), "B": (r.get("params") or {}).get("B"),
        "simulated_s": s.get("time_s"), "simulated_ps": s.get("time_ps"),
        "predicted_s": p.get("time_s"), "predicted_ps": p.get("time_ps"),
        "ratio": r.get("ratio"), "relation": p.get("relation"), "relation_holds": r.get("relation_holds"),
        "cp_startups": cp.get("startups"), "cp_element_transfers": cp.get("element_transfers"),
        "cp_flops": cp.get("flops"), "cp_copies": cp.get("copies"),
        "pred_startups": p.get("startups"), "pred_element_transfers": p.get("element_transfers"),
        "terms_match": r.get("terms_match"), "messages": s.get("messages"), "packets": s.get("packets"),
        "element_hops": s.get("element_hops"), "events": s.get("events"), "wall_s": s.get("wall_s"),
        "verified": r.get("verified"), "error": r.get("error", ""), "source": p.get("source"),
    })
    if row["algorithm"] is None:
        del row["algorithm"]
    if "simgrid" in r:
        g = r["simgrid"]
        row.update({"simgrid_s": g.get("time_s"), "simgrid_relative_difference": g.get("relative_difference"),
                    "simgrid_verified": g.get("verified")})
    for k in ("winner", "margin", "behind"):
        if k in r:
            row[k] = r[k]
    return row


class Report:
    """The report of `cubesim.run`: .json (the "cubesim.report/1" object as dicts and lists),
    .runs, .json_text (`cubesim run --json`'s output, byte for byte), .text (the table `cubesim run`
    prints), .exit_code (the command line's: 0, 1 when a run failed its check or its relation,
    130 when stopped), .to_pandas() (one row a run)."""

    def __init__(self, d):
        self.json = d["report"]
        self.json_text = d["json_text"]
        self.text = d.get("text", "")
        self.exit_code = d["exit_code"]
        self.points = d.get("points", len(self.json.get("runs", [])))

    @property
    def runs(self):
        return self.json.get("runs", [])

    @property
    def ok(self):
        return self.exit_code == 0

    def to_pandas(self):
        """A pandas DataFrame, one row a run: the point's swept values (their dotted keys), nodes,
        M, B, simulated_s/_ps, predicted_s/_ps, ratio, relation, relation_holds, the critical
        path's terms (cp_startups, cp_element_transfers, cp_flops, cp_copies), the prediction's
        (pred_startups, pred_element_transfers), terms_match, the counts, verified, error, source."""
        return _runs_frame(self.runs, _run_row)

    def __repr__(self):
        return f"<cubesim.Report {self.json.get('name')!r}: {len(self.runs)} runs, exit {self.exit_code}>"

    def __str__(self):
        return self.text or self.json_text


class Predictions:
    """The predictions of `cubesim.predict` (`cubesim predict --json`'s object as .json)."""

    def __init__(self, j):
        self.json = j

    @property
    def runs(self):
        return self.json["runs"]

    def to_pandas(self):
        def row(r):
            d = dict(r["point"])
            p = r["predicted"]
            d.update({"topology": r["topology"], "predicted_s": p["time_s"], "predicted_ps": p["time_ps"],
                      "pred_startups": p["startups"], "pred_element_transfers": p["element_transfers"],
                      "relation": p["relation"], "source": p["source"]})
            return d
        return _runs_frame(self.runs, row)

    def __repr__(self):
        return f"<cubesim.Predictions {self.json.get('name')!r}: {len(self.runs)} points>"


class Replay:
    """The report of `cubesim.replay` (`cubesim replay --json`'s object as .json)."""

    def __init__(self, d):
        self.json = d["report"]
        self.json_text = d["json_text"]
        self.exit_code = d["exit_code"]

    @property
    def runs(self):
        return self.json.get("runs", [])

    def to_pandas(self):
        return _runs_frame(self.runs, _run_row)

    def __repr__(self):
        return f"<cubesim.Replay of {self.json.get('replay', {}).get('trace')!r}, exit {self.exit_code}>"


def _progress_bar(progress, points):
    """(a tqdm bar, a callback(done, _) updating it), or (None, None) when there is to be none.
    progress=None: a bar in a notebook (IPython's kernel loaded) when tqdm is installed, none
    elsewhere; a widget where ipywidgets is installed, else text. points(): how many points will
    run (asked only when a bar is to be drawn)."""
    if progress is False or (progress is None and "ipykernel" not in sys.modules):
        return None, None
    try:
        from tqdm.std import tqdm
    except ImportError:
        return None, None
    try:
        import ipywidgets  # noqa: F401  (tqdm.notebook's widget needs it)
        if "ipykernel" in sys.modules:
            from tqdm.notebook import tqdm
    except ImportError:
        pass
    try:
        total = points()
    except InputError:
        return None, None  # the run raises it, with the same message
    if total <= 1:
        return None, None
    bar = tqdm(total=total, unit="point", desc="cubesim")

    def update(done, _):
        if done > bar.n:
            bar.update(done - bar.n)
    return bar, update


def run(config, *, out=None, jobs=0, engine="cycle", reproducible=False, progress=None, max_events=None,
        max_memory=None, per_packet=False, set=None, **overrides):
    """Runs a config (a path, or a dict of the config's JSON), as `cubesim run` does, and returns
    its Report. Keywords: out (a folder: report.json and runs.csv, as --out), jobs (points at once;
    0: one per core, as --jobs), engine (cycle, simgrid, both), reproducible (wall-clock fields 0:
    the report bit-identical), progress (None: a bar in notebooks; True; False), max_events,
    max_memory (bytes), per_packet, set (a dict of dotted keys) and the overrides of the module's
    docstring. Ctrl-C stops the points under way and raises Interrupted carrying the partial
    report; bad input raises InputError."""
    path, text, machine, sets = _config(config, overrides, set)
    bar, update = _progress_bar(progress, lambda: _cubesim.validate(path, text, machine, sets)["runs"])
    try:
        d = _cubesim.run(path, text, machine, sets, out or "", int(jobs), engine, bool(reproducible),
                         _cubesim.default_max_events if max_events is None else int(max_events),
                         -1 if max_memory is None else int(max_memory), bool(per_packet), update)
        if update is not None and not d["stopped"]:
            update(bar.total, 0)
    finally:
        if bar is not None:
            bar.close()
    report = Report(d)
    if d["stopped"]:
        raise Interrupted(report)
    return report


def predict(config, *, set=None, **overrides):
    """The formulas only, as `cubesim predict --json`: a Predictions (.json, .to_pandas())."""
    path, text, machine, sets = _config(config, overrides, set)
    return Predictions(_cubesim.predict(path, text, machine, sets))


def validate(config, *, set=None, **overrides):
    """Checks a config as `cubesim validate` does: returns {"name", "algorithm", "runs"} or raises
    InputError with the command line's one line (str(e)), .file, .pointer and .reason."""
    path, text, machine, sets = _config(config, overrides, set)
    return _cubesim.validate(path, text, machine, sets)


def _replay_options(machine, topology, packet, format, elements, collectives, map):
    o = _cubesim.ReplayOptions()
    o.machine = machine
    o.topology = topology or ""
    o.packet = int(packet or 0)
    o.format = format
    o.elements = elements
    o.collectives = collectives or ""
    o.map = map or ""
    return o


def replay(trace, machine="recorded", *, topology=None, packet=None, format="auto", elements="keep",
           collectives=None, map=None, reproducible=False, max_events=None, max_memory=None, per_packet=False):
    """Re-times a recorded trace on a machine, as `cubesim replay TRACE --machine ... --json`:
    a Replay (.json, .json_text, .exit_code, .to_pandas()). Ctrl-C raises KeyboardInterrupt."""
    o = _replay_options(machine, topology, packet, format, elements, collectives, map)
    return Replay(_cubesim.replay(os.fspath(trace), o, bool(reproducible),
                                  _cubesim.default_max_events if max_events is None else int(max_events),
                                  -1 if max_memory is None else int(max_memory), bool(per_packet)))


class TraceEvents:
    """A trace's schedule: .meta (format, header, nodes, steps) and .to_pandas(), one row an
    operation (node, strand, step, kind, op, peer, amount, tag, id); amount is elements for send,
    recv and copy, flops for compute, picoseconds for delay."""

    def __init__(self, d):
        self.meta = d.pop("meta")
        self.columns = d

    def __len__(self):
        return len(self.columns["node"])

    def to_pandas(self):
        import pandas
        return pandas.DataFrame(self.columns)


def trace_events(trace, machine="recorded", *, format="auto", topology=None):
    """Reads a trace (cubesim, SimGrid TI or GOAL) as `cubesim replay` reads it: TraceEvents. An
    imported trace records no machine: name one (its ranks are placed on its topology)."""
    return TraceEvents(_cubesim.trace_events(os.fspath(trace), _replay_options(
        machine, topology, None, format, "keep", None, None)))


def machines():
    """The machine presets (`cubesim list machines`), each as its resolved values (the report's
    "machine" object)."""
    return _cubesim.machines()


def algorithms():
    """The algorithms (`cubesim list algorithms`): name, summary, source, params, required."""
    return _cubesim.algorithms()


def describe(name):
    """`cubesim describe NAME`: an algorithm's or a machine preset's reference, as text."""
    return _cubesim.describe(name)

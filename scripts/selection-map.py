#!/usr/bin/python3
"""Turns the report of a selection-map sweep (configs/tr530/maps/, scripts/gen-maps.py) into the
map: one row per (P/N, Q/N, R/N) with the fastest algorithm, its N1 where the grid competes and
its margin over the runner-up; then the volume each algorithm wins, from the simulated and from
the predicted times, algorithms that tie at a point sharing it (1/k each of a k-way tie), and
TR-530's claims about the maps, each marked as holding or not.

  scripts/selection-map.py REPORT.json [--csv MAP.csv]
  scripts/selection-map.py --predict CONFIG.json [--grid 1..16]

--predict: the predicted volumes only (`cubesim predict`, no simulation) of CONFIG's map on
P/N, Q/N, R/N = 1, 2, ..., 16 (the paper's 16 x 16 x 16 cube, every integer point), or on
--grid's comma-separated values; --csv writes that predicted map (tied algorithms joined by "=").
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "app", "plot"))
from cubesim_plot import fastest, map_volumes  # noqa: E402  (the figures' volumes: one definition)

COMPARED = ("algorithm", "params.N1")


def point_key(run, N):
    pt = run["point"]
    return tuple(pt.get(k, run.get("params", {}).get(k[7:])) // N for k in ("params.P", "params.Q", "params.R"))


def grouped(runs, N):
    at = {}
    for run in runs:
        at.setdefault(point_key(run, N), []).append(run)
    return at


def print_volumes(name, total, vols, file=sys.stderr):
    print(f"{name}: {total} points", file=file)
    for source, v in vols.items():
        print(f"  {source}: " + ", ".join(f"{w} {100 * f:.1f} %" for w, f in v.items()), file=file)


def predict_only(config, grid, csv=None):
    cfg = json.load(open(config))
    N = 2 ** cfg["topology"]["dim"]
    cells = {}
    exe = os.environ.get("CUBESIM_BIN") or os.path.join(ROOT, "build", "cubesim")
    with tempfile.TemporaryDirectory(prefix="cubesim-map-") as tmp:
        for p in grid:  # one P/N at a time: a sweep holds at most 100,000 points
            c = dict(cfg, sweep=dict(cfg["sweep"], **{"params.P": [p * N], "params.Q": [v * N for v in grid],
                                                     "params.R": [v * N for v in grid]}))
            path = os.path.join(tmp, "slice.json")
            json.dump(c, open(path, "w"))
            out = subprocess.run([exe, "predict", path, "--json"], check=True, capture_output=True, text=True).stdout
            for key, runs in grouped(json.loads(out)["runs"], N).items():
                cells[key] = fastest(runs, "predicted", lambda r: r["point"]["algorithm"])
    if csv:  # the predicted map: the fastest at each point, tied ones joined by "="
        with open(csv, "w") as f:
            f.write("P_over_N,Q_over_N,R_over_N,fastest\n")
            for (pp, q, r), t in sorted(cells.items()):
                f.write(f"{pp},{q},{r},{'='.join(t)}\n")
    vols = {"predicted": map_volumes(cells)}
    print_volumes(f"{cfg['name']} on {len(grid)}^3 points (P/N, Q/N, R/N in {grid[0]}..{grid[-1]})", len(cells), vols,
                  sys.stdout)
    print(f"  ties: {sum(1 for t in cells.values() if len(t) > 1)}")
    return vols


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", nargs="?")
    ap.add_argument("--csv", help="write the map here (default: standard output)")
    ap.add_argument("--predict", metavar="CONFIG", help="predicted volumes of CONFIG's map, no simulation")
    ap.add_argument("--grid", default=",".join(str(v) for v in range(1, 17)), help="with --predict: P/N, Q/N, R/N values")
    a = ap.parse_args()
    if a.predict:
        predict_only(a.predict, [int(v) for v in a.grid.split(",")], a.csv)
        return
    rep = json.load(open(a.report))
    N = rep["runs"][0]["nodes"]
    at = grouped(rep["runs"], N)
    cells, sim, pred = {}, {}, {}
    for key, runs in at.items():
        first = runs[0]  # the report's winner: the first fastest in sweep order
        cells[key] = (first["winner"], first.get("best", {}).get("params.N1", ""), first["margin"])
        sim[key] = fastest(runs)
        pred[key] = fastest(runs, "predicted")
    rows = ["P_over_N,Q_over_N,R_over_N,winner,N1,margin"]
    for (pp, q, r), (w, n1, m) in sorted(cells.items()):
        rows.append(f"{pp:g},{q:g},{r:g},{w},{n1},{'' if m is None else m}")
    text = "\n".join(rows) + "\n"
    if a.csv:
        open(a.csv, "w").write(text)
    else:
        sys.stdout.write(text)
    print_volumes(rep["name"], len(cells), {"simulated": map_volumes(sim), "predicted": map_volumes(pred)})
    ties = [k for k, t in sim.items() if len(t) > 1]
    print(f"  ties (shared): {len(ties)}" + (f", e.g. {ties[:3]}" if ties else ""), file=sys.stderr)
    # TR-530 §5.2.4: A2(1) and A4(1) are mirror images about the plane P = R (on it they tie).
    short = {k: v[0].rsplit(".", 1)[-1] for k, v in cells.items()}
    if "2d" in rep["name"]:
        swap = {"a2": "a4", "a4": "a2"}
        off = [k for k, v in short.items() if v in swap and k[0] != k[2] and short.get((k[2], k[1], k[0])) != swap[v]]
        on = [k for k, v in short.items() if v in swap and k[0] == k[2] and cells[k][2] not in (0, None)]
        bad = off + on
        print(f"  A2 and A4 mirror each other about P = R: {'yes' if not bad else 'no, at ' + str(len(bad)) + ' points, e.g. ' + str(bad[:3])}",
              file=sys.stderr)


if __name__ == "__main__":
    main()

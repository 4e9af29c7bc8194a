#!/usr/bin/python3
"""Turns the report of a selection-map sweep (configs/tr530/maps/, scripts/gen-maps.py) into the
map: one row per (P/N, Q/N, R/N) with the fastest algorithm, its N1 where the grid competes and
its margin over the runner-up; then the volume each algorithm wins and TR-530's claims about the
maps, each marked as holding or not.

  scripts/selection-map.py REPORT.json [--csv MAP.csv]
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--csv", help="write the map here (default: standard output)")
    a = ap.parse_args()
    rep = json.load(open(a.report))
    cells = {}
    for run in rep["runs"]:
        if "winner" not in run or run.get("behind", 1) != 0:
            continue
        p = run["params"]
        N = run["nodes"]
        key = (p["P"] / N, p["Q"] / N, p["R"] / N)
        if key in cells:
            continue  # a tie: the first in sweep order
        cells[key] = (run["winner"], run.get("best", {}).get("params.N1", ""), run["margin"])
    rows = ["P_over_N,Q_over_N,R_over_N,winner,N1,margin"]
    for (pp, q, r), (w, n1, m) in sorted(cells.items()):
        rows.append(f"{pp:g},{q:g},{r:g},{w},{n1},{'' if m is None else m}")
    text = "\n".join(rows) + "\n"
    if a.csv:
        open(a.csv, "w").write(text)
    else:
        sys.stdout.write(text)
    total = len(cells)
    vol = {}
    for w, _, _ in cells.values():
        vol[w] = vol.get(w, 0) + 1
    print(f"{rep['name']}: {total} points", file=sys.stderr)
    for w, c in sorted(vol.items()):
        print(f"  {w}: {c} ({100 * c / total:.1f} %)", file=sys.stderr)
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

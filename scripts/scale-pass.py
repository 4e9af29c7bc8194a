#!/usr/bin/python3
"""Times issue 35's scale targets point by point: each point of each sweep config (by default
bench/scale/*.json) runs alone, as its own `cubesim run CONFIG --shard I/N` process (cubesim's own
sweep, one point a shard), and the table gives its wall time and peak resident memory (the
process's own accounting, start-up included), with the events the report counts. Each point has
every core, as `cubesim run` of one point gives it (the lockstep simulators' sweeps use them).
Points run one after the other with idle seconds between them, as in docs/performance.md's passes:
a virtual machine's phase moves a single run by up to two times, so a row near the limit is at the
edge, not under it, until several passes agree.

  scripts/scale-pass.py                          every target (about 5 minutes on 2 cores)
  scripts/scale-pass.py bench/scale/matmul2d.json --only a3 --passes 3
  scripts/scale-pass.py bench/scale/matmul2d.json -- --no-lockstep     (options for cubesim run)

Prints a Markdown table and a summary line; exits 1 if a point failed (not for a slow one:
--strict makes a point over the limits fail too), 2 if a config is not valid (cubesim's message)."""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def points(cubesim, path):
    """The points of the sweep in `path`, in cubesim's order (`cubesim predict --json`: its own
    expansion and validation, nothing run), each as its labels' values."""
    p = subprocess.run([cubesim, "predict", "--json", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise ValueError(p.stderr.strip() or f"cubesim predict: exit {p.returncode}")
    return [" ".join(str(v) for v in run["point"].values()) for run in json.loads(p.stdout)["runs"]]


def run_point(cubesim, path, shard, shards, extra, workdir):
    """Runs point `shard` (1-based) of the `shards` of `path`; returns (wall s, peak MiB, report run
    or None, error text)."""
    out = os.path.join(workdir, str(shard))
    with tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        proc = subprocess.Popen([cubesim, "run", path, "--shard", f"{shard}/{shards}", "--out", out, *extra],
                                stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        report, error = None, ""
        # exit 1 with a whole report: a relation that does not hold (the CM runs of the iPSC's
        # step transposes, docs/transpose.md); the run itself finished and is timed
        try:
            with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
                report = json.load(f)["runs"][0]
            if report.get("error"):
                error = report["error"]
            elif report.get("verified") is False:
                error = "not verified: " + str(report.get("verification", ""))
        except (OSError, ValueError, KeyError, IndexError):
            lines = err.read().decode(errors="replace").strip().splitlines()
            error = lines[-1] if lines else f"exit {proc.returncode}"
    return wall, usage.ru_maxrss / 1024.0, report, error


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 usage="%(prog)s [options] [configs ...] [-- cubesim run options]")
    ap.add_argument("configs", nargs="*", help="sweep configs (default: bench/scale/*.json)")
    ap.add_argument("--cubesim", default=os.path.join(root, "build", "cubesim"), help="the binary (default build/cubesim)")
    ap.add_argument("--only", default="", help="only points whose label contains this text")
    ap.add_argument("--passes", type=int, default=1, help="passes over the points (default 1)")
    ap.add_argument("--idle", type=float, default=2.0, help="seconds idle before each run (default 2)")
    ap.add_argument("--limit", type=float, default=5.0, help="the wall-time target in seconds (default 5)")
    ap.add_argument("--memory", type=float, default=2048.0, help="the peak-memory target in MiB (default 2048)")
    ap.add_argument("--strict", action="store_true", help="exit 1 if a point is over a target")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    extra = argv[cut + 1:]  # after --: options for each cubesim run
    configs = a.configs or sorted(glob.glob(os.path.join(root, "bench", "scale", "*.json")))
    if not os.access(a.cubesim, os.X_OK):
        print(f"scale-pass: no cubesim at {a.cubesim} (build it: scripts/build.sh cubesim, or give --cubesim)",
              file=sys.stderr)
        return 2
    todo = []
    for path in configs:
        try:
            labels = points(a.cubesim, path)
        except (OSError, ValueError) as e:
            print(f"scale-pass: {e}", file=sys.stderr)
            return 2
        todo += [(path, i + 1, len(labels), label) for i, label in enumerate(labels) if a.only in label]
    passes = "".join(f" pass {p + 1} |" for p in range(a.passes))
    print(f"| config | point |{passes} peak MiB | events | under {a.limit:g} s |")
    print("|---|---|" + "---|" * a.passes + "---|---|---|")
    failed = over = 0
    with tempfile.TemporaryDirectory() as workdir:
        for path, shard, shards, label in todo:
            config = os.path.basename(path)
            walls, peak, events, error = [], 0.0, "", ""
            for _ in range(a.passes):
                time.sleep(a.idle)
                wall, mib, report, error = run_point(a.cubesim, path, shard, shards, extra, workdir)
                if error:
                    break
                walls.append(wall)
                peak = max(peak, mib)
                events = f"{report['simulated']['events']:,}"
            if error:
                failed += 1
                print(f"| {config} | {label} | failed: {error} |" + " |" * (a.passes + 2), flush=True)
                continue
            ok = all(w < a.limit for w in walls) and peak < a.memory
            over += 0 if ok else 1
            cells = "".join(f" {w:.2f} s |" for w in walls)
            print(f"| {config} | {label} |{cells} {peak:,.0f} | {events} | {'yes' if ok else '**no**'} |", flush=True)
    print(f"\n{len(todo) - failed - over} of {len(todo)} points under {a.limit:g} s in every pass and under "
          f"{a.memory:g} MiB; {over} over, {failed} failed ({a.cubesim})")
    return 1 if failed or (a.strict and over) else 0


if __name__ == "__main__":
    sys.exit(main())

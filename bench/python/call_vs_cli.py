#!/usr/bin/python3
"""The module's call against the command line (docs/python.md, "Cost"): for each config, in turn,
`cubesim run CONFIG --json` as a process (wall and CPU time of the child) and cubesim.run(CONFIG)
in this process after a warm-up (wall and CPU time of the call, its worker thread included, and
the conversion of the report to Python objects), RUNS pairs; prints the medians and the median of
the pairwise ratios. Usage: bench/python/call_vs_cli.py BUILD_DIR RUNS CONFIG...
"""
import os
import resource
import statistics
import subprocess
import sys
import time

build, runs, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
sys.path.insert(0, os.path.join(build, "python"))
import cubesim  # noqa: E402


def cpu_self():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


for config in configs:
    cubesim.run(config)  # warm-up: the registry, the allocator
    rows = []
    for _ in range(runs):
        w, c = time.perf_counter(), cpu_children()
        subprocess.run([os.path.join(build, "cubesim"), "run", config, "--json"], stdout=subprocess.DEVNULL, check=True)
        cli = (time.perf_counter() - w, cpu_children() - c)
        w, c = time.perf_counter(), cpu_self()
        r = cubesim.run(config)
        mod = (time.perf_counter() - w, cpu_self() - c)
        assert r.exit_code == 0
        rows.append((cli, mod))
    med = statistics.median
    print(f"{os.path.basename(config)}: command line wall {med(r[0][0] for r in rows):.3f} s cpu "
          f"{med(r[0][1] for r in rows):.3f} s; module call wall {med(r[1][0] for r in rows):.3f} s cpu "
          f"{med(r[1][1] for r in rows):.3f} s; module/command line wall {med(r[1][0] / r[0][0] for r in rows):.3f} "
          f"cpu {med(r[1][1] / r[0][1] for r in rows):.3f} ({runs} pairs)")

#!/usr/bin/python3
"""Writes the selection-map configs of TR-530 Figs 11-14 (1-D) and 20-26 (2-D) into
configs/tr530/maps/: P/N, Q/N and R/N over a grid, every algorithm of the figure (2-D: at every
N1, so each competes at its own optimum), B_m = infinity, no arithmetic (the maps compare
communication complexity), the fastest at each point named by "compare". Run a config with
`cubesim run CONFIG --out DIR`; scripts/selection-map.py turns the report into the map."""
import json
import os

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = os.path.join(root, "configs", "tr530", "maps")
os.makedirs(out, exist_ok=True)

ONE_D = ["matmul1d.a1.sbt", "matmul1d.a3", "matmul1d.a4"]
TWO_D = ["matmul2d.a1", "matmul2d.a2", "matmul2d.a3", "matmul2d.a4", "matmul2d.a5"]
FINE = [1, 2, 3, 4, 6, 8, 12, 16]   # P/N, Q/N, R/N: the paper's 16 x 16 x 16 cube, thinned
# Uniform grids over the paper's 16 x 16 x 16 cube for the N = 128 and 1024 maps (issue 32): a
# log-spaced grid weights small P/N, Q/N, R/N and hides how the volumes move with N. UNIFORM: the
# midpoints of a partition into 2 x 2 x 2 cells (512 points; a 2-D map on 128 nodes in ~30 s).
# UNIFORM4: four values an axis for the 2-D maps on 1,024 nodes (55 runs a point, ~2 s of CPU
# each: 3,520 runs, about a minute on two free cores; the 512-point grid would take ~9 minutes).
UNIFORM = [1, 3, 5, 7, 9, 11, 13, 15]
UNIFORM4 = [1, 6, 11, 16]


def config(name, description, n, ratio, algorithms, ports, grid, two_d, absolute=False):
    N = 2 ** n
    values = grid if absolute else [N * v for v in grid]
    sweep = {"params.P": values, "params.Q": values, "params.R": values, "algorithm": algorithms}
    compare = ["algorithm"]
    if two_d:
        sweep["params.N1"] = [2 ** k for k in range(n + 1)]
        compare.append("params.N1")
    return name, {
        "schema": "cubesim.config/1",
        "name": name,
        "description": description,
        "machine": "ipsc-nx",
        "machine_overrides": {"tau": "%d us" % ratio, "tau_msg": "0 s", "t_c": "1 us", "t_a": "0 s",
                              "packet_elements": 1 << 40, "ports": ports},
        "topology": {"kind": "hypercube", "dim": n},
        "algorithm": algorithms[0],
        "params": {"P": values[0], "Q": values[0], "R": values[0]},
        "mode": "timing",
        "sweep": sweep,
        "compare": compare,
    }


maps = [
    config("fig11-map-1d", "TR-530 Fig. 11: the fastest 1-D algorithm, one-port, N = 16, tau = t_c, B_m = inf", 4, 1, ONE_D, "one", FINE, False),
    config("fig12-map-1d", "TR-530 Fig. 12: as Fig. 11 with tau = 1000 t_c", 4, 1000, ONE_D, "one", FINE, False),
    config("fig13-map-1d", "TR-530 Fig. 13: as Fig. 11 on N = 1024 (a uniform grid, 8 values an axis)", 10, 1, ONE_D, "one", UNIFORM, False),
    config("fig14-map-1d", "TR-530 Fig. 14: as Fig. 11 with 1 <= P, Q, R <= N", 4, 1, ONE_D, "one", [1, 2, 3, 4, 6, 8, 12, 16], False, absolute=True),
    config("fig20-map-2d", "TR-530 Fig. 20: the fastest 2-D algorithm at its optimum N1, one-port, N = 16, tau = t_c, B_m = inf", 4, 1, TWO_D, "one", FINE, True),
    config("fig21-map-2d", "TR-530 Fig. 21: as Fig. 20 on N = 128 (a uniform grid, 8 values an axis)", 7, 1, TWO_D, "one", UNIFORM, True),
    config("fig22-map-2d", "TR-530 Fig. 22: as Fig. 21 with tau = 1000 t_c", 7, 1000, TWO_D, "one", UNIFORM, True),
    config("fig23-map-2d", "TR-530 Fig. 23: as Fig. 20 on N = 1024, tau = t_c (a uniform grid, 4 values an axis)", 10, 1, TWO_D, "one", UNIFORM4, True),
    config("fig23-map-2d-tau1000", "TR-530 Fig. 23 at tau = 1000 t_c: the paper's map is 'the same' as at tau = t_c", 10, 1000, TWO_D, "one", UNIFORM4, True),
    config("fig25-map-2d-nport", "TR-530 Fig. 25: the fastest 2-D algorithm at its optimum N1, n-port, N = 16, tau = t_c, B_m = inf", 4, 1, TWO_D, "all", FINE, True),
    config("fig26-map-2d-nport", "TR-530 Fig. 26: as Fig. 25 on N = 1024 (a uniform grid, 4 values an axis)", 10, 1, TWO_D, "all", UNIFORM4, True),
]
for name, doc in maps:
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(os.path.relpath(os.path.join(out, name + ".json"), root))

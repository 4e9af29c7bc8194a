#!/usr/bin/python3
"""Fits caltech-mark2-measured's t_elem to FOH §5.1 eq. (17) (docs/calibration.md).

FOH fit 1/ε − 1 against 1/√n (n = M²/N, the grain) on the 4 × 4 Mark II and found the slope
t_comm/t_loop = 1.39. Eq. (16) puts 119 µs M² beside 123 µs M³ on one node and calls the M² term
"the time taken to initialize the matrix C to zero ... and ... simple index arithmetic": a one-off
t_init and a per-cycle t_elem with t_init + t_elem = 119 µs. This script finds, by bisection on
the SIMULATED slope (cubesim run + cubesim fit, the formulas play no part), the t_elem whose
4 × 4 slope is 1.39 (configs/foh/fig6-7-efficiency.json, grain > 100), and prints it with the
slopes it then predicts: the 8 × 8 (Fig. 7) and the ring's (Fig. 8, 3.61 and 7.49).

  CUBESIM_BIN=build/cubesim python3 scripts/calibrate-mark2.py
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("CUBESIM_BIN", os.path.join(ROOT, "build", "cubesim"))
Y = "nodes * simulated.time_s / (119e-6 * params.M**2 + 123e-6 * params.M**3) - 1"
X = "sqrt(nodes) / params.M"


def slope(tmp, config, t_elem_us, dim, max_x=None):
    c = json.load(open(os.path.join(ROOT, config), encoding="utf-8"))
    c["machine"] = "caltech-mark2"
    c["machine_overrides"] = {"t_elem": f"{t_elem_us}us", "t_init": f"{round(119 - t_elem_us, 3)}us"}
    c["sweep"]["topology.dim"] = [dim]
    path, out = os.path.join(tmp, "c.json"), os.path.join(tmp, "o")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(c, f)
    subprocess.run([BIN, "run", path, "--out", out, "--reproducible"], check=True, capture_output=True)
    args = [BIN, "fit", out, "--x", X, "--y", Y, "--json"] + (["--max-x", str(max_x)] if max_x else [])
    f = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)["fits"][0]
    return f["slope"], f["slope_ci95"]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        lo, hi = 0.0, 119.0
        for _ in range(14):  # to 0.01 µs
            mid = round((lo + hi) / 2, 3)
            if slope(tmp, "configs/foh/fig6-7-efficiency.json", mid, 4, 0.1)[0] < 1.39:
                lo = mid
            else:
                hi = mid
        t = round((lo + hi) / 2, 3)
        print(f"t_elem = {t} us, t_init = {round(119 - t, 3)} us")
        print("fitted:    4 x 4 slope %.4f ± %.4f (FOH eq. (17): 1.39)" % slope(tmp, "configs/foh/fig6-7-efficiency.json", t, 4, 0.1))
        print("predicted: 8 x 8 slope %.4f ± %.4f (FOH Fig. 7: universal)" % slope(tmp, "configs/foh/fig6-7-efficiency.json", t, 6, 0.1))
        print("predicted: ring 16 slope %.4f ± %.4f (FOH Fig. 8: 3.61)" % slope(tmp, "configs/foh/fig8-ring.json", t, 4))
        print("predicted: ring 64 slope %.4f ± %.4f (FOH Fig. 8: 7.49)" % slope(tmp, "configs/foh/fig8-ring.json", t, 6))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""FOH's and Gao's reproductions (docs/meshes.md), run by ctest as reproduction.meshes: each config
under configs/foh/ and configs/gao/ runs, and `cubesim fit` computes the paper's slopes and
exponents from the reports; each is printed beside the paper's figure and held to what
docs/meshes.md says of it (reproduced, or not and by how much).

  CUBESIM_BIN=build/cubesim /usr/bin/python3 tests/test_mesh_reproductions.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("CUBESIM_BIN", os.path.join(ROOT, "build", "cubesim"))
T1 = "(119e-6 * params.M**2 + 123e-6 * params.M**3)"        # FOH eq. (16): one node
INV_EPS = f"nodes * simulated.time_s / {T1} - 1"            # 1/efficiency - 1 (FOH eq. (13))
INV_SQRT_GRAIN = "sqrt(nodes) / params.M"                  # 1/sqrt(n), n = M^2/N


def cubesim(*args):
    r = subprocess.run([BIN, *args], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"cubesim {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


class Reports:
    tmp = tempfile.TemporaryDirectory(prefix="cubesim-mesh-repro-")
    done = {}

    @classmethod
    def of(cls, config):
        if config not in cls.done:
            out = os.path.join(cls.tmp.name, os.path.basename(config)[:-5])
            cubesim("run", config, "--out", out, "--reproducible")
            cls.done[config] = out
        return cls.done[config]


def fit(config, x, y, *extra):
    out = json.loads(cubesim("fit", Reports.of(config), "--x", x, "--y", y, "--json", *extra))
    return out["fits"]


def runs(config):
    with open(os.path.join(Reports.of(config), "report.json"), encoding="utf-8") as f:
        return json.load(f)["runs"]


def say(text):
    print(f"[ reproduction ] {text}", flush=True)


class FohMeasured(unittest.TestCase):
    """caltech-mark2-measured (docs/calibration.md): eq. (16)'s M^2 term split into t_init (once)
    and t_elem (every cycle), t_elem fitted to eq. (17)'s 1.39 on the 4 x 4. Fitted: eq. (16) and
    the 4 x 4 slope. Predicted: the 8 x 8 slope (Fig. 7), the ring's 3.61 and 7.49 (Fig. 8)."""

    def test_eq16_still_exact_on_one_node(self):
        for r in runs("configs/foh/eq16-single-node-measured.json"):
            M = r["point"]["params.M"]
            self.assertEqual(r["simulated"]["time_ps"], 119_000_000 * M * M + 123_000_000 * M ** 3, M)
            self.assertTrue(r["verified"])

    def test_eq17_fitted_and_fig7_universal(self):
        fits = fit("configs/foh/fig6-7-efficiency-measured.json", INV_SQRT_GRAIN, INV_EPS, "--series", "topology.dim",
                   "--max-x", "0.1")
        s = {f["series"]["topology.dim"]: f for f in fits}
        say(f"FOH eq. (17) on caltech-mark2-measured: slope {s[4]['slope']:.4f} (4 x 4, fitted to 1.39), "
            f"{s[6]['slope']:.3f} ± {s[6]['slope_ci95']:.3f} (8 x 8, predicted; paper: the same, 'universal')")
        self.assertLess(abs(s[4]["slope"] - 1.39), 0.005)  # the fit itself (scripts/calibrate-mark2.py)
        # Prediction: within 10 % of 1.39 (the 8 x 8's longer pipelines add to it, as FOH say below grain 100).
        self.assertLess(abs(s[6]["slope"] / 1.39 - 1), 0.10)
        inv = {(2 ** r["point"]["topology.dim"], r["point"]["params.M"]): r
               for r in runs("configs/foh/fig6-7-efficiency-measured.json")}
        for M16, M64 in ((48, 96), (64, 128), (96, 192), (128, 256)):  # equal grain on 16 and 64 nodes
            a, b = (N * inv[(N, M)]["simulated"]["time_s"] / (119e-6 * M * M + 123e-6 * M ** 3) - 1
                    for N, M in ((16, M16), (64, M64)))
            say(f"FOH Fig. 7 on caltech-mark2-measured: grain {M16 * M16 // 16}: 1/eps - 1 = {a:.4f} (4 x 4), "
                f"{b:.4f} (8 x 8), {abs(b / a - 1):.1%} apart")
            self.assertLess(abs(b / a - 1), 0.10)

    def test_fig8_ring_slopes_predicted(self):
        fits = fit("configs/foh/fig8-ring-measured.json", INV_SQRT_GRAIN, INV_EPS, "--series", "topology.dim")
        s = {f["series"]["topology.dim"]: f["slope"] for f in fits}
        say(f"FOH Fig. 8 on caltech-mark2-measured: slopes {s[4]:.3f} (16 nodes), {s[6]:.3f} (64 nodes); "
            f"paper 3.61, 7.49 ({s[4] / 3.61 - 1:+.1%}, {s[6] / 7.49 - 1:+.1%})")
        # Predictions within 5 % (the paper's slopes are fits to measured points; the 4 x 4 fit
        # above has a 95 % interval of 0.1 %, theirs is not given).
        self.assertLess(abs(s[4] / 3.61 - 1), 0.05)
        self.assertLess(abs(s[6] / 7.49 - 1), 0.05)


class Foh(unittest.TestCase):
    def test_eq16_single_node_law_exact(self):
        for r in runs("configs/foh/eq16-single-node.json"):
            M = r["point"]["params.M"]
            self.assertEqual(r["simulated"]["time_ps"], 119_000_000 * M * M + 123_000_000 * M ** 3, M)
            self.assertTrue(r["verified"])
        say("FOH eq. (16): T = 119 µs M^2 + 123 µs M^3 on one node, to the picosecond, M = 1..64")

    def test_fig5_slope(self):
        f, = fit("configs/foh/fig5-square-4x4.json", "params.M", "simulated.time_s / params.M**2", "--min-x", "16")
        say(f"FOH Fig. 5 (4 x 4): slope of T/M^2 against M {f['slope'] * 1e6:.4f} ± {f['slope_ci95'] * 1e6:.4f} µs; "
            f"paper 7.64 µs, 123/16 = 7.6875 µs")
        self.assertLess(abs(f["slope"] - 7.64e-6) / 7.64e-6, 0.02)
        self.assertLess(abs(f["slope"] - 123e-6 / 16) / (123e-6 / 16), 0.02)

    def test_fig6_7_slope_and_universality(self):
        cfg = "configs/foh/fig6-7-efficiency.json"
        fits = fit(cfg, INV_SQRT_GRAIN, INV_EPS, "--series", "topology.dim", "--max-x", "0.1")
        slopes = {f["series"]["topology.dim"]: f for f in fits}
        for dim, f in sorted(slopes.items()):
            say(f"FOH eq. (17), Figs 6-7 ({2 ** (dim // 2)} x {2 ** (dim // 2)}, grain > 100): slope of 1/eps - 1 against "
                f"1/sqrt(n) {f['slope']:.3f} ± {f['slope_ci95']:.3f}; paper 1.39 (not reproduced: docs/meshes.md)")
            # Above t_comm/t_flop = 70/61.5 (the communication alone), below it plus the loop overhead's
            # share, t_elem/t_flop (sqrt(N) - 1)/sqrt(N) (docs/meshes.md).
            self.assertGreater(f["slope"], 70 / 61.5)
            self.assertLess(f["slope"], 70 / 61.5 + 119 / 123 + 0.15)
        inv = {(2 ** r["point"]["topology.dim"], r["point"]["params.M"]): r for r in runs(cfg)}

        def y(N, M):
            r = inv[(N, M)]
            return N * r["simulated"]["time_s"] / (119e-6 * M * M + 123e-6 * M ** 3) - 1
        for M16, M64 in ((48, 96), (64, 128), (96, 192), (128, 256)):  # equal grain on 16 and 64 nodes
            a, b = y(16, M16), y(64, M64)
            say(f"FOH Fig. 7: grain {M16 * M16 // 16}: 1/eps - 1 = {a:.4f} (4 x 4), {b:.4f} (8 x 8), {abs(b / a - 1):.1%} apart")
            self.assertLess(abs(b / a - 1), 0.10)
        # Below grain 100 the 8 x 8's longer pipelines part the curves (FOH: "the larger pipeline
        # startup time on the larger machine"): at grain 16 they are further apart than above.
        small = y(64, 32) / y(16, 16) - 1
        say(f"FOH Fig. 7: grain 16: 1/eps - 1 = {y(16, 16):.4f} (4 x 4), {y(64, 32):.4f} (8 x 8), {small:.1%} apart")
        self.assertGreater(small, 2 * abs(y(64, 256) / y(16, 128) - 1))

    def test_fig8_ring_slopes(self):
        fits = fit("configs/foh/fig8-ring.json", INV_SQRT_GRAIN, INV_EPS, "--series", "topology.dim")
        s = {f["series"]["topology.dim"]: f["slope"] for f in fits}
        say(f"FOH Fig. 8 (ring): slopes {s[4]:.2f} (16 nodes), {s[6]:.2f} (64 nodes), ratio {s[6] / s[4]:.3f}; "
            f"paper 3.61, 7.49, ratio 2.07")
        self.assertLess(abs(s[6] / s[4] - 2.07), 0.1)
        self.assertGreater(s[4], 3.61)  # docs/meshes.md: not reproduced, 1.6x the paper's

    def test_fig9_10_sawtooth(self):
        eps = {}
        flops = {}
        for r in runs("configs/foh/fig9-10-sawtooth.json"):
            M, a = r["point"]["params.M"], r["point"]["algorithm"]
            eps[(a, M)] = (119e-6 * M * M + 123e-6 * M ** 3) / (64 * r["simulated"]["time_s"])
            flops[(a, M)] = r["simulated"]["critical_path"]["flops"]
            self.assertTrue(r["verified"])
        sq, ring = "matmul.foh", "matmul.foh_ring"
        # 65 x 65 is padded to 72 on 8 x 8 (8 cycles of 2 * 9^3 flops) and to 128 rows on the ring
        # (64 cycles of 2 * 2 * 2 * 65).
        self.assertEqual(flops[(sq, 65)], 8 * 2 * 9 ** 3)
        self.assertEqual(flops[(ring, 65)], 64 * 2 * 2 * 2 * 65)
        drop_sq, drop_ring = 1 - eps[(sq, 65)] / eps[(sq, 64)], 1 - eps[(ring, 65)] / eps[(ring, 64)]
        say(f"FOH Figs 9-10: eps 64 -> 65 falls {eps[(sq, 64)]:.3f} -> {eps[(sq, 65)]:.3f} on 8 x 8 ({drop_sq:.0%}), "
            f"{eps[(ring, 64)]:.3f} -> {eps[(ring, 65)]:.3f} on the ring ({drop_ring:.0%})")
        self.assertGreater(drop_sq, 0.1)
        self.assertGreater(drop_ring, 2 * drop_sq)
        for a in (sq, ring):  # the upper envelope rises: the fitting sizes' efficiency grows with M
            fitting = [eps[(a, M)] for M in (64, 128)]
            self.assertLess(fitting[0], fitting[1])


class Gao(unittest.TestCase):
    CASES = [  # config, smallest p fitted, theorem's exponents of start-ups and bandwidth in p
        ("configs/gao/theorems-1d-ring.json", 16, "1", "0", "O(p), O(n^2)"),
        ("configs/gao/theorems-2d-torus.json", 16, "1/2", "-1/2", "O(sqrt p), O(n^2/sqrt p)"),
        ("configs/gao/theorems-3d-torus.json", 64, "1/3", "-2/3", "O(p^(1/3)), O(n^2/p^(2/3))"),
    ]

    def test_fitted_exponents(self):
        for cfg, min_p, e_start, e_band, theorem in self.CASES:
            got = []
            for y, expect in (("startups", e_start), ("element_transfers", e_band)):
                f, = fit(cfg, "nodes", y, "--log", "--min-x", str(min_p), f"--expect={expect}")
                got.append(f"{f['slope']:.3f} ± {f['slope_ci95']:.3f} (theorem {expect})")
                self.assertLess(abs(f["slope"] - f["expect"]), 0.1, f"{cfg} {y}")
            say(f"Gao {os.path.basename(cfg)[:-5]}, p >= {min_p}: start-up exponent {got[0]}, bandwidth exponent {got[1]}: {theorem}")

    def test_theorem3_hypercube(self):
        cfg = "configs/gao/theorem3-hypercube.json"
        # Variant 1 (the subcube collectives): start-ups Θ(log p), here exactly (2/3) log2 p: the
        # two gathers at once, then the reduction, each log2 p^(1/3) steps.
        f, = fit(cfg, "log2(nodes)", "startups", "--where", "params.variant=1")
        b, = fit(cfg, "nodes", "element_transfers * log2(nodes)", "--log", "--where", "params.variant=1", "--expect=-2/3")
        ring, = fit(cfg, "nodes", "startups", "--log", "--where", "params.variant=0", "--expect=1/3")
        say(f"Gao Theorem 3 (hypercube, p = 8..4096): subcube collectives: start-ups {f['slope']:.4f} log2 p "
            f"(r² {f['r2']:.6f}); bandwidth x log p exponent {b['slope']:.3f} ± {b['slope_ci95']:.3f} (theorem -2/3); "
            f"Gray-code rings instead: start-up exponent {ring['slope']:.3f} ± {ring['slope_ci95']:.3f} (p^(1/3))")
        self.assertAlmostEqual(f["slope"], 2 / 3, places=9)
        self.assertAlmostEqual(f["r2"], 1.0, places=9)
        self.assertLess(abs(b["slope"] + 2 / 3), 0.15)
        self.assertLess(abs(ring["slope"] - 1 / 3), 0.15)

    def test_lemma4_token_steps(self):
        # One 3-D step (a token to each of the 6 neighbours) on the emulating ring or torus, counted
        # by simulation: tau = 1 µs a hop, tokens of one element (t_c 1 ps), all ports.
        for r in runs("configs/gao/lemma4-emulation.json"):
            shape = r["point"]["topology.shape"]
            p = 1
            for e in shape:
                p *= e
            steps = round(r["simulated"]["time_s"] / 1e-6)
            self.assertTrue(r["verified"])
            if len(shape) == 1:
                bound, which = 2 * p ** (2 / 3) + 2 * p ** (1 / 3) + 2, "2p^(2/3) + 2p^(1/3) + 2"
            else:
                bound, which = 3 * p ** (1 / 6), "3p^(1/6)"
            sixth = abs(round(p ** (1 / 6)) ** 6 - p) == 0
            say(f"Gao Lemma 4: p = {p} on {shape}: {steps} token steps per 3-D step; Gao's {which} = {bound:.1f}"
                + ("" if len(shape) == 1 or sixth else " (Construction B's count is for p = 2^(6d))"))
            if len(shape) == 1 or sixth:
                self.assertLessEqual(steps, bound + 1e-9)

    def test_lemma4_phased_is_gaos_count(self):
        # Gao's own schedule (exchange.grid_phased): the moves in groups one after another on a
        # common clock. Construction A's six groups take p^(2/3), p^(2/3), p^(1/3), p^(1/3), 1, 1
        # steps: 2p^(2/3) + 2p^(1/3) + 2, equal to the step for p >= 64. At p = 8 a z move is half
        # the ring (4 hops either way): our router takes it forward, Construction A's z- series runs
        # backward, and in the (z,-) group it meets the y- wraps running forward: 6 steps, not 4.
        # Construction B: x and y at once (p^(1/6)), then z (2p^(1/6) - 2 without contention).
        ring = {8: 16, 64: 42, 512: 146, 4096: 546}
        torus = {64: 5, 4096: 11}
        for r in runs("configs/gao/lemma4-emulation-phased.json"):
            shape = r["point"]["topology.shape"]
            p = 1
            for e in shape:
                p *= e
            steps = round(r["simulated"]["time_s"] / 1e-6)
            predicted = round(r["predicted"]["time_s"] / 1e-6)
            self.assertTrue(r["verified"])
            self.assertGreaterEqual(steps, predicted)
            if len(shape) == 1:
                gao = round(2 * p ** (2 / 3) + 2 * p ** (1 / 3) + 2)
                say(f"Gao Lemma 4, his schedule: ring of {p}: {steps} token steps, predicted {predicted}, "
                    f"Gao's 2p^(2/3) + 2p^(1/3) + 2 = {gao}")
                self.assertEqual(predicted, gao)
                self.assertEqual(steps, ring[p])
            else:
                gao = 3 * p ** (1 / 6)
                sixth = round(p ** (1 / 6)) ** 6 == p
                say(f"Gao Lemma 4, his schedule: 2-D torus {shape}: {steps} token steps, predicted {predicted}"
                    + (f", Gao's 3p^(1/6) = {gao:.0f}" if sixth else " (Construction B's count is for p = 2^(6d))"))
                if sixth:
                    self.assertEqual(steps, torus[p])
                    self.assertLessEqual(steps, gao + 1e-9)

    def test_theorem4_emulated_matches_native(self):
        for cfg, native, e_start, e_band in (("configs/gao/theorem4-ring.json", "matmul.gao1d", 1, 0),
                                             ("configs/gao/theorem4-torus.json", "matmul.gao2d", 0.5, -0.5)):
            points = len({str(r["point"]["topology.shape"]) for r in runs(cfg)})
            self.assertGreaterEqual(points, 5, f"{cfg}: Theorem 4 fitted on at least five sizes of p")
            got = {}
            for a in ("matmul.gao3d", native):
                s, = fit(cfg, "nodes", "startups", "--log", "--where", f"algorithm={a}")
                b, = fit(cfg, "nodes", "element_transfers", "--log", "--where", f"algorithm={a}")
                got[a] = (s, b)
                say(f"Gao Theorem 4 ({os.path.basename(cfg)[:-5]}): {a}: start-up exponent {s['slope']:.3f} ± "
                    f"{s['slope_ci95']:.3f} (theorem {e_start}), bandwidth {b['slope']:.3f} ± {b['slope_ci95']:.3f} "
                    f"(theorem {e_band}), {points} sizes of p")
            for k, want in ((0, e_start), (1, e_band)):
                emulated = got["matmul.gao3d"][k]
                # The theorem's exponent lies inside the emulated fit's 95 % interval, and the
                # emulated and native exponents agree.
                self.assertLessEqual(abs(emulated["slope"] - want), emulated["slope_ci95"])
                self.assertLess(abs(emulated["slope"] - want), 0.1)
                self.assertLess(abs(emulated["slope"] - got[native][k]["slope"]), 0.1)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:], verbosity=2)

#!/usr/bin/python3
"""cubesim claims (app/plot/cubesim_claims.py, docs/claims.md): the ledger runs, every stored
verdict is the one measured now, docs/claims.md is what the ledger generates, and bad ledgers end
in one line naming the file and the JSON pointer (exit 2).

  ClaimsLedger  (claims.ledger, extensive): the whole ledger but the claims marked "slow", about
                50 s on two cores (`cubesim claims` runs those too: about 4 minutes more)
  ClaimsBadInput (claims.bad_input, quick): bad ledgers and a changed verdict, no long runs
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUBESIM = os.environ.get("CUBESIM_BIN") or os.path.join(ROOT, "build", "cubesim")
LEDGER = os.path.join(ROOT, "claims", "ledger.json")


def claims(*args):
    return subprocess.run([CUBESIM, "claims", *args], capture_output=True, text=True)


class ClaimsLedger(unittest.TestCase):
    def test_ledger_runs_and_docs_are_current(self):
        with tempfile.TemporaryDirectory(prefix="cubesim-claims-test-") as tmp:
            md = os.path.join(tmp, "claims.md")
            # The claims marked "slow" (the 1,024-node maps, minutes each) report the numbers of the
            # last full run (`cubesim claims`), which checks them; the page is the same either way.
            p = claims("--markdown", md, "--work", os.path.join(tmp, "work"), "--skip-slow")
            self.assertEqual(p.returncode, 0, p.stderr[-3000:])
            self.assertIn("verdicts: TR-530", p.stdout)
            with open(md, encoding="utf-8") as f:
                got = f.read()
        with open(os.path.join(ROOT, "docs", "claims.md"), encoding="utf-8") as f:
            want = f.read()
        self.assertEqual(got, want, "docs/claims.md is stale: run cubesim claims --markdown docs/claims.md")

    def test_ledger_covers_the_papers(self):
        with open(LEDGER, encoding="utf-8") as f:
            led = json.load(f)
        runnable = [c for c in led["claims"] if c["check"] is not None]
        self.assertGreaterEqual(len(runnable), 60)
        self.assertEqual({c["paper"] for c in runnable}, {"TR-530", "TR-572", "FOH", "Gao"})
        for c in led["claims"]:
            self.assertIn("verdict", c, c["id"])
            if c["check"] is None or c["verdict"] in ("not", "partial"):
                self.assertTrue(c.get("reason"), f"{c['id']}: a claim that is not reproduced says why")


class ClaimsBadInput(unittest.TestCase):
    GOOD = {"id": "x-1", "paper": "FOH", "place": "§5.1", "quote": "q", "kind": "formula", "quantity": "q",
            "check": {"config": "configs/foh/eq16-single-node.json", "machine": "caltech-mark2",
                      "metric": {"kind": "value", "where": {"params.M": 4}, "expr": "simulated.critical_path.flops"},
                      "relation": "equal", "expect": 128, "why": "a count"}}

    def run_ledger(self, doc, *args, raw=None):
        with tempfile.TemporaryDirectory(prefix="cubesim-claims-bad-") as tmp:
            path = os.path.join(tmp, "ledger.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(raw if raw is not None else json.dumps(doc))
            return path, claims("--ledger", path, *args)

    def bad(self, doc, pointer, raw=None):
        path, p = self.run_ledger(doc, raw=raw)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertTrue(lines[0].startswith(f"{path}: {pointer}"), lines[0])
        self.assertEqual(p.stdout, "")

    def ledger(self, **change):
        c = json.loads(json.dumps(self.GOOD))
        for k, v in change.items():
            node, parts = c, k.split("__")
            for part in parts[:-1]:
                node = node[part]
            node[parts[-1]] = v
        return {"schema": "cubesim.claims/1", "claims": [c]}

    def test_bad_ledgers(self):
        self.bad(None, "line 1, column", raw="{not json")
        self.bad({"schema": "cubesim.claims/0", "claims": []}, "/schema")
        self.bad({"schema": "cubesim.claims/1", "claims": []}, "/claims")
        self.bad(self.ledger(paper="Knuth"), "/claims/0/paper")
        self.bad(self.ledger(check__metric__kind="median"), "/claims/0/check/metric/kind")
        self.bad(self.ledger(check__config="configs/none.json"), "/claims/0/check/config")
        self.bad(self.ledger(check__relation="~"), "/claims/0/check/relation")
        self.bad(self.ledger(check__metric__expr="flops +"), "/claims/0/check/metric/expr")
        self.bad(self.ledger(check__machine="cray-1"), "/claims/0/check/machine")
        self.bad(self.ledger(check__tolerance=0.1), "/claims/0/check/tolerance_kind")
        self.bad(self.ledger(check=None), "/claims/0/reason")
        self.bad(self.ledger(slow={"measured_text": "1"}), "/claims/0/slow")
        doc = self.ledger()
        doc["claims"].append(doc["claims"][0])
        self.bad(doc, "/claims/1/id")

    def test_verdicts(self):
        path, p = self.run_ledger(self.ledger(verdict="reproduced"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("x-1", p.stdout)
        self.assertIn("reproduced", p.stdout)
        # A stored verdict that differs from the measured one is a regression: exit 1, named.
        path, p = self.run_ledger(self.ledger(verdict="not"))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("x-1: verdict reproduced, the ledger says not", p.stderr)
        # A claim that does not reproduce is recorded, not a failure.
        path, p = self.run_ledger(self.ledger(check__expect=129, verdict="not"))
        self.assertEqual(p.returncode, 0, p.stderr)
        # A check that cannot be computed (no run selected) is an error: exit 1.
        path, p = self.run_ledger(self.ledger(check__metric__where={"params.M": 5}))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("selects 0 runs", p.stderr)

    def test_slow_claims(self):
        # --skip-slow reports the stored numbers without running; a full run checks them.
        good = self.ledger(verdict="reproduced")
        path, p = self.run_ledger(good, "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)["claims"][0]
        slow = {"measured_text": r["measured_text"], "expected": str(r["expected"])}
        path, p = self.run_ledger(self.ledger(verdict="reproduced", slow=slow))
        self.assertEqual(p.returncode, 0, p.stderr)
        stale = self.ledger(verdict="reproduced", slow={"measured_text": "0.5", "expected": slow["expected"]})
        path, p = self.run_ledger(stale)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("the ledger's \"slow\" says 0.5", p.stderr)
        path, p = self.run_ledger(stale, "--skip-slow", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)["claims"][0]
        self.assertTrue(r["skipped"])
        self.assertEqual(r["measured_text"], "0.5")  # not run: the ledger's numbers


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:])

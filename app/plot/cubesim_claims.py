"""cubesim claims: the ledger of the four papers' quantitative statements (claims/ledger.json).

  cubesim claims [--ledger FILE] [--only ID ...] [--json] [--markdown FILE] [--jobs N] [--work DIR]

Each claim quotes the paper and names its place; a runnable claim names a config, the machine it
runs on, a metric over the config's report (value, ratio, argmin/argmax, slope/exponent, max/min,
all, fraction), the paper's value, the relation and tolerance, and why that tolerance. This runs
each distinct config once (`cubesim run CONFIG --out DIR --reproducible`), computes the metrics,
and prints one line per claim and the verdict counts per paper; docs/claims.md is its --markdown
output. docs/claims.md describes the ledger format and the verdicts.

Exit codes: 0 when every check ran and every stored verdict ("verdict" in the ledger, the one
measured when the claim was written) is the one measured now; 1 when a check errors or a verdict
changed (a regression, named); 2 when the ledger is bad input (one line: FILE: /json/pointer:
what is wrong). A claim whose verdict is "not" does not fail the command: the ledger records what
does not reproduce.
"""
import concurrent.futures
import hashlib
import json
import math
import os
import re
import sys
import tempfile

from cubesim_plot import (MISSING, ROOT, ArgParser, Expr, InputError, least_squares, load_json, load_report,
                          lookup, matches, run_cubesim, value_text)

LEDGER_SCHEMA = "cubesim.claims/1"
PAPERS = ["TR-530", "TR-572", "FOH", "Gao"]
KINDS = ["measured", "formula"]
VERDICTS = ["reproduced", "partial", "not", "fitted", "unchecked"]
METRICS = ["value", "ratio", "argmin", "argmax", "slope", "exponent", "max", "min", "all", "fraction"]
RELATIONS = ["equal", "<", "<=", ">", ">=", "between"]
COMPARE = re.compile(r"(<=|>=|==|<|>)")


class CheckError(Exception):
    """A check that cannot be computed (no run matched, a key no run has): exit 1."""


# --- the ledger ----------------------------------------------------------------------------------

def need(obj, key, types, path, ptr, optional=False):
    if not isinstance(obj, dict):
        raise InputError(path, f"{ptr or '/'}: want an object")
    if key not in obj:
        if optional:
            return None
        raise InputError(path, f"{ptr}/{key}: missing")
    v = obj[key]
    types = types if isinstance(types, tuple) else (types,)
    if not isinstance(v, types) or isinstance(v, bool) and bool not in types:
        want = " or ".join(t.__name__ for t in types)
        raise InputError(path, f"{ptr}/{key}: want {want.replace('str', 'a string').replace('dict', 'an object')}")
    return v


def check_expr(text, path, ptr):
    if not isinstance(text, str):
        raise InputError(path, f"{ptr}: want an expression (a string)")
    Expr(text, f"{path}: {ptr}")


def check_where(where, path, ptr):
    if where is None:
        return []
    if not isinstance(where, dict):
        raise InputError(path, f"{ptr}: want an object of KEY: VALUE (a list: any of them)")
    return list(where.items())


def check_predicate(text, path, ptr):
    if not isinstance(text, str):
        raise InputError(path, f"{ptr}: want a comparison (a string such as \"simulated.time_s <= predicted.time_s\")")
    parts = [t.strip() for t in COMPARE.split(text)]
    if len(parts) != 3:
        raise InputError(path, f"{ptr}: \"{text}\": want one comparison LEFT OP RIGHT with OP one of < <= == >= >")
    check_expr(parts[0], path, ptr)
    check_expr(parts[2], path, ptr)


def constant(v, path, ptr):
    """expect: a number or an expression without keys ("123e-6 / 16", "2/3")."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise InputError(path, f"{ptr}: want a number or an expression over numbers")
    if isinstance(v, str):
        e = Expr(v, f"{path}: {ptr}")
        if e.keys:
            raise InputError(path, f"{ptr}: \"{v}\": an expected value cannot name keys ({', '.join(e.keys)})")
        v = e(None, None)
        if v is MISSING:
            raise InputError(path, f"{ptr}: \"{v}\" has no value")
    return float(v)


def validate_selector(sel, path, ptr, configs):
    """A side of a ratio: {config?, where?, expr} (one run's value), or {config?, kind, ...} (a metric)."""
    if not isinstance(sel, dict):
        raise InputError(path, f"{ptr}: want an object")
    if "config" in sel:
        c = need(sel, "config", str, path, ptr)
        configs.append((c, f"{ptr}/config"))
    if "kind" in sel:
        validate_metric(sel, path, ptr, configs)
        if sel["kind"] == "all":
            raise InputError(path, f"{ptr}/kind: a side of a ratio is a number, not \"all\"")
        return
    check_where(sel.get("where"), path, ptr + "/where")
    check_expr(need(sel, "expr", str, path, ptr), path, ptr + "/expr")


def validate_metric(m, path, mp, configs):
    kind = need(m, "kind", str, path, mp)
    if kind not in METRICS:
        raise InputError(path, f"{mp}/kind: \"{kind}\" is not one of {', '.join(METRICS)}")
    check_where(m.get("where"), path, mp + "/where")
    if kind in ("value", "max", "min"):
        check_expr(need(m, "expr", str, path, mp), path, mp + "/expr")
    elif kind == "ratio":
        validate_selector(need(m, "a", dict, path, mp), path, mp + "/a", configs)
        validate_selector(need(m, "b", dict, path, mp), path, mp + "/b", configs)
    elif kind in ("argmin", "argmax"):
        need(m, "key", str, path, mp)
        check_expr(need(m, "expr", str, path, mp), path, mp + "/expr")
    elif kind in ("slope", "exponent"):
        check_expr(need(m, "x", str, path, mp), path, mp + "/x")
        check_expr(need(m, "y", str, path, mp), path, mp + "/y")
        for k in ("min_x", "max_x"):
            if k in m and (isinstance(m[k], bool) or not isinstance(m[k], (int, float))):
                raise InputError(path, f"{mp}/{k}: want a number")
    elif kind == "all":
        check_predicate(need(m, "holds", str, path, mp), path, mp + "/holds")
    elif kind == "fraction":
        if "holds" in m:
            check_predicate(m["holds"], path, mp + "/holds")
        check_where(m.get("of"), path, mp + "/of")
        if "holds" not in m and "of" not in m:
            raise InputError(path, f"{mp}: a fraction needs \"holds\" (a comparison) or \"of\" (KEY: VALUE)")
    if "tolerance" in m and (isinstance(m["tolerance"], bool) or not isinstance(m["tolerance"], (int, float))):
        raise InputError(path, f"{mp}/tolerance: want a number (the relative tolerance of a == in \"holds\")")


def validate_check(chk, path, ptr, presets):
    configs = [(need(chk, "config", str, path, ptr), f"{ptr}/config")]
    ov = need(chk, "overrides", dict, path, ptr, optional=True)
    for k in ov or {}:
        if not k or any(not p for p in k.split(".")):
            raise InputError(path, f"{ptr}/overrides/{k}: want a dotted key of the config")
    machine = need(chk, "machine", str, path, ptr)
    if presets and machine not in presets:
        raise InputError(path, f"{ptr}/machine: \"{machine}\" is not a preset ({', '.join(sorted(presets))})")
    m = need(chk, "metric", dict, path, ptr)
    validate_metric(m, path, ptr + "/metric", configs)
    kind = m["kind"]
    if kind not in METRICS:
        raise InputError(path, f"{mp}/kind: \"{kind}\" is not one of {', '.join(METRICS)}")
    if kind != "all":
        rel = need(chk, "relation", str, path, ptr)
        if rel not in RELATIONS:
            raise InputError(path, f"{ptr}/relation: \"{rel}\" is not one of {', '.join(RELATIONS)}")
        if "expect" not in chk:
            raise InputError(path, f"{ptr}/expect: missing")
        if rel == "between":
            e = chk["expect"]
            if not isinstance(e, list) or len(e) != 2:
                raise InputError(path, f"{ptr}/expect: \"between\" wants [LOW, HIGH]")
            lo, hi = (constant(v, path, f"{ptr}/expect/{i}") for i, v in enumerate(e))
            if lo > hi:
                raise InputError(path, f"{ptr}/expect: LOW {lo:g} is above HIGH {hi:g}")
        else:
            constant(chk["expect"], path, ptr + "/expect")
        tol = need(chk, "tolerance", (int, float), path, ptr, optional=True)
        if tol is not None and (tol < 0 or not math.isfinite(tol)):
            raise InputError(path, f"{ptr}/tolerance: want a number at least 0")
        tk = need(chk, "tolerance_kind", str, path, ptr, optional=True)
        if tk is not None and tk not in ("relative", "absolute"):
            raise InputError(path, f"{ptr}/tolerance_kind: want \"relative\" or \"absolute\"")
        if tol and tk is None:
            raise InputError(path, f"{ptr}/tolerance_kind: missing (\"relative\" or \"absolute\")")
    need(chk, "why", str, path, ptr)
    return configs


def load_ledger(path, check_files=True):
    path, led = load_json(path, "the ledger")
    if not isinstance(led, dict) or led.get("schema") != LEDGER_SCHEMA:
        raise InputError(path, f"/schema: not a claims ledger (want \"{LEDGER_SCHEMA}\")")
    claims = led.get("claims")
    if not isinstance(claims, list) or not claims:
        raise InputError(path, "/claims: want a non-empty list of claims")
    presets = {os.path.splitext(f)[0] for f in os.listdir(os.path.join(ROOT, "machines", "presets"))
               if f.endswith(".json")} if os.path.isdir(os.path.join(ROOT, "machines", "presets")) else set()
    seen = set()
    base = ROOT  # configs are named relative to the repository root, wherever the ledger is
    for i, c in enumerate(claims):
        ptr = f"/claims/{i}"
        if not isinstance(c, dict):
            raise InputError(path, f"{ptr}: want an object")
        cid = need(c, "id", str, path, ptr)
        if not re.fullmatch(r"[a-z0-9][a-z0-9.\-]*", cid):
            raise InputError(path, f"{ptr}/id: \"{cid}\": want lower-case letters, digits, '.', '-'")
        if cid in seen:
            raise InputError(path, f"{ptr}/id: \"{cid}\" appears twice")
        seen.add(cid)
        if need(c, "paper", str, path, ptr) not in PAPERS:
            raise InputError(path, f"{ptr}/paper: \"{c['paper']}\" is not one of {', '.join(PAPERS)}")
        for k in ("place", "quote", "quantity"):
            if not need(c, k, str, path, ptr).strip():
                raise InputError(path, f"{ptr}/{k}: empty")
        if need(c, "kind", str, path, ptr) not in KINDS:
            raise InputError(path, f"{ptr}/kind: \"{c['kind']}\" is not one of {', '.join(KINDS)}")
        if "check" not in c:
            raise InputError(path, f"{ptr}/check: missing (an object, or null with a \"reason\")")
        v = need(c, "verdict", str, path, ptr, optional=True)
        if v is not None and v not in VERDICTS:
            raise InputError(path, f"{ptr}/verdict: \"{v}\" is not one of {', '.join(VERDICTS)}")
        if c["check"] is None:
            if not need(c, "reason", str, path, ptr).strip():
                raise InputError(path, f"{ptr}/reason: empty")
            continue
        if not isinstance(c["check"], dict):
            raise InputError(path, f"{ptr}/check: want an object or null")
        if "reason" in c:
            need(c, "reason", str, path, ptr)
        if "slow" in c:
            # A claim whose configs take minutes (the 1,024-node selection maps): the ledger keeps
            # what it measured, which a full run checks and --skip-slow reports without running.
            slow = c["slow"]
            if not isinstance(slow, dict) or set(slow) != {"measured_text", "expected"} or not all(
                    isinstance(v, str) and v for v in slow.values()):
                raise InputError(path, f"{ptr}/slow: want {{\"measured_text\": ..., \"expected\": ...}} "
                                       "(what a full run measured)")
        if "fitted" in c and not need(c, "fitted", str, path, ptr).strip():
            raise InputError(path, f"{ptr}/fitted: empty (say which machine value was fitted to this claim)")
        for cfg, cptr in validate_check(c["check"], path, f"{ptr}/check", presets):
            if check_files and not os.path.isfile(os.path.join(base, cfg)):
                raise InputError(path, f"{cptr}: no config {cfg} (paths are relative to the repository root)")
    return led


# --- running the configs -------------------------------------------------------------------------

def set_dotted(obj, key, value):
    parts = key.split(".")
    for p in parts[:-1]:
        if not isinstance(obj.get(p), dict):
            obj[p] = {}
        obj = obj[p]
    obj[parts[-1]] = value


def run_key(config, overrides):
    text = json.dumps([config, overrides or {}], sort_keys=True)
    name = os.path.splitext(os.path.basename(config))[0]
    return f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def run_one(cubesim, base, config, overrides, work):
    """Runs one config (with its overrides) into work/KEY; returns (path, report) or raises CheckError."""
    key = run_key(config, overrides)
    out = os.path.join(work, key)
    report = os.path.join(out, "report.json")
    if not os.path.exists(report):
        cfg = os.path.join(base, config)
        if overrides:
            with open(cfg, encoding="utf-8") as f:
                doc = json.load(f)
            for k, v in overrides.items():
                if isinstance(doc.get("sweep"), dict) and k in doc["sweep"]:
                    del doc["sweep"][k]
                set_dotted(doc, k, v)
            if isinstance(doc.get("sweep"), dict) and not doc["sweep"]:
                del doc["sweep"]
                doc.pop("compare", None)
            cfg = os.path.join(work, key + ".json")
            with open(cfg, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=1)
        code, msg = run_cubesim(cubesim, cfg, out, jobs=1)
        if code not in (0, 1) or not os.path.exists(report):
            raise CheckError(f"cubesim run {config} failed (exit {code}): {msg}")
    return load_report(report)


# --- metrics -------------------------------------------------------------------------------------

def select(reports, where):
    return [(rep, run) for rep in reports for run in rep["runs"] if matches(rep, run, where)]


def number(e, rep, run, what):
    v = e(rep, run)
    if isinstance(v, bool):
        return int(v)
    if v is MISSING or not isinstance(v, (int, float)):
        raise CheckError(f"{what} \"{e.text}\" has no number for the run at {json.dumps(run.get('point') or {})}")
    return v


def one_run(reports, where, what):
    runs = select(reports, where)
    if len(runs) != 1:
        raise CheckError(f"{what}: where {json.dumps(dict(where))} selects {len(runs)} runs, want exactly one")
    return runs[0]


def holds(text, rep, run, tol):
    left, op, right = (t.strip() for t in COMPARE.split(text))
    a = number(Expr(left, "holds"), rep, run, "holds:")
    b = number(Expr(right, "holds"), rep, run, "holds:")
    slack = tol * max(abs(a), abs(b))
    return {"<": a < b + slack, "<=": a <= b + slack, ">": a > b - slack, ">=": a >= b - slack,
            "==": abs(a - b) <= slack}[op]


def measure(m, reports_of, default):
    """The measured value of a metric: (number, text). reports_of(config) gives a config's reports."""
    kind = m["kind"]
    where = list((m.get("where") or {}).items())
    reps = reports_of(default)
    if kind == "value":
        rep, run = one_run(reps, where, "value")
        v = number(Expr(m["expr"], "expr"), rep, run, "expr")
        return v, None
    if kind == "ratio":
        vals = []
        for side in ("a", "b"):
            s = m[side]
            if "kind" in s:
                vals.append(measure(dict(s, where={**(m.get("where") or {}), **(s.get("where") or {})}),
                                    reports_of, s.get("config", default))[0])
                continue
            rep, run = one_run(reports_of(s.get("config", default)), where + list((s.get("where") or {}).items()),
                               f"ratio {side}")
            vals.append(number(Expr(s["expr"], "expr"), rep, run, f"{side}.expr"))
        if vals[1] == 0:
            raise CheckError("ratio: b is 0")
        return vals[0] / vals[1], None
    runs = select(reps, where)
    if not runs:
        raise CheckError(f"{kind}: where {json.dumps(dict(where))} selects no run")
    if kind in ("max", "min"):
        e = Expr(m["expr"], "expr")
        vals = [number(e, rep, run, "expr") for rep, run in runs]
        return (max if kind == "max" else min)(vals), f"over {len(vals)} runs"
    if kind in ("argmin", "argmax"):
        e = Expr(m["expr"], "expr")
        scored = [(number(e, rep, run, "expr"), i, lookup(rep, run, m["key"])) for i, (rep, run) in enumerate(runs)]
        best = (min if kind == "argmin" else max)(scored, key=lambda s: (s[0], s[1]))
        if best[2] is MISSING or not isinstance(best[2], (int, float)):
            raise CheckError(f"{kind}: key \"{m['key']}\" has no number at the best run")
        return best[2], None
    if kind in ("slope", "exponent"):
        x, y = Expr(m["x"], "x"), Expr(m["y"], "y")
        pts = [(number(x, rep, run, "x"), number(y, rep, run, "y")) for rep, run in runs]
        pts = [(a, b) for a, b in pts if ("min_x" not in m or a >= m["min_x"]) and ("max_x" not in m or a <= m["max_x"])]
        if kind == "exponent":
            if any(a <= 0 or b <= 0 for a, b in pts):
                raise CheckError("exponent: a power law needs positive x and y")
            pts = [(math.log(a), math.log(b)) for a, b in pts]
        if len({a for a, _ in pts}) < 2:
            raise CheckError(f"{kind}: a fit needs runs at 2 or more values of x, found {len({a for a, _ in pts})}")
        b, _, db, _, r2 = least_squares([a for a, _ in pts], [c for _, c in pts])
        return b, f"± {db:.2g} (95 %), {len(pts)} runs" if len(pts) > 2 else f"{len(pts)} runs"
    tol = m.get("tolerance", 0.0)
    of = list((m.get("of") or {}).items())
    good = sum(1 for rep, run in runs if matches(rep, run, of) and ("holds" not in m or holds(m["holds"], rep, run, tol)))
    if kind == "all":
        return good, len(runs)
    return good / len(runs), f"{good} of {len(runs)} runs"


def verdict_of(chk, measured, extra):
    """(verdict, expected text). Equal: within the tolerance reproduced, within twice it partial.
    An inequality or between: holds with the tolerance as slack reproduced, with twice it partial.
    all: every run reproduced, some partial, none not."""
    kind = chk["metric"]["kind"]
    if kind == "all":
        return ("reproduced" if measured == extra else "partial" if measured > 0 else "not"), f"all {extra} runs"
    rel = chk["relation"]
    tol = float(chk.get("tolerance", 0.0))
    relative = chk.get("tolerance_kind", "relative") == "relative"
    e = chk["expect"]

    def slack(ref, k):
        return k * tol * (abs(ref) if relative else 1.0)

    def ok(k):
        if rel == "between":
            lo, hi = (constant(v, "", "") for v in e)
            return lo - slack(lo, k) <= measured <= hi + slack(hi, k)
        x = constant(e, "", "")
        s = slack(x, k)
        return {"equal": abs(measured - x) <= s, "<": measured < x + s, "<=": measured <= x + s,
                ">": measured > x - s, ">=": measured >= x - s}[rel]

    if rel == "between":
        lo, hi = (constant(v, "", "") for v in e)
        text = f"in [{fmt(lo)}, {fmt(hi)}]"
    else:
        text = ("" if rel == "equal" else rel + " ") + fmt(constant(e, "", ""))
    if tol:
        text += f" ± {fmt(tol * 100) + ' %' if relative else fmt(tol)}"
    return ("reproduced" if ok(1) else "partial" if tol and ok(2) else "not"), text


def fmt(v):
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int) or isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.4g}"


# --- the command ---------------------------------------------------------------------------------

def evaluate(led, only, cubesim, work, jobs, skip_slow=False):
    base = ROOT
    claims = [c for c in led["claims"] if not only or c["id"] in only]
    needed = {}
    for c in claims:
        chk = c["check"]
        if chk is None or (skip_slow and "slow" in c):
            continue
        cfgs = [chk["config"]]

        def sides(m):
            for side in ("a", "b"):
                if isinstance(m.get(side), dict):
                    if "config" in m[side]:
                        cfgs.append(m[side]["config"])
                    sides(m[side])

        sides(chk["metric"])
        for cfg in cfgs:
            ov = chk.get("overrides") or {}
            needed[run_key(cfg, ov)] = (cfg, ov)
    reports, failed = {}, {}

    def go(item):
        key, (cfg, ov) = item
        try:
            return key, run_one(cubesim, base, cfg, ov, work)[1], None
        except CheckError as e:
            return key, None, str(e)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        for key, rep, err in ex.map(go, sorted(needed.items())):
            if err:
                failed[key] = err
            else:
                reports[key] = rep
    results = []
    for c in claims:
        r = {"id": c["id"], "paper": c["paper"], "place": c["place"], "kind": c["kind"], "stored": c.get("verdict")}
        chk = c["check"]
        if chk is None:
            r.update(verdict="unchecked", reason=c["reason"])
            results.append(r)
            continue
        r["machine"] = chk["machine"]
        ov = chk.get("overrides") or {}
        if skip_slow and "slow" in c:  # not run: what the last full run measured
            r.update(verdict=c.get("verdict") or "unchecked", measured_text=c["slow"]["measured_text"],
                     expected=c["slow"]["expected"], skipped=True)
            results.append(r)
            continue

        def reports_of(cfg):
            key = run_key(cfg, ov)
            if key in failed:
                raise CheckError(failed[key])
            return [reports[key]]

        try:
            measured, extra = measure(chk["metric"], reports_of, chk["config"])
            machines = {lookup(rep, run, "machine") for cfg in [chk["config"]] for rep in reports_of(cfg)
                        for _, run in select([rep], list((chk["metric"].get("where") or {}).items()))}
            if chk["machine"] not in machines:
                raise CheckError(f"the check says machine \"{chk['machine']}\", its runs are on "
                                 f"{', '.join(sorted(str(m) for m in machines))}")
            verdict, expected = verdict_of(chk, measured, extra)
            # A claim a calibrated machine was fitted to holds by construction: not evidence
            # (docs/calibration.md). It is "fitted" while it holds, "not" if it stops holding.
            if c.get("fitted") and verdict in ("reproduced", "partial"):
                verdict = "fitted"
            r.update(verdict=verdict, measured=measured, expected=expected,
                     measured_text=(f"{measured} of {extra} runs hold" if chk["metric"]["kind"] == "all"
                                    else fmt(measured) + (f" ({extra})" if extra else "")))
            if verdict in ("not", "partial") and c.get("reason"):
                r["reason"] = c["reason"]
            if "slow" in c and (c["slow"]["measured_text"], c["slow"]["expected"]) != (r["measured_text"],
                                                                                        str(expected)):
                r["slow_stale"] = (f"measured {r['measured_text']}, expected {expected}; the ledger's \"slow\" "
                                   f"says {c['slow']['measured_text']}, {c['slow']['expected']}")
        except CheckError as e:
            r.update(verdict="error", error=str(e))
        results.append(r)
    return results


def counts(results):
    table = {p: {v: 0 for v in VERDICTS} for p in PAPERS}
    for r in results:
        if r["verdict"] in VERDICTS:
            table[r["paper"]][r["verdict"]] += 1
    return table


def cell(text, limit=None):
    text = " ".join(str(text).split())
    if limit and len(text) > limit:
        text = text[:limit - 1].rstrip() + "…"
    return text.replace("|", "\\|")


def markdown(led, results, ledger_path):
    by_id = {c["id"]: c for c in led["claims"]}
    tab = counts(results)
    out = ["# The papers' claims, checked",
           "",
           "<!-- Generated by `cubesim claims --markdown docs/claims.md` from claims/ledger.json; do not edit. "
           "The test claims.ledger fails when this file is stale. -->",
           "",
           "Every quantitative statement of the four papers that the project has filed, with its quote and",
           "place, the config that checks it, the machine it runs on, the tolerance and why, and the verdict",
           "measured now. `cubesim claims` runs the ledger (`claims/ledger.json`, schema",
           f"`{LEDGER_SCHEMA}`): each distinct config once, then a metric per claim over its report.",
           "",
           "Verdicts: **reproduced** — the measured value meets the relation within the tolerance (for",
           "`equal`, |measured − expected| ≤ tolerance; for an inequality or `between`, it holds with the",
           "tolerance as slack; for `all`, every selected run satisfies the predicate); **partial** — it",
           "does so only within twice the tolerance, or (`all`) for some but not all runs; **not** — it",
           "fails (the claim stays in the ledger with its reason); **fitted** — it holds, but a calibrated",
           "machine's value was fitted to it, so it is not evidence (docs/calibration.md); **unchecked** — no check (an input",
           "parameter, a figure whose values the text does not give, a lower bound over all algorithms, a",
           "model cubesim lacks), with the reason. Tolerances are relative unless marked absolute.",
           "Where a claim is about a measurement on a real machine, it is checked on the formula preset",
           "(the papers' τ, t_c, t_a), and where a calibrated preset exists (`caltech-mark2-measured`) once",
           "more on it, as a claim of its own (id ending `-measured`); docs/calibration.md says why the iPSC",
           "has none.",
           "Claims marked `slow` in the ledger (minutes each: the 1,024-node selection maps) keep the numbers",
           "their last full run measured; `cubesim claims` runs them and fails if those numbers changed, and",
           "the test suite (`--skip-slow`) reports them without running.",
           "",
           "Metrics: `value` (an expression over one run), `ratio` (run A over run B), `argmin`/`argmax`",
           "(the sweep key's value where an expression is least/greatest), `slope`/`exponent` (least",
           "squares of y on x, or of log y on log x), `max`/`min` (over the selected runs), `all` (a",
           "predicate every selected run must satisfy) and `fraction` (the share of runs that satisfy it).",
           "",
           "## Counts",
           "",
           "| paper | " + " | ".join(VERDICTS) + " | total |",
           "|---|" + "---|" * (len(VERDICTS) + 1)]
    for p in PAPERS:
        row = tab[p]
        out.append(f"| {p} | " + " | ".join(str(row[v]) for v in VERDICTS) + f" | {sum(row.values())} |")
    tot = {v: sum(tab[p][v] for p in PAPERS) for v in VERDICTS}
    out.append("| **all** | " + " | ".join(f"**{tot[v]}**" for v in VERDICTS) + f" | **{sum(tot.values())}** |")
    for p in PAPERS:
        rows = [r for r in results if r["paper"] == p]
        if not rows:
            continue
        out += ["", f"## {p}", "",
                "| id | place | quote | machine | measured | expected | verdict | reason / tolerance |",
                "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            c = by_id[r["id"]]
            chk = c["check"]
            if chk is None:
                out.append(f"| `{r['id']}` | {cell(c['place'])} | {cell(c['quote'], 160)} | – | – | – | unchecked | "
                           f"{cell(c['reason'])} |")
                continue
            note = cell(chk["why"])
            if r["verdict"] in ("not", "partial") and c.get("reason"):
                note = "**" + cell(c["reason"]) + "** " + note
            out.append(f"| `{r['id']}` | {cell(c['place'])} | {cell(c['quote'], 160)} | {chk['machine']} | "
                       f"{cell(r.get('measured_text', r.get('error', '')))} | {cell(r.get('expected', ''))} | "
                       f"{r['verdict']} | {note} |")
    return "\n".join(out) + "\n"


def cmd_claims(argv):
    ap = ArgParser(prog="cubesim claims", description="check the papers' claims (claims/ledger.json): one line per "
                                                      "claim, verdict counts per paper; docs/claims.md")
    ap.add_argument("--ledger", default=os.path.join(ROOT, "claims", "ledger.json"), help="the ledger (default claims/ledger.json)")
    ap.add_argument("--only", nargs="+", action="extend", metavar="ID", help="only these claims")
    ap.add_argument("--json", action="store_true", help="print the results as JSON (cubesim.claims-result/1)")
    ap.add_argument("--markdown", metavar="FILE", help="write the ledger's page (docs/claims.md) here")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="configs run at once (default one per core)")
    ap.add_argument("--work", help="keep the runs' reports here and reuse them (default: a temporary folder)")
    ap.add_argument("--skip-slow", action="store_true",
                    help="do not run the claims marked \"slow\" (minutes each): report what the ledger says a "
                         "full run measured (the test suite's way; a full run checks those numbers)")
    a = ap.parse_args(argv)
    if a.jobs < 1:
        raise InputError("--jobs", f"{a.jobs}: want at least 1")
    led = load_ledger(a.ledger)
    ids = {c["id"] for c in led["claims"]}
    for i in a.only or []:
        if i not in ids:
            raise InputError("--only", f"no claim \"{i}\" in {a.ledger}")
    cubesim = os.environ.get("CUBESIM_BIN") or os.path.join(ROOT, "build", "cubesim")
    with tempfile.TemporaryDirectory(prefix="cubesim-claims-") as tmp:
        work = a.work or tmp
        os.makedirs(work, exist_ok=True)
        results = evaluate(led, set(a.only or []), cubesim, work, a.jobs, a.skip_slow)
    errors = [r for r in results if r["verdict"] == "error"]
    errors += [dict(r, error=r["slow_stale"]) for r in results if r.get("slow_stale")]
    changed = [r for r in results if r["verdict"] != "error" and r["stored"] is not None and r["stored"] != r["verdict"]]
    if a.markdown:
        text = markdown(led, results, a.ledger)
        tmpf = a.markdown + ".tmp"
        with open(tmpf, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmpf, a.markdown)
    if a.json:
        print(json.dumps({"schema": "cubesim.claims-result/1", "ledger": a.ledger, "claims": results,
                          "counts": counts(results)}, indent=1, sort_keys=True, ensure_ascii=False))
    else:
        width = max(len(r["id"]) for r in results)
        for r in results:
            if r["verdict"] == "unchecked":
                line = f"{r['id']:<{width}}  unchecked   {r['reason']}"
            elif r["verdict"] == "error":
                line = f"{r['id']:<{width}}  ERROR       {r['error']}"
            else:
                line = (f"{r['id']:<{width}}  {r['verdict']:<10}  measured {r['measured_text']}, "
                        f"expected {r['expected']} [{r['machine']}]")
            if r["verdict"] != "error" and r["stored"] is not None and r["stored"] != r["verdict"]:
                line += f"  (ledger says {r['stored']})"
            if r.get("skipped"):
                line += "  (slow: not run, the last full run's numbers)"
            print(line)
        tab = counts(results)
        print("verdicts: " + "; ".join(f"{p} " + ", ".join(f"{tab[p][v]} {v}" for v in VERDICTS)
                                       for p in PAPERS if sum(tab[p].values())))
    for r in errors:
        print(f"cubesim claims: {r['id']}: the check failed: {r['error']}", file=sys.stderr)
    for r in changed:
        print(f"cubesim claims: {r['id']}: verdict {r['verdict']}, the ledger says {r['stored']}", file=sys.stderr)
    return 1 if errors or changed else 0

#!/usr/bin/env python3
"""Docs that cannot go stale (issue 39): every example of README.md and docs/*.md, run or checked.

In the spirit of SimGrid's tesh files. Every fenced block of the README and of docs/ is one of:

- **a command block** (its first line is a command: `cubesim ...`, `./build/cubesim...`,
  `scripts/...`, `bash scripts/...`, `$ ...`): its commands run, in a scratch folder holding a copy
  of configs/, traces/, claims/, machines/ and figures/recipes, with `cubesim` (the binary under
  test) on PATH and at build/cubesim. Lines after a `$ command` line are its expected output,
  compared line by line (a `...` line stands for any number of lines; trailing blanks ignored).
  The blocks of one file share one scratch folder, in order, so a later block sees what an
  earlier one wrote;
- **a synopsis** (a command line with `[--option]` or `A|B` placeholders): each command it shows
  is a command of `cubesim help`, and its options are exactly those of `cubesim COMMAND --help`
  (none missing, none extra);
- **a JSON block**: parsed; a cubesim config is validated by `cubesim validate`;
- **text** (file formats, file trees, messages without a command): listed as not run.

An HTML comment on the lines just before a block's fence changes that (the comment does not show
on GitHub or in a rendered page):

    <!-- doc-test: skip -- why -->            not run; the reason is printed
    <!-- doc-test: setup -- shell command --> run first (repeatable)
    <!-- doc-test: env -- K=V K2=V2 -->       the block's environment ($PWD: the scratch folder,
                                              $NAME: the environment's NAME)
    <!-- doc-test: args -- ARGS -->           appended to each command of the block (a benchmark
                                              listed, not timed: the command is checked, not the time)
    <!-- doc-test: exit -- N -->              the exit status expected of the block's last command
    <!-- doc-test: output-of -- command -->   the block is the output of this command (tesh)
    <!-- doc-test: options-in -- command -->  every --option of the block occurs in its output
    <!-- doc-test: keys-in -- command -->     a JSON excerpt: each "key": of the block is a key of
                                              the command's JSON output
    <!-- doc-test: text -->                   not a command, though it looks like one

Outside the blocks, every `inline code` span is checked where it names something the code has:
`cubesim COMMAND --option ...` (the command and its options exist), a path of the repository
(configs/..., docs/..., scripts/..., tests/...: the file exists), an algorithm (`family.variant`
of a registered family: registered), a machine preset (`ipsc-*`, `caltech-*`, `cm*`, `mesh*d`:
a preset) and the counts the README and docs state (COUNTS below: each compared with the command
that counts it). The output lists everything checked.

Environment: CUBESIM_BIN (the binary; default build/cubesim). A block that runs longer than its
timeout (120 s) fails. A command that needs the repository's own build (scripts/quickstart.sh)
runs only when CUBESIM_BIN is ROOT/build/cubesim (as in CI); otherwise it is listed as skipped.
"""
import functools
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.abspath(os.environ.get("CUBESIM_BIN", os.path.join(ROOT, "build", "cubesim")))
DOCS = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
TIMEOUT = 120
# What a scratch folder holds: copies, so that no example can write into the repository.
COPIED = ["configs", "traces", "claims", "machines", os.path.join("figures", "recipes")]

FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!--\s*doc-test:\s*([\w-]+)\s*(?:--\s*(.*?))?\s*-->\s*$")
COMMAND = re.compile(r"^(\$ |\./build/cubesim|cubesim\s+[a-z]|(bash\s+)?scripts/\S+\.sh|smpirun\s)")
PLACEHOLDER = re.compile(r"\[--|(?<![\w${])[A-Z][A-Z_]{2,}\b")


def run(cmd, cwd, env=None, timeout=TIMEOUT):
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def cubesim_out(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, f"cubesim {' '.join(args)}: {p.stderr}"
    return p.stdout


class Block:
    def __init__(self, path, line, lang, lines, markers):
        self.path, self.line, self.lang, self.lines, self.markers = path, line, lang, lines, markers

    def marker(self, key):
        return [v for k, v in self.markers if k == key]

    def where(self):
        return f"{self.path}:{self.line}"


def blocks_and_text(path):
    """The fenced blocks of a markdown file (with the doc-test markers just above each) and the
    text outside them (line number, line)."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks, text, i = [], [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            text.append((i + 1, lines[i]))
            i += 1
            continue
        markers, j = [], i - 1
        while j >= 0 and MARKER.match(lines[j]):
            mm = MARKER.match(lines[j])
            markers.insert(0, (mm.group(1), mm.group(2) or ""))
            j -= 1
        start, i = i, i + 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        blocks.append(Block(path, start + 1, m.group(1), body, markers))
    return blocks, text


def logical_lines(lines):
    """Lines with backslash continuations joined."""
    out, cur = [], ""
    for ln in lines:
        if ln.rstrip().endswith("\\"):
            cur += ln.rstrip()[:-1] + " "
        else:
            out.append(cur + ln)
            cur = ""
    if cur:
        out.append(cur)
    return out


def kind_of(b):
    keys = {k for k, _ in b.markers}
    for k in ("skip", "text", "output-of", "options-in", "keys-in"):
        if k in keys:
            return k
    if b.lang == "json":
        return "json"
    first = next((ln for ln in b.lines if ln.strip()), "")
    if b.lang in ("", "sh", "bash", "console") and COMMAND.match(first.strip()):
        if any(PLACEHOLDER.search(ln) for ln in b.lines if ln.strip().startswith("cubesim")):
            return "synopsis"
        return "commands"
    return "text"


_help = {}


def help_options(command):
    """The long options of `cubesim COMMAND --help` (or of cubesim itself for None)."""
    if command not in _help:
        args = [command, "--help"] if command else ["--help"]
        p = subprocess.run([BIN, *args], capture_output=True, text=True, cwd=ROOT)
        # The options section only: a description may quote another command's option.
        text = re.split(r"^options:\s*$", p.stdout, maxsplit=1, flags=re.M | re.I)[-1]
        _help[command] = None if p.returncode != 0 else set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text)) - {"--help"}
    return _help[command]


@functools.lru_cache(maxsize=None)
def commands():
    out = cubesim_out("--help")
    return set(re.findall(r"^  ([a-z][a-z-]+)\s{2,}", out.split("Subcommands:")[1], re.M))


def tesh_match(expected, actual):
    """Each expected line equals the next actual line (trailing blanks ignored); a `...` line
    skips any number of actual lines. Returns None or what differs."""
    exp = [ln.rstrip() for ln in expected]
    act = [ln.rstrip() for ln in actual]
    while exp and not exp[-1]:
        exp.pop()
    while act and not act[-1]:
        act.pop()

    def go(i, j):
        if i == len(exp):
            return j == len(act) or (i > 0 and exp[i - 1] == "...")
        if exp[i] == "...":
            return any(go(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and exp[i] == act[j] and go(i + 1, j + 1)

    if go(0, 0):
        return None
    for k, e in enumerate(exp):
        if e != "..." and e not in act:
            return f"expected line {k + 1} not in the output: {e!r}"
    return "the lines are all there but not in this order or with other lines between: " + "\n".join(act[:40])


class Scratch:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="cubesim-doc-test-")
        for d in COPIED:
            shutil.copytree(os.path.join(ROOT, d), os.path.join(self.dir, d))
        os.makedirs(os.path.join(self.dir, "bin"))
        os.makedirs(os.path.join(self.dir, "build"))
        os.symlink(BIN, os.path.join(self.dir, "bin", "cubesim"))
        for name in ("cubesim", "cubesim_bench"):
            src = os.path.join(os.path.dirname(BIN), name)
            if os.path.exists(src):
                os.symlink(src, os.path.join(self.dir, "build", name))
        # scripts/ and tests/ as in the repository (read only by the examples: fake sbatch, slurm-sweep.sh)
        for d in ("scripts", "tests"):
            os.symlink(os.path.join(ROOT, d), os.path.join(self.dir, d))
        self.env = dict(os.environ, PATH=os.path.join(self.dir, "bin") + os.pathsep + os.environ.get("PATH", ""))

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class DocExamples(unittest.TestCase):
    """Every fenced block of README.md and docs/, by kind."""

    def test_every_block(self):
        tally = {}
        for path in DOCS:
            blocks, _ = blocks_and_text(path)
            scratch = None
            try:
                for b in blocks:
                    k = kind_of(b)
                    tally[k] = tally.get(k, 0) + 1
                    with self.subTest(block=b.where(), kind=k):
                        if k in ("commands", "output-of", "options-in", "keys-in") and scratch is None:
                            scratch = Scratch()
                        getattr(self, "check_" + k.replace("-", "_"))(b, scratch)
            finally:
                if scratch:
                    scratch.close()
        print("blocks:", ", ".join(f"{n} {k}" for k, n in sorted(tally.items())), file=sys.stderr)
        self.assertGreater(tally.get("commands", 0), 5)

    def check_skip(self, b, _):
        print(f"  {b.where()}: skipped: {b.marker('skip')[0]}", file=sys.stderr)

    def check_text(self, b, _):
        print(f"  {b.where()}: text, not run", file=sys.stderr)

    def check_json(self, b, _):
        try:
            doc = json.loads("\n".join(b.lines))
        except json.JSONDecodeError:
            print(f"  {b.where()}: JSON excerpt (not a whole document), not run", file=sys.stderr)
            return
        if isinstance(doc, dict) and doc.get("schema") == "cubesim.config/1":
            with tempfile.TemporaryDirectory() as d:
                p = os.path.join(d, "example.json")
                with open(p, "w", encoding="utf-8") as f:
                    json.dump(doc, f)
                r = subprocess.run([BIN, "validate", p], capture_output=True, text=True, cwd=ROOT)
                self.assertEqual(r.returncode, 0, f"{b.where()}: the example config does not validate: {r.stderr}")
            print(f"  {b.where()}: config, validated", file=sys.stderr)
        else:
            print(f"  {b.where()}: JSON, parsed", file=sys.stderr)

    def check_synopsis(self, b, _):
        cmds = commands()
        for ln in logical_lines_grouped(b.lines):
            for part in re.split(r"\s{2,}(?=cubesim )", ln):
                toks = part.split()
                if not toks or toks[0] != "cubesim":
                    continue
                if len(toks) > 1 and toks[1] in cmds:
                    cmd = toks[1]
                    have = help_options(cmd)
                    shown = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", part)) - {"--help"}
                    self.assertLessEqual(shown, have, f"{b.where()}: options of `cubesim {cmd}` that it does not have")
                    self.assertEqual(have - shown, set(), f"{b.where()}: options of `cubesim {cmd}` that the synopsis omits")
                    print(f"  {b.where()}: synopsis of cubesim {cmd}: {len(shown)} options, all of --help", file=sys.stderr)
                else:
                    shown = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", part)) - {"--help"}
                    self.assertLessEqual(shown, help_options(None), f"{b.where()}: {part}")

    def env_of(self, b, scratch):
        env = dict(scratch.env)
        here = dict(env, PWD=scratch.dir)
        for e in b.marker("env"):
            for kv in shlex.split(e):
                k, v = kv.split("=", 1)
                env[k] = re.sub(r"\$(\w+)", lambda m: here.get(m.group(1), ""), v)
        return env

    def setup(self, b, scratch, env):
        for cmd in b.marker("setup"):
            p = run(cmd, scratch.dir, env)
            self.assertEqual(p.returncode, 0, f"{b.where()}: setup `{cmd}`: {p.stdout}{p.stderr}")

    def check_commands(self, b, scratch):
        env = self.env_of(b, scratch)
        self.setup(b, scratch, env)
        expect_exit = int(b.marker("exit")[0]) if b.marker("exit") else 0
        steps = []  # (command, expected output lines or None)
        tesh = any(ln.startswith("$ ") for ln in b.lines)
        for ln in logical_lines(b.lines):
            if tesh:
                if ln.startswith("$ "):
                    steps.append((ln[2:], []))
                elif steps:
                    steps[-1][1].append(ln)
            elif ln.strip() and not ln.strip().startswith("#"):
                steps.append((ln.strip(), None))
        extra = " ".join(b.marker("args"))
        if extra:
            steps = [(re.sub(r"(\s+#.*)?$", " " + extra, c, count=1), e) for c, e in steps]
        for n, (cmd, expected) in enumerate(steps):
            if cmd.startswith("./build/cubesim_bench") and not os.path.exists(os.path.join(scratch.dir, "build", "cubesim_bench")):
                print(f"  {b.where()}: `{cmd}`: not run (no cubesim_bench beside {BIN}: CUBESIM_BUILD_BENCH=OFF)", file=sys.stderr)
                continue
            if "scripts/test.sh" in cmd:
                print(f"  {b.where()}: `{cmd}`: not run (it is the command that runs this test)", file=sys.stderr)
                continue
            if "scripts/quickstart.sh" in cmd:
                if BIN != os.path.join(ROOT, "build", "cubesim"):
                    print(f"  {b.where()}: `{cmd}`: not run (it builds build/; the binary under test is {BIN})", file=sys.stderr)
                    continue
                p = run(cmd.split("#")[0], ROOT, env, timeout=600)
            else:
                p = run(cmd, scratch.dir, env)
            want = expect_exit if n == len(steps) - 1 else 0
            self.assertEqual(p.returncode, want, f"{b.where()}: `{cmd}` exited {p.returncode}: {p.stderr[-2000:]}")
            if expected:
                diff = tesh_match(expected, (p.stdout + p.stderr).split("\n"))
                self.assertIsNone(diff, f"{b.where()}: `{cmd}`: {diff}")
            print(f"  {b.where()}: ran `{cmd[:100]}`" + (" and compared its output" if expected else ""), file=sys.stderr)

    def run_marked(self, b, scratch, key, exit_code=0):
        """Runs the block's setup, then the command of its marker `key`; checks the exit status."""
        env = self.env_of(b, scratch)
        self.setup(b, scratch, env)
        cmd = b.marker(key)[0]
        p = run(cmd, scratch.dir, env)
        self.assertEqual(p.returncode, exit_code, f"{b.where()}: `{cmd}`: {p.stderr[-2000:]}")
        return cmd, p

    def check_output_of(self, b, scratch):
        cmd, p = self.run_marked(b, scratch, "output-of", int(b.marker("exit")[0]) if b.marker("exit") else 0)
        diff = tesh_match(b.lines, (p.stdout + p.stderr).split("\n"))
        self.assertIsNone(diff, f"{b.where()}: output of `{cmd}`: {diff}")
        print(f"  {b.where()}: the output of `{cmd[:100]}`, compared", file=sys.stderr)

    def check_keys_in(self, b, scratch):
        cmd, p = self.run_marked(b, scratch, "keys-in")
        keys = set()

        def walk(v):
            if isinstance(v, dict):
                for k, x in v.items():
                    keys.add(k)
                    walk(x)
            elif isinstance(v, list):
                for x in v:
                    walk(x)

        walk(json.loads(p.stdout))
        shown = set(re.findall(r'"([\w.]+)"\s*:', "\n".join(b.lines)))
        self.assertEqual(shown - keys, set(), f"{b.where()}: keys the output of `{cmd}` does not have")
        print(f"  {b.where()}: {len(shown)} keys, each in the JSON of `{cmd[:100]}`", file=sys.stderr)

    def check_options_in(self, b, scratch):
        cmd, p = self.run_marked(b, scratch, "options-in")
        opts = re.findall(r"(?<![\w-])(--\S+)", "\n".join(b.lines).replace("\\", " "))
        for o in opts:
            self.assertIn(o, p.stdout, f"{b.where()}: {o} is not in the output of `{cmd}`")
        print(f"  {b.where()}: {len(opts)} options, each in the output of `{cmd[:100]}`", file=sys.stderr)


def logical_lines_grouped(lines):
    """Synopsis lines: a line that starts with `cubesim` and the indented lines under it."""
    out = []
    for ln in lines:
        ln = re.sub(r"\s+#.*$", "", ln)  # a comment ends each physical line
        if ln.startswith(" ") and out:
            out[-1] += " " + ln.strip()
        else:
            out.append(ln.strip())
    return out


# Counts that the README and docs state, each with the command that counts it. A pattern's groups
# are compared with the function's values, in order; every occurrence in every doc is checked.
def _regress_counts():
    p = subprocess.run([BIN, "regress", "configs/regress", "--json", "--reproducible"], capture_output=True,
                       text=True, cwd=ROOT)
    rep = json.loads(p.stdout)
    return [len(rep["experiments"]), sum(e["runs"] for e in rep["experiments"])]


def _bad_input_cases():
    tests = os.path.join(os.path.dirname(BIN), "cubesim_tests")
    p = subprocess.run([tests, "--gtest_list_tests", "--gtest_filter=Corpus/BadInput.*"], capture_output=True, text=True)
    return [sum(1 for ln in p.stdout.split("\n") if ln.startswith("  "))]


def _ledger_counts():
    with open(os.path.join(ROOT, "claims", "ledger.json"), encoding="utf-8") as f:
        led = json.load(f)
    verdicts = [c.get("verdict", "unchecked") for c in led["claims"]]
    counts = [verdicts.count(v) for v in ("reproduced", "partial", "not", "fitted", "unchecked")]
    return [len(verdicts) - counts[-1], *counts]


def _sweep_configs():
    n = 0
    for f in glob.glob(os.path.join(ROOT, "configs", "**", "*.json"), recursive=True):
        with open(f, encoding="utf-8") as fh:
            c = json.load(fh)
        if isinstance(c, dict) and c.get("schema") == "cubesim.config/1" and \
                any(len(v) > 1 for v in c.get("sweep", {}).values()):
            n += 1
    return [n]


COUNTS = [
    (r"\bof (\d+) algorithms\b", lambda: [len(cubesim_out("list", "algorithms").strip().split("\n"))],
     "cubesim list algorithms | wc -l"),
    (r"\b(\d+) machine presets", lambda: [len(cubesim_out("list", "machines").strip().split("\n"))],
     "cubesim list machines | wc -l"),
    (r"\b(\d+)\s+experiments, ([\d,]+) runs", _regress_counts, "cubesim regress configs/regress --json"),
    (r"corpus of such inputs \((\d+) cases", _bad_input_cases,
     "cubesim_tests --gtest_list_tests --gtest_filter='Corpus/BadInput.*'"),
    (r"\b(\d+) checked — (\d+) reproduced, (\d+) partial, (\d+) not\b.{0,400}?\b(\d+) fitted — and (\d+) unchecked",
     _ledger_counts,
     "claims/ledger.json verdicts"),
    (r"\b(\d+) figure recipes", lambda: [len(glob.glob(os.path.join(ROOT, "figures", "recipes", "*.json")))],
     "ls figures/recipes/*.json | wc -l"),
    (r"Every shipped config with a sweep \((\d+) of them", _sweep_configs, "configs/**/*.json with a sweep"),
]

# Paths the prose quotes in another project's repository.
OTHER_REPOSITORIES = {"docs/source/Configuring_SimGrid.rst"}  # SimGrid's (docs/simgrid.md)

# Names the prose quotes on purpose although no preset has them (each says so where it stands).
NOT_PRESETS = {"ipsc-d7": "README: an example value of --set", "ipsc-measured": "docs/calibration.md: why there is none"}


class DocNames(unittest.TestCase):
    """The names, options, paths and counts the prose quotes."""

    @classmethod
    def setUpClass(cls):
        cls.algorithms = {ln.split()[0] for ln in cubesim_out("list", "algorithms").strip().split("\n")}
        cls.families = {a.split(".")[0] for a in cls.algorithms}
        cls.machines = {ln.split()[0] for ln in cubesim_out("list", "machines").strip().split("\n")}
        cls.commands = commands()
        cls.texts = {}
        for path in DOCS:
            _, text = blocks_and_text(path)
            cls.texts[path] = text

    def spans(self):
        for path, text in self.texts.items():
            # Spans may not cross lines here (the docs wrap at 100 columns, a span seldom does).
            for no, ln in text:
                for m in re.finditer(r"`([^`]+)`", ln):
                    yield path, no, m.group(1).strip()

    def test_commands_and_options(self):
        n = 0
        for path, no, s in self.spans():
            m = re.match(r"^(?:\./build/)?cubesim\s+([a-z][a-z-]*)(\s.*|)$", s)
            if not m or m.group(1).startswith("-"):
                continue
            cmd = m.group(1)
            with self.subTest(where=f"{path}:{no}", span=s):
                self.assertIn(cmd, self.commands, f"{path}:{no}: `{s}`: no command {cmd}")
                opts = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", m.group(2))) - {"--help"}
                self.assertLessEqual(opts, help_options(cmd), f"{path}:{no}: `{s}`")
                n += 1
        print(f"DocNames: {n} inline cubesim commands, their options in --help", file=sys.stderr)
        self.assertGreater(n, 50)

    def test_paths(self):
        n = 0
        for path, no, s in self.spans():
            for tok in s.split():
                tok = tok.strip("(),;:'\"")
                m = re.match(r"^(configs|docs|scripts|tests|figures|claims|machines|traces|app|sim|algorithms|bench)/"
                             r"[\w./*{},-]+$", tok)
                if not m or re.search(r"[A-Z]{2,}|<|\.\.\.|\{", tok) or tok in OTHER_REPOSITORIES:
                    continue
                tok = tok.rstrip(".")
                with self.subTest(where=f"{path}:{no}", path=tok):
                    found = glob.glob(os.path.join(ROOT, tok)) if "*" in tok else \
                        os.path.exists(os.path.join(ROOT, tok)) or glob.glob(os.path.join(ROOT, tok + ".*"))
                    self.assertTrue(found, f"{path}:{no}: {tok} does not exist")
                    n += 1
        print(f"DocNames: {n} repository paths, each exists", file=sys.stderr)
        self.assertGreater(n, 50)

    def test_algorithms_and_machines(self):
        na = nm = 0
        for path, no, s in self.spans():
            m = re.match(r"^([a-z0-9_]+)\.([a-z0-9_]+)$", s)
            if m and m.group(1) in self.families and m.group(2) not in ("json", "cpp", "hpp", "md", "py", "csv", "txt"):
                with self.subTest(where=f"{path}:{no}", algorithm=s):
                    self.assertIn(s, self.algorithms, f"{path}:{no}: no algorithm {s}")
                    na += 1
            if re.match(r"^(ipsc-[a-z0-9-]+|caltech-[a-z0-9-]+|cm2?|cm-router|mesh[123]d)$", s) and s not in NOT_PRESETS:
                with self.subTest(where=f"{path}:{no}", machine=s):
                    self.assertIn(s, self.machines, f"{path}:{no}: no machine preset {s}")
                    nm += 1
        print(f"DocNames: {na} algorithm names, {nm} machine names, each registered", file=sys.stderr)
        self.assertGreater(na, 50)
        self.assertGreater(nm, 10)

    def test_counts(self):
        n = 0
        for pattern, count, how in COUNTS:
            actual = None
            for path, text in self.texts.items():
                whole = " ".join(ln for _, ln in text)
                for m in re.finditer(pattern, whole):
                    if actual is None:
                        actual = count()
                    stated = [int(g.replace(",", "")) for g in m.groups()]
                    with self.subTest(where=path, statement=m.group(0)):
                        self.assertEqual(stated, actual, f"{path}: \"{m.group(0)}\": {how} gives {actual}")
                    n += 1
                    print(f"  {path}: \"{m.group(0)[:70]}\" = {how}", file=sys.stderr)
        print(f"DocNames: {n} counts, each from its command", file=sys.stderr)
        self.assertGreater(n, 3)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]], verbosity=2)

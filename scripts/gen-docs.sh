#!/usr/bin/env bash
# Regenerates the tables in README.md and docs/*.md that are generated from the registry: every
# block between "<!-- BEGIN generated: cubesim ARGS -->" and "<!-- END generated -->" is replaced
# by the output of `build/cubesim ARGS`. The test Docs.GeneratedTablesAreCurrent fails until this
# has been run after a change to the registry.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/cubesim ] || scripts/build.sh
python3 - README.md docs/*.md <<'PY'
import re, subprocess, sys
pat = re.compile(r'(<!-- BEGIN generated: cubesim ([^>]*?) -->\n)(.*?)(<!-- END generated -->)', re.S)
for path in sys.argv[1:]:
    text = open(path).read()
    def fill(m):
        out = subprocess.run(['build/cubesim'] + m.group(2).split(), check=True, capture_output=True, text=True).stdout
        return m.group(1) + out + m.group(4)
    new = pat.sub(fill, text)
    if new != text:
        open(path, 'w').write(new)
        print('updated', path)
PY

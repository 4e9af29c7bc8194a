#!/usr/bin/env bash
# Regenerates what is generated from the code's tables:
# - the tables in README.md and docs/*.md (docs/reference.md among them): every block between
#   "<!-- BEGIN generated: cubesim ARGS -->" and "<!-- END generated -->" is replaced by the output
#   of `build/cubesim ARGS`. The test Docs.GeneratedTablesAreCurrent fails until this has been run
#   after a change to the registry, the parameter docs or the machine keys;
# - the "description"s of configs/schema.json, from `build/cubesim describe --schema-descriptions`
#   (a JSON pointer to each described schema, and its text); the test
#   Describe.SchemaDescriptionsComeFromTheTables fails until this has been run.
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
python3 - configs/schema.json <<'PY'
import json, subprocess, sys
path = sys.argv[1]
WIDTH = 120
descriptions = json.loads(subprocess.run(['build/cubesim', 'describe', '--schema-descriptions'], check=True,
                                         capture_output=True, text=True).stdout)
schema = json.load(open(path))
for pointer, text in descriptions.items():
    node = schema
    for part in pointer.lstrip('/').split('/'):
        node = node[part.replace('~1', '/').replace('~0', '~')]
    rest = {k: v for k, v in node.items() if k != 'description'}
    node.clear()
    node['description'] = text
    node.update(rest)

# The file's layout: an object or a list on one line where it fits in WIDTH columns (its
# description not counted, so that a described key stays one line; a list of names always),
# else one member a line.
def inline(v):
    if isinstance(v, dict):
        if not v: return '{}'
        return '{ ' + ', '.join(json.dumps(k, ensure_ascii=False) + ': ' + inline(x) for k, x in v.items()) + ' }'
    if isinstance(v, list):
        if any(isinstance(x, (dict, list)) for x in v):
            return '[ ' + ', '.join(inline(x) for x in v) + ' ]'
        return '[' + ', '.join(inline(x) for x in v) + ']'
    return json.dumps(v, ensure_ascii=False)
def fits(v, room):
    if isinstance(v, list) and not any(isinstance(x, (dict, list)) for x in v):
        return True  # a list of names (an enum) stays on one line
    if isinstance(v, dict) and 'description' in v:
        v = {k: x for k, x in v.items() if k != 'description'}
    return len(inline(v)) <= room
def fmt(v, ind, prefix):
    if not isinstance(v, (dict, list)) or fits(v, WIDTH - ind - prefix):
        return inline(v)
    pad = ' ' * (ind + 2)
    if isinstance(v, dict):
        items = [pad + json.dumps(k, ensure_ascii=False) + ': ' + fmt(x, ind + 2, len(json.dumps(k, ensure_ascii=False)) + 3)
                 for k, x in v.items()]
        return '{\n' + ',\n'.join(items) + '\n' + ' ' * ind + '}'
    return '[\n' + ',\n'.join(pad + fmt(x, ind + 2, 1) for x in v) + '\n' + ' ' * ind + ']'
new = fmt(schema, 0, 0) + '\n'
if new != open(path).read():
    open(path, 'w').write(new)
    print('updated', path)
PY

#!/usr/bin/python3
"""Every shipped config validates against configs/schema.json, and known-bad ones do not."""
import glob
import json
import os
import sys

import jsonschema

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
schema = json.load(open(os.path.join(root, "configs", "schema.json")))
validator = jsonschema.Draft202012Validator(schema)
jsonschema.Draft202012Validator.check_schema(schema)

passed = failed = 0
for path in sorted(glob.glob(os.path.join(root, "configs", "**", "*.json"), recursive=True)):
    if os.path.basename(path) == "schema.json":
        continue
    doc = json.load(open(path))
    if isinstance(doc, dict) and doc.get("schema") in ("cubesim.suite/1", "cubesim.golden/1"):
        continue  # regression suites and golden values: checked by cubesim regress itself
    errors = list(validator.iter_errors(doc))
    if errors:
        failed += 1
        print(f"FAIL {os.path.relpath(path, root)}: {errors[0].json_path}: {errors[0].message}")
    else:
        passed += 1
        print(f"ok   {os.path.relpath(path, root)}")

good = {"schema": "cubesim.config/1", "machine": "ipsc-nx", "algorithm": "broadcast.sbt",
        "topology": {"kind": "hypercube", "dim": 3}, "params": {"M": 10}}
bad_cases = {
    "unknown key": {**good, "colour": 1},
    "bad unit": {**good, "machine_overrides": {"tau": "3 parsecs"}},
    "bad type": {**good, "params": {"M": "lots"}},
    "bad ports": {**good, "machine_overrides": {"ports": "many"}},
    "bad topology": {**good, "topology": {"kind": "ring"}},
    "bad sweep key": {**good, "sweep": {"name": ["x"]}},
    "bad preset selector": {**good, "machine": "presets:"},
    "bad swept preset selector": {**good, "sweep": {"machine": "presets:kind"}},
    "selector for another axis": {**good, "sweep": {"params.M": "presets"}},
}
for name, cfg in bad_cases.items():
    if validator.is_valid(cfg):
        failed += 1
        print(f"FAIL schema accepts a config with a {name}")
    else:
        passed += 1
for cfg in (good, {**good, "machine": "presets"}, {**good, "machine": "presets:kind=formula,switching=pipelined"},
            {**good, "sweep": {"machine": "presets:switching=store_and_forward"}},
            {**good, "sweep": {"machine_overrides.B_copy": [0, 64]}}):
    if not validator.is_valid(cfg):
        failed += 1
        print(f"FAIL schema rejects a good config: {cfg}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)

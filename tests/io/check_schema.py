"""Validates JSON graph files against docs/weft-graph.schema.json, and checks
that the schema refuses what the loader refuses (unknown keys and props, a
reduction kind foreign to its class).
Usage: check_schema.py SCHEMA FILE...  (exit 1 naming every invalid file)."""
import json
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("check_schema: python3-jsonschema is missing (tools/dev/deps.sh installs it)")

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

bad = 0
for path in sys.argv[2:]:
    errors = sorted(validator.iter_errors(json.load(open(path))), key=str)
    for e in errors[:3]:
        print(f"{path}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
    bad += bool(errors)
print(f"check_schema: {len(sys.argv) - 2 - bad} of {len(sys.argv) - 2} graphs valid")

HEAD = {"format": "weft-graph", "version": 1,
        "inputs": [{"id": 0, "dtype": "float64", "shape": [3]}], "outputs": [1]}
def node(**kw):
    return dict(HEAD, nodes=[dict({"op": "Exp", "inputs": [0], "outputs": [1]}, **kw)])
refused = {
    "unknown top-level key": dict(node(), extra=1),
    "unknown node key": node(name=["e"]),
    "unknown props key": node(props={"inplace": -1, "inpalce": 0}),
    "props on Dot": node(op="Dot", inputs=[0, 0], props={"x": 1}),
    "Mean kind on Sum": node(op="Sum", props={"kind": "Mean", "ndim": 1, "axes": [0],
                                              "keepdims": False}),
}
for what, doc in refused.items():
    if validator.is_valid(doc):
        print(f"check_schema: the schema accepts a graph with {what}")
        bad += 1
sys.exit(1 if bad else 0)

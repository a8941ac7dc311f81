#!/usr/bin/env python3
"""Checks the files example_profiling wrote in DIR (default: the current
folder) and prints one line per file, which its test compares with
expected/profiling.txt: the text report names the function and has its
Apply table; profile.json parses; trace.json parses and holds one complete
("X") event per node of the last call.   Usage: check_profiling.py [DIR]"""
import json
import os
import sys

d = sys.argv[1] if len(sys.argv) > 1 else "."


def load(name):
    try:
        with open(os.path.join(d, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


with open(os.path.join(d, "profile.txt")) as f:
    text = f.read()
profile, trace = load("profile.json"), load("trace.json")
name = profile["function"] if profile else "?"
ok = lambda c: "OK" if c else "NO"
print("profile.txt: report of %s with its Apply table: %s"
      % (name, "OK" if name in text and "Apply" in text else "MISSING"))
print("profile.json: parses as JSON: %s" % ok(profile is not None))
events = trace["traceEvents"] if isinstance(trace, dict) else (trace or [])
nodes = len(profile["applies"]) if profile else -1
print("trace.json: parses as JSON: %s; one event per node: %s"
      % (ok(trace is not None), ok(sum(e.get("ph") == "X" for e in events) == nodes)))

"""weft-ops-bench's NumPy side: tools/opsbench/numpy_child.c starts it once
per run and sends one job per op row.

Protocol. First line written: "ready numpy=<version>". Then, for each line
read on stdin (tab-separated):

    name  reps  a.npy  b.npy|-  ref.npy  expression

it loads the inputs a (and b) and weft's result ref, evaluates the Python
expression (over np, a, b and out = np.empty_like(ref), so that a ufunc
writes into memory already touched, as weft's warm call does) once to warm
up, then reps times timed with time.perf_counter, and answers one line:

    ok <median ms> yes|no

yes when the result has ref's shape and dtype and
np.allclose(result, ref, rtol=1e-9, atol=1e-9, equal_nan=True); or
"err <message>" when the job failed. EOF on stdin ends the process.
"""
import statistics
import sys
import time

import numpy as np

RTOL = 1e-9
ATOL = 1e-9


def run(job):
    name, reps, path_a, path_b, path_ref, expr = job.rstrip("\n").split("\t", 5)
    ref = np.load(path_ref)
    env = {
        "np": np,
        "a": np.load(path_a),
        "b": None if path_b == "-" else np.load(path_b),
        "out": np.empty_like(ref),
    }
    code = compile(expr, "<%s>" % name, "eval")
    res = eval(code, env)
    times = []
    for _ in range(int(reps)):
        t0 = time.perf_counter()
        res = eval(code, env)
        times.append(time.perf_counter() - t0)
    res = np.asarray(res)
    agree = (res.shape == ref.shape and res.dtype == ref.dtype and
             bool(np.allclose(res, ref, rtol=RTOL, atol=ATOL, equal_nan=True)))
    return "ok %.6f %s" % (1e3 * statistics.median(times), "yes" if agree else "no")


def main():
    print("ready numpy=" + np.__version__, flush=True)
    for job in sys.stdin:
        try:
            reply = run(job)
        except Exception as e:  # reported to the tool, which prints numpy_ms=na
            reply = ("err %s: %s" % (type(e).__name__, e)).replace("\n", " ")
        print(reply, flush=True)


if __name__ == "__main__":
    main()

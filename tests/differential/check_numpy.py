#!/usr/bin/env python3
"""The NumPy differential test of weft (docs/testing.md).

Starts weft_diff_runner, which builds seeded random graphs of every op
family and runs each in modes none / fast_compile / fast_run on 1 and 2
workers; evaluates every graph (saved as JSON) with NumPy
(weft_numpy_ref.py) and compares:

- shapes and dtypes exactly; integers and bools exactly; floats exactly
  where weft promises it (IEEE arithmetic, comparisons, casts, selections,
  max/min), within the tolerances of weft_numpy_ref.py elsewhere; NaN where
  NumPy has NaN;
- an error from weft exactly where NumPy raises;
- the outputs of a mode on 1 and 2 workers bit for bit (function.h);
- weft's promises about itself that the runner checks (repeated calls,
  unwritten inputs, unaliased fresh outputs);
- gradients against finite differences (weft_verify_grad) for the smooth
  'grad' family.

fast_run may instead give what the fast_math identities give (x-x -> 0, ...:
weft_numpy_ref.py), element by element, but never another shape.

Usage: check_numpy.py --runner PATH [--cases N] [--seed S|random] [--case K]
The seed also comes from the environment (WEFT_SEED); the default is 1.
The last line is `differential: cases=N mismatches=M known=K seed=S`; the
exit status is 1 when M > 0. Every mismatch prints a reproducer: the seed,
the case index (rerun it alone with --case K) and the graph.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time
import traceback
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import weft_numpy_ref as ref  # noqa: E402

ALL, FAST_RUN, GRAD, THREADS, SELF = ('all runs', 'fast_run', 'gradient check', 'worker counts',
                                      'self')
FAST_MATH_OFF = 'fast_math excluded'

# Known defects (issue 14). A mismatch is excused - counted as `known`, not
# failing - only in a case where the entry's detector (detect_known below)
# fired, and only in the checks the entry names. Remove an entry once its
# fix is merged: the cases it excused must then pass.
KNOWN_BAD = {
    # empty: every defect this test found is fixed (docs/testing.md §1.3)
}


def from_dot(ev, vid):
    """Whether variable vid is a Dot, or a Dot times something."""
    p = ev.producer.get(vid)
    return bool(p) and (p['op'] == 'Dot' or (p['op'] == 'Mul' and any(
        ev.producer.get(i, {}).get('op') == 'Dot' for i in p['inputs'])))


def detect_known(ev, node, ins, out, tags):
    """Adds to tags the KNOWN_BAD entries that node may trigger (node['inputs']
    is None for a step inside a Composite)."""
    op = node['op']
    ids = node['inputs'] or []
    if op == 'Argmax' and ins[0].neg:
        tags.add('item 1')
    if op in ('Max', 'Min') and ins[0].neg:
        tags.add('item 1 grad')
    if op in ('Dot', 'Gemm', 'Gemv'):
        a, b = (ins[0], ins[1]) if op == 'Dot' else (ins[2], ins[3])
        if a.v.shape[-1] == 0:
            tags.add('item 2')
        m = int(np.prod(out.v.shape)) * a.v.shape[-1]
        if m >= 1 << 20:
            tags.add('item 9')
    if (op in ref.ELEMWISE or op == 'Composite') and out.v.size >= 8192:
        tags.add('item 9')  # large enough to be split over the workers
    x = ins[0].v if ins else None
    if op == 'Sgn' and x.dtype.kind == 'f' and np.any((x == 0) & np.signbit(x)):
        tags.add('new B')
    if op == 'Mul' and any(ev.is_const(i, 0) for i in ids):
        tags.add('item 3')
    if op == 'Add' and any(ev.is_const(i, 0) for i in ids):
        tags.add('new D')
    if op in ('Add', 'Sub') and any(from_dot(ev, i) for i in ids):
        tags.add('new E')
    if op in ('Mul', 'Div'):
        for i in ids:
            p = ev.producer.get(i)
            if p and p['op'] in ('Mul', 'Div') and p['op'] != op:
                tags.add('item 4')
    if op in ('Maximum', 'Minimum') and np.any(ins[0].v == ins[1].v):  # a tie
        tags.add('item 5')
    if op == 'Sigmoid':
        x = ref.f64(ins[0].v)
        lo, hi = (-746, -708) if ins[0].v.dtype == np.float64 else (-105, -87)
        if np.any((x > lo) & (x < hi)):
            tags.add('item 6')
    to = ref.DTYPES[node['props']['dtype']] if op == 'Cast' else None
    if op == 'Cast' and ins[0].v.dtype.kind == 'f' and to.kind in 'iu':
        info = np.iinfo(to)
        x = ref.f64(ins[0].v)
        with np.errstate(all='ignore'):
            if np.any(~np.isfinite(x) | (x >= info.max + 1.0) | (x <= info.min - 1.0)):
                tags.add('item 11')


# ---- the stream -------------------------------------------------------------------------

def read_records(stream):
    head = stream.readline()
    if not head.startswith(b'#runner '):
        raise EOFError('no runner header')
    yield 'runner', json.loads(head[8:]), None
    while True:
        line = stream.readline()
        if line == b'#end\n':
            return
        if not line.startswith(b'#case '):
            raise EOFError('stream ended early')
        h = json.loads(line[6:])
        payload = stream.read(h['payload'])
        if len(payload) != h['payload']:
            raise EOFError('stream ended inside a case')
        yield 'case', h, payload


def array(desc, payload):
    dt = ref.DTYPES[desc['dtype']]
    n = desc['nbytes'] // dt.itemsize
    a = np.frombuffer(payload, dtype=dt, count=n, offset=desc['off']).reshape(desc['shape'])
    return a.copy()


# ---- one case ---------------------------------------------------------------------------

class Case:
    def __init__(self, h, payload):
        self.h, self.payload = h, payload
        self.graph_text = payload[h['graph']['off']:][:h['graph']['nbytes']].decode() \
            if 'graph' in h else ''
        self.graph = json.loads(self.graph_text) if self.graph_text else None
        self.inputs = [array(d, payload) for d in h.get('inputs', [])]
        self.neg = ['r' in d['layout'] for d in h.get('inputs', [])]
        self.tags = set()
        self.problems = []  # (check, mode/workers, text)
        self.known = []     # (KNOWN_BAD items, check, mode/workers, text)
        self.fm = None      # the fast_math evaluation, when needed
        self.fm_tags = set()  # what its detectors found (fast_run checks only)

    def fast_math_refs(self):
        """The fast_math evaluation (once): a defect of fast_run may show only
        once an identity has fired."""
        if self.fm is None:
            self.fm = self.evaluate(fast_math=True)
        return self.fm

    def evaluate(self, fast_math=False):
        tags = set()
        ev = ref.Evaluator(self.graph, self.inputs, self.neg, fast_math,
                           lambda e, n, i, o: detect_known(e, n, i, o, tags))
        try:
            outs = ev.run()
        except ref.NumpyRaises as e:
            outs = e
            if e.empty_output:
                tags.add('item 8')
        (self.fm_tags if fast_math else self.tags).update(tags)
        return outs

    def problem(self, check, where, text):
        """Records a mismatch, or its excuse when a KNOWN_BAD entry that
        fired in this case covers the check: ALL covers value and status
        checks in every mode, FAST_RUN those of the fast_run modes, and both
        cover the comparison of fast_run without fast_math with mode none."""
        mode = where.split('/')[0]
        runs = check in ('value', 'status')
        scope = FAST_RUN if runs and mode.startswith('fast_run') else ALL if runs else check
        wider = {FAST_RUN: {ALL}, FAST_MATH_OFF: {ALL, FAST_RUN}}.get(scope, set())
        tags = self.tags
        if scope in (FAST_RUN, FAST_MATH_OFF) and self.graph:
            self.fast_math_refs()
            tags = tags | self.fm_tags
        items = [item for item in sorted(tags) if item in KNOWN_BAD and
                 (scope in KNOWN_BAD[item][1] or wider & set(KNOWN_BAD[item][1]))]
        if items:  # every entry that may explain it
            self.known.append((items, check, where, text))
        else:
            self.problems.append((check, where, text))


def mismatch_mask(got, r, any_zero_sign=False):
    """Elements of got that differ from the reference value r (a ref.Val);
    any_zero_sign: -0.0 and 0.0 match (fast_math may change the sign of zero)."""
    v, tol = r.v, r.tol
    if got.dtype.kind == 'c':  # each part as a float, the same tolerance
        return (mismatch_mask(got.real, ref.Val(v.real, tol), any_zero_sign) |
                mismatch_mask(got.imag, ref.Val(v.imag, tol), any_zero_sign))
    if got.dtype.kind != 'f':
        bad = got != v
        return bad if tol is None else bad & (tol == 0)
    gn, rn = np.isnan(got), np.isnan(v)
    with np.errstate(all='ignore'):
        same_sign = any_zero_sign | (np.signbit(got) == np.signbit(v))
        exact = ((got == v) & same_sign) | (gn & rn)
        if tol is None:
            return ~exact
        near = (np.abs(ref.f64(got) - ref.f64(v)) <= tol) | (gn & rn) | (got == v)
    return np.where(tol == 0, ~exact, np.where(np.isinf(tol), False, ~near))


def describe_diff(got, r, bad):
    idx = np.argwhere(bad)[:3]
    parts = []
    for i in idx:
        t = tuple(int(j) for j in i)
        tol = 0.0 if r.tol is None else float(r.tol[t])
        parts.append('at %s weft %r numpy %r (tolerance %g)' % (
            list(t), got[t].item(), r.v[t].item(), tol))
    return '%d of %d elements differ: %s' % (int(bad.sum()), bad.size, '; '.join(parts))


def check_outputs(case, run, refs, fm):
    where = '%s/%d' % (run['mode'], run['threads'])
    outs = [array(d, case.payload) for d in run['outputs']]
    for k, (got, r) in enumerate(zip(outs, refs)):
        if got.shape != r.v.shape or got.dtype != r.v.dtype:
            case.problem('value', where, 'output %d: weft %s%s, numpy %s%s' % (
                k, got.dtype, list(got.shape), r.v.dtype, list(r.v.shape)))
            continue
        bad = mismatch_mask(got, r)
        if bad.any() and run['mode'] == 'fast_run':
            alt = fm()
            if not isinstance(alt, Exception) and alt[k].v.shape == got.shape:
                bad &= mismatch_mask(got, alt[k], any_zero_sign=True)
        if bad.any():
            case.problem('value', where, 'output %d: %s' % (k, describe_diff(got, r, bad)))


def check_run(case, run, refs, fm):
    where = '%s/%d' % (run['mode'], run['threads'])
    if 'compile' in run:
        case.problem('compile', where, 'compile failed: %s %s' % (
            run['compile'], run['compile_message']))
        return
    for note in run['self_checks']:
        case.problem('self', where, note)
    ok = run['status'] == 'WEFT_OK'
    if isinstance(refs, Exception) and ok:
        alt = fm() if run['mode'] == 'fast_run' else refs
        if isinstance(alt, Exception):
            case.problem('status', where, 'numpy raises (%s), weft returned WEFT_OK' % refs)
        else:
            check_outputs(case, run, alt, lambda: alt)
    elif not isinstance(refs, Exception) and not ok:
        case.problem('status', where, 'weft failed with %s: %s' % (
            run['status'], run['status_message']))
    elif ok:
        check_outputs(case, run, refs, fm)


def check_threads(case, runs):
    by_mode = {}
    for run in runs:
        by_mode.setdefault(run['mode'], []).append(run)
    for mode, pair in by_mode.items():
        if len(pair) != 2 or any('compile' in r for r in pair):
            continue
        a, b = pair
        if a['status'] != b['status']:
            case.problem(THREADS, mode, '%s on 1 worker, %s on 2' % (a['status'], b['status']))
            continue
        for k, (da, db) in enumerate(zip(a.get('outputs', []), b.get('outputs', []))):
            xa, xb = (case.payload[d['off']:d['off'] + d['nbytes']] for d in (da, db))
            if xa != xb:
                case.problem(THREADS, mode, 'output %d differs between 1 and 2 workers' % k)


def check_fast_math_off(case, runs):
    """fast_run without the fast_math rewrites must give mode none's bits
    (docs/rewrites.md); the runner adds that mode when weft has the tag."""
    by = {(r['mode'], r['threads']): r for r in runs}
    for (mode, threads), run in by.items():
        base = by.get(('none', threads))
        if mode != 'fast_run-fast_math' or not base or 'compile' in run or 'compile' in base:
            continue
        where = '%s/%d' % (mode, threads)
        if run['status'] != base['status']:
            case.problem(FAST_MATH_OFF, where, '%s, mode none %s' % (run['status'], base['status']))
            continue
        for k, (da, db) in enumerate(zip(base.get('outputs', []), run.get('outputs', []))):
            a, b = array(da, case.payload), array(db, case.payload)
            # the same values, zero signs and NaN positions (NaN payloads aside)
            if a.shape != b.shape or mismatch_mask(b, ref.Val(a)).any():
                case.problem(FAST_MATH_OFF, where, 'output %d differs from mode none' % k)


def check_case(h, payload):
    case = Case(h, payload)
    for key in ('build_error', 'save_error', 'setup_error'):
        if key in h:
            case.problem(key, '-', '%s: %s' % (h[key], h[key + '_message']))
            return case
    refs = case.evaluate()
    for run in h['runs']:
        check_run(case, run, refs, case.fast_math_refs)
    check_threads(case, h['runs'])
    check_fast_math_off(case, h['runs'])
    g = h.get('grad')
    if g and g['status'] != 'WEFT_OK':
        case.problem(GRAD, '-', 'gradient check: %s %s' % (g['status'], g['message']))
    return case


# ---- reporting ----------------------------------------------------------------------------

def rerun_command(args, seed, index):
    return '%s %s --runner %s --seed %d --case %d' % (
        sys.executable, os.path.abspath(__file__), args.runner, seed, index)


def reproducer(case, seed, args):
    h = case.h
    lines = ['MISMATCH seed=%d case=%d family=%s' % (seed, h['case'], h.get('family', '?'))]
    seen = {}
    for check, mode, text in case.problems:  # one line per distinct text
        seen.setdefault((check, text), []).append(mode)
    for (check, text), modes in seen.items():
        lines.append('  [%s] %s (%s)' % (check, text, ', '.join(sorted(set(modes)))))
    lines.append('  rerun: ' + rerun_command(args, seed, h['case']))
    for k, (d, a) in enumerate(zip(h.get('inputs', []), case.inputs)):
        lines.append('  input %d: %s%s layout "%s"%s: %s' % (
            k, d['dtype'], d['shape'], d['layout'], ' mutable' if d['mutable'] else '',
            np.array2string(a, threshold=40, max_line_width=200).replace('\n', ' ')))
    if case.graph_text:
        lines.append('  graph:\n' + '\n'.join('    ' + ln for ln in case.graph_text.splitlines()))
    return '\n'.join(lines)


class Tally:
    """Checks each case as the runner delivers it and keeps the counts."""

    def __init__(self, args, seed):
        self.args, self.seed = args, seed
        self.cases = self.bad = self.excused = 0
        self.known = {}     # item -> cases it excused
        self.families = {}  # family -> [cases, bad cases]

    def record(self, h, payload):
        try:
            case = check_case(h, payload)
        except Exception:  # a checker bug: report it with the case's reproducer
            case = Case(h, payload)
            case.problems.append(('checker', '-', traceback.format_exc()))
        self.cases += 1
        fam = self.families.setdefault(h.get('family', '?'), [0, 0])
        fam[0] += 1
        for item in {item for k in case.known for item in k[0]}:
            self.known[item] = self.known.get(item, 0) + 1
        self.excused += bool(case.known) and not case.problems
        single = self.args.case is not None
        if case.problems:
            fam[1] += 1
            self.bad += 1
            if self.bad <= self.args.max_reports or single:
                print(reproducer(case, self.seed, self.args), flush=True)
        elif single:
            print('case %d (%s): no mismatch; excused: %s' % (
                h['case'], h.get('family'),
                sorted({item for k in case.known for item in k[0]}) or 'none'))
            print(case.graph_text)

    def crashed(self, index, rc):
        self.cases += 1
        self.bad += 1
        print('MISMATCH seed=%d case=%d: weft_diff_runner died (exit status %d); rerun: %s' % (
            self.seed, index, rc, rerun_command(self.args, self.seed, index)), flush=True)

    def summary(self, seconds):
        print('families: ' + ', '.join('%s %d (%d bad)' % (f, n, b) for f, (n, b) in
                                       sorted(self.families.items())))
        for item in sorted(self.known, key=lambda k: (k.split()[0], int(k.split()[1])
                                                      if k.split()[1].isdigit() else k)):
            print('known (excused until its fix is merged): %s, %s: %d cases' % (
                item, KNOWN_BAD[item][0], self.known[item]))
        if self.known:
            print('(a case counts under every entry that may explain its mismatches)')
        print('time: %.1f s' % seconds)
        print('differential: cases=%d mismatches=%d known=%d seed=%d' % (
            self.cases, self.bad, self.excused, self.seed), flush=True)


def resolve_seed(arg):
    text = arg if arg is not None else os.environ.get('WEFT_SEED', '1')
    if text == 'random':
        return random.SystemRandom().randrange(1, 1 << 32)
    return int(text, 0)


def run_runner(args, seed, first, count, on_record):
    """Runs the runner over [first, first + count); restarts it after a crash
    (the crashing case is reported). Returns the crashed case indices."""
    crashed = []
    while count > 0:
        cmd = [args.runner, '--seed', str(seed), '--cases', str(count), '--first', str(first)]
        if args.case is not None:
            cmd.append('--print-functions')  # the compiled programs, on stderr
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, bufsize=1 << 16)
        done = 0
        try:
            for kind, h, payload in read_records(proc.stdout):
                if kind == 'case':
                    on_record(h, payload)
                    done += 1
        except EOFError:
            pass
        proc.stdout.close()
        rc = proc.wait()
        if done == count and rc == 0:
            break
        crashed.append((first + done, rc))
        first, count = first + done + 1, count - done - 1
    return crashed


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--runner', required=True, help='path of weft_diff_runner')
    p.add_argument('--cases', type=int, default=20000)
    p.add_argument('--seed', help='integer or "random" (default: $WEFT_SEED or 1)')
    p.add_argument('--first', type=int, default=0, help='index of the first case')
    p.add_argument('--case', type=int, help='run only this case and print it')
    p.add_argument('--max-reports', type=int, default=10)
    args = p.parse_args()
    warnings.simplefilter('ignore')
    seed = resolve_seed(args.seed)
    first, count = (args.case, 1) if args.case is not None else (args.first, args.cases)
    print('differential: seed=%d cases %d..%d (rerun with --seed %d or WEFT_SEED=%d)' % (
        seed, first, first + count - 1, seed, seed), flush=True)
    t0 = time.time()
    tally = Tally(args, seed)
    for index, rc in run_runner(args, seed, first, count, tally.record):
        tally.crashed(index, rc)
    tally.summary(time.time() - t0)
    return 1 if tally.bad else 0


if __name__ == '__main__':
    sys.exit(main())

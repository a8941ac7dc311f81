"""NumPy reference evaluator for weft's JSON graphs (docs/graph-format.md).

evaluate(graph, inputs) runs a saved graph with NumPy and returns, per
output, the value NumPy computes together with a per-element tolerance:

- 0: weft must give exactly this value (same bits for integers and bools;
  for floats the same value, the same sign of zero, NaN where NumPy has NaN);
- a positive number: |weft - numpy| may be at most this (transcendental
  functions, sums, products, matrix products; then propagated through later
  ops by first-order error bounds);
- inf: unchecked (the value depends on rounding that is allowed to differ,
  e.g. a comparison of two values that agree only within their tolerance).

Semantics follow weft's documented rules where weft deliberately differs
from NumPy (include/weft/elemwise.h: dtype promotion bool < int32 < int64 <
float32 < float64, Relu = x > 0 ? x : 0; include/weft/linalg.h: Gemm with
b == 0 ignores z), and NumPy everywhere else. Transcendental functions are
evaluated in extended precision (np.longdouble for float64, float64 for
float32) and rounded, so the reference is the correctly rounded value.

With fast_math=True the evaluator applies the IEEE-changing identities that
fast_run's canonicalizing rewrites use (x-x -> 0, x*0 -> 0, exp(log x) -> x,
log(exp x) -> x, x*y/y -> x, x/y*y -> x, x+0 -> x, a sum over length-1 axes
-> x), each where weft's rewrite fires (docs/rewrites.md): the values
fast_run may legitimately give instead.
"""

import re

import numpy as np

DTYPES = {
    'bool': np.dtype(np.bool_), 'int32': np.dtype(np.int32), 'int64': np.dtype(np.int64),
    'float32': np.dtype(np.float32), 'float64': np.dtype(np.float64),
    'complex64': np.dtype(np.complex64), 'complex128': np.dtype(np.complex128),
}
RANK = {'bool': 0, 'int32': 1, 'int64': 2, 'float32': 3, 'float64': 4}
NAME = {v: k for k, v in DTYPES.items()}

# Own error allowed for each transcendental kind, in units in the last place
# of the result (weft calls glibc's libm; the reference is correctly rounded).
TRANSCENDENTAL_ULPS = 4
# Reductions and products: (n + SUM_SLACK) * eps * sum(|terms|) per element.
SUM_SLACK = 2


class NumpyRaises(Exception):
    """NumPy refuses to compute the graph (weft must return an error).
    empty_output: a reduction over an empty axis whose output is empty too."""

    def __init__(self, text, empty_output=False):
        super().__init__(text)
        self.empty_output = empty_output


class Val:
    """A value and its tolerance (None: exact everywhere)."""
    __slots__ = ('v', 'tol', 'neg')

    def __init__(self, v, tol=None, neg=False):
        self.v = np.asarray(v)
        self.tol = tol
        self.neg = neg  # may be a view with negative strides (KNOWN_BAD item 1)


def is_float(dt):
    return dt.kind == 'f'


def hp(dt):
    """The precision the reference computes float dtype dt in."""
    return np.dtype(np.float64) if dt == np.float32 else np.dtype(np.longdouble)


def ulp(r):
    a = np.abs(r)
    out = np.spacing(np.where(np.isfinite(a), a, 0).astype(r.dtype)).astype(np.float64)
    return out


def fmax(dt):
    return float(np.finfo(dt).max)


def tol_of(x, shape=None):
    t = np.zeros(x.v.shape) if x.tol is None else x.tol
    return np.broadcast_to(t, shape) if shape is not None else t


def f64(a):
    return np.asarray(a, dtype=np.float64)


def ratio(num, den):
    """num / den where den > 0, else inf (an error bound that cannot be given)."""
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(all='ignore'):
        q = np.asarray(num, dtype=np.float64) / np.where(den > 0, den, 1)
    return np.where(den > 0, q, np.inf)


def certain_nonfinite(ins, shape):
    """Where a non-finite result follows from an exact non-finite input with
    every uncertain input finite and of certain sign."""
    has = np.zeros(shape, dtype=bool)
    ok = np.ones(shape, dtype=bool)
    for x in ins:
        v = np.broadcast_to(x.v, shape)
        t = tol_of(x, shape)
        if is_float(v.dtype):
            has |= ~np.isfinite(v) & (t == 0)
            ok &= (t == 0) | (np.isfinite(v) & (np.abs(f64(v)) > t))
        else:
            ok &= t == 0
    return has & ok


def finish(r, tol, ins, neg=False):
    """Val(r) with tolerance tol (None: exact), after the non-finite rules:
    a non-finite or near-overflow result with a positive tolerance is exact
    when certain_nonfinite, else unchecked; integers are exact or unchecked."""
    r = np.asarray(r)
    if tol is None:
        return Val(r, None, neg)
    tol = np.array(np.broadcast_to(tol, r.shape), dtype=np.float64)
    tol[np.isnan(tol)] = np.inf
    if is_float(r.dtype):
        fin = np.isfinite(r)
        tol[fin & (np.abs(f64(r)) + tol >= fmax(r.dtype))] = np.inf
        nf = ~fin & (tol > 0)
        if nf.any():
            tol[nf] = np.where(certain_nonfinite(ins, r.shape)[nf], 0.0, np.inf)
    else:
        tol = np.where(tol > 0, np.inf, 0.0)
    return Val(r, tol if tol.any() else None, neg)


def conv(x, dt):
    """x converted to dtype dt (weft converts inputs to the compute dtype)."""
    if x.v.dtype == dt:
        return x
    with np.errstate(all='ignore'):
        return Val(x.v.astype(dt), x.tol, x.neg)


# ---- elementwise --------------------------------------------------------------------

FLOAT_ONLY = {'Exp', 'Log', 'Log1p', 'Sqrt', 'Tanh', 'Sigmoid', 'Sin', 'Cos', 'Div', 'Pow'}
COMPARISONS = {'Lt': np.less, 'Le': np.less_equal, 'Gt': np.greater, 'Ge': np.greater_equal,
               'Eq': np.equal, 'Ne': np.not_equal}
UNARY = {'Neg', 'Abs', 'Sgn', 'Exp', 'Log', 'Log1p', 'Sqrt', 'Sqr', 'Tanh', 'Sigmoid', 'Relu',
         'Sin', 'Cos', 'Cast'}
BINARY = {'Add', 'Sub', 'Mul', 'Div', 'Pow', 'Maximum', 'Minimum', 'Second'} | set(COMPARISONS)
ELEMWISE = UNARY | BINARY | {'Switch', 'Real', 'Imag', 'Conj', 'Angle', 'Complex'}
REDUCTIONS = {'Sum', 'Mean', 'Max', 'Min', 'Prod', 'Argmax'}


def upcast(xs):
    if any(x.v.dtype.kind == 'c' for x in xs):  # NumPy's promotion (docs/dtypes.md)
        return np.result_type(*[x.v.dtype for x in xs])
    return max((x.v.dtype for x in xs), key=lambda d: RANK[NAME[d]])


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


TRANSCENDENTAL = {'Exp': np.exp, 'Log': np.log, 'Log1p': np.log1p, 'Sqrt': np.sqrt,
                  'Tanh': np.tanh, 'Sigmoid': _sigmoid, 'Sin': np.sin, 'Cos': np.cos}


def _domain_tol(kind, x, t):
    """First-order error of a unary transcendental for an input error t."""
    ax = np.abs(x)
    if kind == 'Exp':
        return np.abs(f64(np.exp(x))) * np.expm1(t)
    if kind == 'Log':
        return np.where(x - t > 0, ratio(t, x - t), np.where(x + t <= 0, 0, np.inf))
    if kind == 'Log1p':
        return np.where(1 + x - t > 0, ratio(t, 1 + x - t),
                        np.where(1 + x + t <= 0, 0, np.inf))
    if kind == 'Sqrt':
        return np.where(x - t >= 0, ratio(t, np.sqrt(np.maximum(x - t, 0)) + np.sqrt(ax)),
                        np.where(x + t < 0, 0, np.inf))
    if kind == 'Sigmoid':
        return np.minimum(t / 4, 1)
    return np.minimum(t, 2) if kind in ('Sin', 'Cos') else t  # Tanh: 1-Lipschitz


def transcendental(kind, x):
    dt = x.v.dtype
    with np.errstate(all='ignore'):
        # sqrt is exact in its own dtype; computing it wider would round twice
        r = TRANSCENDENTAL[kind](x.v.astype(dt if kind == 'Sqrt' else hp(dt))).astype(dt)
        tol = TRANSCENDENTAL_ULPS * ulp(r) if kind != 'Sqrt' else None  # sqrt: IEEE-exact
        if x.tol is not None:
            tol = _domain_tol(kind, f64(x.v), x.tol) + (ulp(r) if tol is None else tol)
            tol = np.where(np.isinf(x.tol), np.inf, tol)  # an unchecked input may be inf or nan
    return finish(r, tol, [x])


def pow_(a, b):
    dt = a.v.dtype
    with np.errstate(all='ignore'):
        # float64, not long double: powl(-inf, -2**63) is inf in glibc, not +0
        r = np.power(a.v.astype(np.float64), b.v.astype(np.float64)).astype(dt)
        tol = TRANSCENDENTAL_ULPS * ulp(r)
        if a.tol is not None or b.tol is not None:
            x, y = f64(a.v), f64(b.v)
            ta, tb = tol_of(a, r.shape), tol_of(b, r.shape)
            ax = np.abs(x)
            safe = (ax > ta) & ((x > 0) | (tb == 0))
            rel = np.abs(y) * ratio(ta, ax - ta) + np.abs(np.log(ax)) * tb
            tol = tol + np.where(safe, 2 * np.abs(f64(r)) * rel, np.inf)
    return finish(r, tol, [a, b])


def sgn(x):
    r = np.sign(x.v)
    tol = None if x.tol is None else np.where(np.abs(f64(x.v)) > x.tol, 0, np.inf)  # nan: unsure
    return finish(r, tol, [x])


def relu(x):
    r = np.where(x.v > 0, x.v, np.zeros((), x.v.dtype)).astype(x.v.dtype)
    return finish(r, x.tol, [x])


def cast(x, dt):
    with np.errstate(all='ignore'):
        v = x.v.real if x.v.dtype.kind == 'c' and dt.kind != 'c' and dt != np.bool_ else x.v
        r = v.astype(dt) if dt != np.bool_ else (x.v != 0)
    if x.tol is None:
        return Val(r)
    v, t = f64(x.v), x.tol
    if dt == np.bool_:
        tol = np.where(np.abs(v) > t, 0, np.inf)
    elif not is_float(dt) and is_float(x.v.dtype):
        with np.errstate(all='ignore'):
            tol = np.where(np.trunc(v - t) != np.trunc(v + t), np.inf, 0)
    else:
        tol = t + (ulp(r) if is_float(dt) else 0)
    return finish(r, tol, [x])


def exact_binary(kind, a, b):
    """Add Sub Mul Div Maximum Minimum Second, and their error bounds."""
    fn = {'Add': np.add, 'Sub': np.subtract, 'Mul': np.multiply, 'Div': np.divide,
          'Maximum': np.maximum, 'Minimum': np.minimum}
    with np.errstate(all='ignore'):
        if kind == 'Second':
            r = np.array(np.broadcast_to(b.v, np.broadcast_shapes(a.v.shape, b.v.shape)))
        else:
            r = np.asarray(fn[kind](a.v, b.v)).astype(a.v.dtype)
        if a.tol is None and b.tol is None:
            return Val(r)
        ta, tb = tol_of(a, r.shape), tol_of(b, r.shape)
        x, y, rr = f64(a.v), f64(b.v), f64(r)
        u = ulp(r) if is_float(r.dtype) else 0
        if kind in ('Add', 'Sub'):
            tol = ta + tb + u
        elif kind == 'Mul':
            tol = np.abs(y) * ta + np.abs(x) * tb + ta * tb + u
        elif kind == 'Div':
            ay = np.abs(y)
            tol = ratio(ta + np.abs(rr) * tb, ay - tb) + u
        elif kind == 'Second':
            tol = tb
        else:
            tol = np.maximum(ta, tb)
    return finish(r, tol, [a, b])


def compare(kind, a, b):
    with np.errstate(all='ignore'):
        r = COMPARISONS[kind](a.v, b.v)
        if a.tol is None and b.tol is None:
            return Val(r)
        shape = r.shape
        ta, tb = tol_of(a, shape), tol_of(b, shape)
        gap = np.abs(f64(a.v) - f64(b.v))
        unsure = (ta + tb > 0) & ~(gap > ta + tb)
    return Val(r, np.where(unsure, np.inf, 0.0) if unsure.any() else None)


def switch(c, a, b):
    r = np.where(c.v, a.v, b.v).astype(a.v.dtype)
    if c.tol is None and a.tol is None and b.tol is None:
        return Val(r)
    shape = r.shape
    tol = np.where(np.broadcast_to(c.v, shape), tol_of(a, shape), tol_of(b, shape))
    tol = np.where(tol_of(c, shape) > 0, np.inf, tol)
    return finish(r, tol, [a, b])


def elemwise(kind, ins, props):
    if kind in COMPLEX_KINDS or (kind != 'Cast' and any(x.v.dtype.kind == 'c' for x in ins)):
        return complex_elemwise(kind, ins)
    if kind == 'Cast':
        return cast(ins[0], DTYPES[props['dtype']])
    if kind in COMPARISONS:
        dt = upcast(ins)
        return compare(kind, conv(ins[0], dt), conv(ins[1], dt))
    if kind == 'Switch':
        dt = upcast(ins[1:])
        return switch(ins[0], conv(ins[1], dt), conv(ins[2], dt))
    dt = upcast(ins)
    xs = [conv(x, dt) for x in ins]
    if kind in TRANSCENDENTAL:
        return transcendental(kind, xs[0])
    if kind == 'Pow':
        return pow_(xs[0], xs[1])
    if kind == 'Sgn':
        return sgn(xs[0])
    if kind == 'Relu':
        return relu(xs[0])
    if kind in UNARY:  # Neg Abs Sqr
        x = xs[0]
        with np.errstate(all='ignore'):
            r = {'Neg': np.negative, 'Abs': np.abs, 'Sqr': np.square}[kind](x.v).astype(dt)
        if x.tol is None:
            return Val(r)
        tol = x.tol if kind != 'Sqr' else 2 * np.abs(f64(x.v)) * x.tol + x.tol ** 2 + ulp(r)
        return finish(r, tol, [x])
    return exact_binary(kind, xs[0], xs[1])


def composite(props, ins, on_step=None):
    """Composite's program "Add(0,1) Tanh(2)": registers are the inputs, then
    one per step (include/weft/composite.h). on_step(kind, args, out) sees
    each step."""
    regs = list(ins)
    for name, args in re.findall(r'(\w+)\(([\d,]+)\)', props['steps']):
        step_ins = [regs[int(a)] for a in args.split(',')]
        regs.append(elemwise(name, step_ins, {}))
        if on_step:
            on_step(name, step_ins, regs[-1])
    shape = np.broadcast_shapes(*[x.v.shape for x in ins])  # the output has every input's shape
    return _same(regs[-1], lambda a: np.array(np.broadcast_to(a, shape)))


# ---- complex numbers (docs/dtypes.md "Complex numbers") ------------------------------
#
# NumPy computes the reference in the complex dtype itself. Neg, Add, Sub,
# Conj, Real, Imag, Complex, Second, Switch, Eq, Ne are exact; the others
# (Mul, Sqr, Div, Pow: weft's formulas are NumPy's, but NumPy's SIMD loops
# may fuse multiply-adds; Exp Log Sqrt Sin Cos Tanh: both call glibc; Abs,
# Angle) get COMPLEX_ULPS of the result's magnitude per part, unchecked when
# an input is uncertain or the result not finite. An uncertain input makes
# an exact kind's result uncertain by the inputs' tolerances.

COMPLEX_KINDS = {'Real', 'Imag', 'Conj', 'Angle', 'Complex'}
COMPLEX_ULPS = 8
_CX_EXACT = {'Neg': np.negative, 'Conj': np.conj, 'Real': np.real, 'Imag': np.imag}
_CX_INEXACT = {'Exp': np.exp, 'Log': np.log, 'Sqrt': np.sqrt, 'Sin': np.sin, 'Cos': np.cos,
               'Tanh': np.tanh, 'Sqr': np.square, 'Abs': np.abs, 'Angle': np.angle}
_CX_BINARY = {'Add': np.add, 'Sub': np.subtract, 'Mul': np.multiply, 'Div': np.divide,
              'Pow': np.power}


def _part_dtype(dt):
    return np.dtype(np.float32) if dt in (np.complex64, np.float32) else np.dtype(np.float64)


def _cx_inexact(r, ins):
    """COMPLEX_ULPS of |r| in r's part precision; inf where an input is
    uncertain or r is not finite."""
    eps = np.finfo(_part_dtype(r.dtype)).eps
    with np.errstate(all='ignore'):
        mag = np.abs(r).astype(np.float64)
        tol = COMPLEX_ULPS * eps * mag + np.finfo(_part_dtype(r.dtype)).tiny
        tol = np.where(np.isfinite(r), tol, np.inf)
    for x in ins:
        if x.tol is not None:
            tol = np.where(np.broadcast_to(x.tol, r.shape) > 0, np.inf, tol)
    return Val(r, tol)


def _cx_exact(r, ins):
    if all(x.tol is None for x in ins):
        return Val(r)
    tol = sum(tol_of(x, r.shape) for x in ins)
    return Val(r, np.where(np.isfinite(r), tol, np.inf))


def complex_elemwise(kind, ins):
    with np.errstate(all='ignore'):
        if kind == 'Complex':
            part = _part_dtype(np.result_type(ins[0].v.dtype, ins[1].v.dtype, np.float16))
            shape = np.broadcast_shapes(ins[0].v.shape, ins[1].v.shape)
            r = np.empty(shape, dtype=np.complex64 if part == np.float32 else np.complex128)
            r.real, r.imag = ins[0].v, ins[1].v
            return _cx_exact(r, ins)
        if kind == 'Switch':
            dt = upcast(ins[1:])
            return _cx_exact(np.where(ins[0].v, ins[1].v, ins[2].v).astype(dt), ins)
        dt = upcast(ins)
        vs = [x.v.astype(dt) for x in ins]
        if kind in ('Eq', 'Ne'):
            r = COMPARISONS[kind](vs[0], vs[1])
            unsure = any(x.tol is not None for x in ins)
            return Val(r, np.full(r.shape, np.inf) if unsure else None)
        if kind == 'Second':
            return _cx_exact(np.array(np.broadcast_to(vs[1], np.broadcast_shapes(
                vs[0].shape, vs[1].shape))), ins[1:])
        if kind in _CX_EXACT:
            return _cx_exact(np.asarray(_CX_EXACT[kind](vs[0])), ins)
        if kind in _CX_INEXACT:
            if kind == 'Angle' and dt.kind != 'c':  # atan2(0, x) in x's float dtype
                fdt = dt if dt.kind == 'f' else np.dtype(np.float64)
                return _cx_inexact(np.arctan2(fdt.type(0), vs[0].astype(fdt)), ins)
            return _cx_inexact(np.asarray(_CX_INEXACT[kind](vs[0])), ins)
        r = np.asarray(_CX_BINARY[kind](vs[0], vs[1])).astype(dt)
        return (_cx_exact if kind in ('Add', 'Sub') else _cx_inexact)(r, ins)


def complex_reduce(op, props, x):
    nd = x.v.ndim
    axes = tuple(sorted(a % nd for a in props['axes'])) if nd else ()
    keep = bool(props['keepdims'])
    with np.errstate(all='ignore'):
        if op == 'Prod':
            r = np.asarray(np.prod(x.v, axis=axes, keepdims=keep))
        else:
            r = np.asarray(np.sum(x.v, axis=axes, keepdims=keep))
            if op == 'Mean':
                n = int(np.prod([x.v.shape[a] for a in axes])) if axes else 1
                r = np.asarray(r / n) if n else np.asarray(r * np.nan)
        r = r.astype(x.v.dtype)
        n = int(np.prod([x.v.shape[a] for a in axes])) if axes else 1
        eps = np.finfo(_part_dtype(r.dtype)).eps
        if op == 'Prod':
            mag = np.abs(r).astype(np.float64)
        else:
            mag = _group_sum(np.abs(x.v).astype(np.float64), axes, keep)
        tol = (n + SUM_SLACK) * eps * mag * 2 + np.finfo(_part_dtype(r.dtype)).tiny
        tol = np.array(np.broadcast_to(tol, r.shape), dtype=np.float64)
        tol[~np.isfinite(r) | ~np.isfinite(np.broadcast_to(mag, r.shape))] = np.inf
        if x.tol is not None:
            tol[np.broadcast_to(_group_sum(x.tol, axes, keep), r.shape) > 0] = np.inf
    return Val(r, tol)


# ---- shape ops ---------------------------------------------------------------------

def _same(x, fn):
    """fn applied to the value and to the tolerance."""
    return Val(fn(x.v), None if x.tol is None else fn(x.tol), x.neg)


def dimshuffle(x, order):
    kept = [a for a in order if a >= 0]
    rest = [d for d in range(x.v.ndim) if d in kept]
    perm = [rest.index(a) for a in kept]

    def fn(a):
        a = a.reshape([a.shape[d] for d in rest]).transpose(perm)
        it = iter(a.shape)
        return a.reshape([1 if o < 0 else next(it) for o in order])
    return _same(x, fn)


def parse_index(text):
    """Subtensor's numpy-style index text ("1:3, 2, ::-1") as a tuple."""
    out = []
    for e in [s.strip() for s in text.split(',')] if text.strip() else []:
        if ':' in e:
            parts = [int(p) if p.strip() else None for p in e.split(':')]
            out.append(slice(*parts))
        else:
            out.append(int(e))
    return tuple(out)


def _negative_step(idx):
    return any(isinstance(s, slice) and s.step is not None and s.step < 0 for s in idx)


def subtensor(x, idx):
    v = _same(x, lambda a: np.array(a[idx]))
    v.neg = x.neg or _negative_step(idx)
    return v


def set_subtensor(x, y, idx, inc):
    r = x.v.copy()
    yv = y.v.astype(r.dtype)
    with np.errstate(all='ignore'):
        if inc:
            r[idx] += yv
        else:
            r[idx] = yv
    if x.tol is None and y.tol is None:
        return Val(r)
    t = np.array(tol_of(x), dtype=np.float64)
    ty = tol_of(y, r[idx].shape)
    t[idx] = t[idx] + ty + (ulp(r[idx]) if is_float(r.dtype) else 0) if inc else ty
    return finish(r, t, [x])


# ---- reductions ----------------------------------------------------------------------

def _group_sum(a, axes, keep):
    return np.asarray(np.sum(a, axis=axes, keepdims=keep))


def _finite_abs(v):
    return np.where(np.isfinite(v), np.abs(f64(v)), 0.0) if is_float(v.dtype) else np.abs(f64(v))


def _reduce_tol(r, tol, tin, mag, axes, keep):
    """Tolerance of a float reduction: inputs' errors folded in, unchecked
    where partial results may overflow, and non-finite results exact when
    no input was uncertain."""
    if tin is not None:
        tol = tol + _group_sum(tin, axes, keep)
    tol = np.array(np.broadcast_to(tol, r.shape), dtype=np.float64)
    tol[mag >= fmax(r.dtype) / 4] = np.inf
    nf = ~np.isfinite(r)
    sure = (tin is None) or (_group_sum(tin, axes, keep) == 0)
    tol[nf] = np.where(np.broadcast_to(sure, r.shape)[nf] & np.isfinite(tol[nf]), 0.0, np.inf)
    return Val(r, tol if tol.any() else None)


def _int_reduce(r, x, axes, keep):
    if x.tol is None:
        return Val(r)
    t = np.where(_group_sum(x.tol, axes, keep) > 0, np.inf, 0.0)
    return Val(r, t if t.any() else None)


def sum_mean(kind, x, axes, keep):
    n = int(np.prod([x.v.shape[a] for a in axes])) if axes else 1
    with np.errstate(all='ignore'):
        if not is_float(x.v.dtype) and kind == 'Sum':
            return _int_reduce(np.sum(x.v, axis=axes, keepdims=keep, dtype=np.int64), x, axes, keep)
        dt = x.v.dtype if is_float(x.v.dtype) else np.dtype(np.float64)
        s = np.sum(x.v.astype(hp(dt)), axis=axes, keepdims=keep)
        r = np.asarray(s / n if kind == 'Mean' else s).astype(dt)
        mag = _group_sum(_finite_abs(x.v), axes, keep)
        tol = (n + SUM_SLACK) * np.finfo(dt).eps * mag / (n if kind == 'Mean' and n else 1) + ulp(r)
        tin = None if x.tol is None else x.tol / (n if kind == 'Mean' and n else 1)
        if kind == 'Mean' and n == 0:
            return Val(r)
    return _reduce_tol(r, tol, tin, mag, axes, keep)


def prod(x, axes, keep):
    n = int(np.prod([x.v.shape[a] for a in axes])) if axes else 1
    with np.errstate(all='ignore'):
        if not is_float(x.v.dtype):
            r = np.prod(x.v, axis=axes, keepdims=keep, dtype=np.int64)  # wraps, as weft
            return _int_reduce(r, x, axes, keep)
        dt = x.v.dtype
        r = np.prod(x.v.astype(hp(dt)), axis=axes, keepdims=keep).astype(dt)
        v = f64(x.v)
        nz = np.isfinite(v) & (v != 0)
        lg = np.where(nz, np.log2(np.where(nz, np.abs(v), 1)), 0)
        info = np.finfo(dt)
        risky = ((_group_sum(np.maximum(lg, 0), axes, keep) >= info.maxexp - 2) |
                 (_group_sum(np.minimum(lg, 0), axes, keep) <= info.minexp - 2))
        risky &= ~np.any(np.isnan(v), axis=axes, keepdims=keep)
        tol = (n + SUM_SLACK) * info.eps * np.abs(f64(r)) + ulp(r)
        tin = None
        if x.tol is not None:
            rel = ratio(x.tol, np.abs(v) - x.tol)
            tin = None
            tol = tol + 2 * np.abs(f64(r)) * _group_sum(rel, axes, keep)
            tol = np.where(np.isnan(tol), np.inf, tol)
        tol = np.where(risky, np.inf, tol)
    return _reduce_tol(r, tol, tin, np.zeros(r.shape), axes, keep)


def max_min(kind, x, axes, keep):
    """Which zero a group holding both -0.0 and 0.0 gives is unspecified (the
    order the group is scanned in): such results get the smallest tolerance,
    which accepts either sign."""
    r = np.asarray((np.max if kind == 'Max' else np.min)(x.v, axis=axes, keepdims=keep))
    t = np.zeros(r.shape) if x.tol is None or not x.v.size else \
        np.asarray(np.max(x.tol, axis=axes, keepdims=keep), dtype=np.float64)
    if is_float(r.dtype) and x.v.size:
        zero = x.v == 0
        both = np.any(zero & np.signbit(x.v), axis=axes, keepdims=keep) & \
            np.any(zero & ~np.signbit(x.v), axis=axes, keepdims=keep)
        t = np.where(both & (r == 0), np.maximum(t, ulp(np.zeros((), r.dtype))), t)
    return finish(r, t if t.any() else None, [])


def argmax(x, axes, keep):
    v = x.v
    flat = len(axes) != 1
    a = v.reshape(-1) if flat else np.moveaxis(v, axes[0], -1)
    r = np.argmax(a, axis=-1).astype(np.int64)
    tol = None
    if x.tol is not None:
        t = x.tol.reshape(-1) if flat else np.moveaxis(x.tol, axes[0], -1)
        af = f64(a)
        best = np.take_along_axis(af, r[..., None], -1)
        tb = np.take_along_axis(t, r[..., None], -1)
        close = (af + t >= best - tb) | np.isnan(af)
        # an unchecked element may be anything, NaN (the maximum) included
        unsure = (np.sum(close, axis=-1) > 1) | np.any(np.isinf(t), axis=-1)
        tol = np.where(unsure, np.inf, 0.0)
    if keep:
        shape = [1] * v.ndim if flat else [1 if d == axes[0] else n for d, n in enumerate(v.shape)]
        r = r.reshape(shape)
        tol = None if tol is None else tol.reshape(shape)
    return Val(np.asarray(r), tol if tol is not None and tol.any() else None)


def reduce(op, props, x):
    if x.v.dtype.kind == 'c':
        return complex_reduce(op, props, x)
    nd = x.v.ndim
    axes = tuple(sorted(a % nd for a in props['axes'])) if nd else ()
    keep = bool(props['keepdims'])
    if op in ('Max', 'Min', 'Argmax') and any(x.v.shape[a] == 0 for a in axes):
        kept_empty = any(x.v.shape[d] == 0 for d in range(nd) if d not in axes)
        raise NumpyRaises('%s over an empty axis (zero-size array to reduction)' % op, kept_empty)
    if op in ('Sum', 'Mean'):
        return sum_mean(op, x, axes, keep)
    if op == 'Prod':
        return prod(x, axes, keep)
    if op == 'Argmax':
        return argmax(x, axes if nd else (), keep)
    return max_min(op, x, axes, keep)


# ---- linear algebra ------------------------------------------------------------------

def _product(x, y):
    """x@y with its error bound parts: (value in hp, magnitude, input-error term)."""
    mul = np.matmul if x.v.ndim == 3 else np.dot
    with np.errstate(all='ignore'):
        # long double: NumPy's own loops, IEEE nan*0 = nan (BLAS may skip zeros)
        p = mul(x.v.astype(np.longdouble), y.v.astype(np.longdouble))
        mag = mul(_finite_abs(x.v), _finite_abs(y.v))
        err = 0
        if x.tol is not None or y.tol is not None:
            tx, ty = tol_of(x), tol_of(y)
            err = mul(tx, _finite_abs(y.v)) + mul(_finite_abs(x.v), ty) + mul(tx, ty)
            err = np.where(np.isnan(err), np.inf, err)
    return p, mag, err


def _linalg_val(r, k, mag, err, extra_mag=0, raw_mag=None):
    """raw_mag: |x|@|y| before scaling by Gemm's a (BLAS may overflow there)."""
    dt = r.dtype
    info = np.finfo(dt)  # products in the subnormal range round absolutely
    tol = (k + SUM_SLACK) * (info.eps * (mag + extra_mag) + info.smallest_subnormal) + ulp(r) + err
    tol = np.array(np.broadcast_to(tol, r.shape), dtype=np.float64)
    big = np.maximum(mag + extra_mag, mag if raw_mag is None else raw_mag)
    tol[np.broadcast_to(big, r.shape) >= fmax(dt) / 4] = np.inf
    nf = ~np.isfinite(r)
    sure = np.broadcast_to(np.asarray(err) == 0, r.shape)
    tol[nf] = np.where(sure[nf] & np.isfinite(tol[nf]), 0.0, np.inf)
    return Val(r, tol if tol.any() else None)


def dot(x, y):
    p, mag, err = _product(x, y)
    return _linalg_val(np.asarray(p).astype(x.v.dtype), x.v.shape[-1], mag, err)


def gemm(z, a, x, y, b):
    """b*z + a*x@y; b == 0 ignores z, as BLAS (include/weft/linalg.h)."""
    p, mag, err = _product(x, y)
    dt = z.v.dtype
    av, bv = a.v.astype(hp(dt)), b.v.astype(hp(dt))
    with np.errstate(all='ignore'):
        r = av * p if bv == 0 else bv * z.v.astype(hp(dt)) + av * p
        r = np.asarray(r).astype(dt)
        aa, ab = abs(float(a.v)), abs(float(b.v))
        zm = _finite_abs(z.v) if bv != 0 else 0
        err = aa * err + float(tol_of(a)) * mag
        if bv != 0:
            err = err + ab * tol_of(z) + float(tol_of(b)) * zm
        # BLAS may scale x or y by a first: products that underflow there are
        # off by up to the smallest subnormal times the other operand
        tiny = float(np.finfo(dt).smallest_subnormal)
        err = err + aa * (x.v.shape[-1] + SUM_SLACK) * tiny  # subnormal products, scaled by a
        ones_k = np.ones(x.v.shape[-1])
        rows = _finite_abs(x.v) @ ones_k
        cols = ones_k @ _finite_abs(y.v)
        err = err + tiny * (rows[..., None] + cols if y.v.ndim == 2 else rows + np.sum(cols))
        # ... and overflow there although a*(x@y) does not
        big = max(np.max(_finite_abs(x.v), initial=0), np.max(_finite_abs(y.v), initial=0))
        if aa * big >= fmax(dt) / 4:
            err = err + np.inf
        err = np.where(np.isnan(err), np.inf, err)
    return _linalg_val(r, x.v.shape[-1], aa * mag, err, ab * zm, mag)


def _const_array(c):
    dt = DTYPES[c['dtype']]
    conv_ = {'nan': np.nan, 'inf': np.inf, '-inf': -np.inf}

    def num(e):
        return conv_.get(e, e) if isinstance(e, str) else e
    if dt.kind == 'c':  # [re, im] pairs (docs/graph-format.md)
        parts = np.array([[num(p) for p in e] for e in c['data']],
                         dtype=np.float32 if dt == np.complex64 else np.float64)
        return parts.reshape(-1, 2).view(dt).reshape(c['shape'])
    data = [num(e) for e in c['data']]
    return np.array(data, dtype=dt).reshape(c['shape'])


class Evaluator:
    """Evaluates a graph (the JSON object) on input arrays. on_node(op,
    props, ins, out) is called after each node (for KNOWN_BAD detectors)."""

    def __init__(self, graph, inputs, neg, fast_math=False, on_node=None):
        self.graph, self.inputs, self.neg = graph, inputs, neg
        self.fast_math, self.on_node = fast_math, on_node
        self.env, self.key, self.producer, self.const = {}, {}, {}, {}

    def run(self):
        for k, e in enumerate(self.graph['inputs']):
            self.env[e['id']] = Val(self.inputs[k], None, self.neg[k])
            self.key[e['id']] = ('in', k)
        for c in self.graph.get('constants', []):
            a = _const_array(c)
            self.env[c['id']] = Val(a)
            self.const[c['id']] = a
            self.key[c['id']] = ('c', c['dtype'], tuple(c['shape']), a.tobytes())
        for node in self.graph['nodes']:
            self.node(node)
        return [self.env[i] for i in self.graph['outputs']]

    def node(self, node):
        op, props = node['op'], node.get('props', {})
        ins = [self.env[i] for i in node['inputs']]
        out = self.fast_math_identity(op, props, node['inputs'], ins) if self.fast_math else None
        if out is None:
            out = self.apply(op, props, ins)
        # a rewrite may run it in place or drop it: its result may be its
        # input's memory (only reductions over some axis and products are not)
        fresh = op in ('Dot', 'Gemm', 'Gemv') or (op in REDUCTIONS and any(
            ins[0].v.shape[a] != 1 for a in props['axes']))
        out.neg = out.neg or (not fresh and any(x.neg for x in ins))
        if self.on_node:
            self.on_node(self, node, ins, out)
        oid = node['outputs'][0]
        alias = self.alias_of(op, props, node['inputs'], ins, out) if self.fast_math else None
        self.env[oid] = out if alias is None else self.env[alias]
        self.producer[oid] = node
        self.key[oid] = self.key[alias] if alias is not None else \
            self.node_key(op, props, node['inputs'])
        if all(i in self.const for i in node['inputs']):  # constant folding
            self.const[oid] = out.v

    def apply(self, op, props, ins):
        if op in ELEMWISE:
            return elemwise(op, ins, props)
        if op == 'Composite':
            hook = None
            if self.on_node:
                def hook(kind, args, out):
                    self.on_node(self, {'op': kind, 'inputs': None, 'props': {}}, args, out)
            return composite(props, ins, hook)
        if op == 'DimShuffle':
            return dimshuffle(ins[0], props['order'])
        if op == 'Reshape':
            shape = ins[1].v.shape if props.get('like') else props['shape']
            return _same(ins[0], lambda a: a.reshape(shape))
        if op == 'Subtensor':
            return subtensor(ins[0], parse_index(props['idx']))
        if op in ('SetSubtensor', 'IncSubtensor'):
            return set_subtensor(ins[0], ins[1], parse_index(props['idx']), op == 'IncSubtensor')
        if op in REDUCTIONS:
            return reduce(op, props, ins[0])
        if op == 'Dot':
            return dot(ins[0], ins[1])
        if op in ('Gemm', 'Gemv'):
            return gemm(*ins)
        raise NotImplementedError('check_numpy has no NumPy version of op %s' % op)

    # -- fast_math identities (the canonicalizing rewrites) --

    def is_const(self, vid, value):
        a = self.const.get(vid)
        return a is not None and a.size > 0 and bool(np.all(a == value))

    def node_key(self, op, props, ids):
        """A node's structural key: equal keys are one variable after merging
        (with fast_math, DimShuffles of DimShuffles composed first)."""
        p = self.producer.get(ids[0]) if ids else None
        if self.fast_math and op == 'DimShuffle' and p and p['op'] == 'DimShuffle':
            inner = p['props']['order']
            order = [o if o < 0 else inner[o] for o in props['order']]
            if order == list(range(self.env[p['inputs'][0]].v.ndim)):
                return self.key[p['inputs'][0]]
            return self.node_key(op, {'order': order}, p['inputs'])
        return (op, repr(sorted(props.items())), tuple(self.key[i] for i in ids))

    def alias_of(self, op, props, ids, ins, out):
        """The input id a node is the same variable as after fast_run's
        simplifications (x*1, x+0, -(-x), a cast to x's dtype, a reduction or
        DimShuffle that changes nothing), so that later identities (x - x) see
        through it; None if none."""
        def same(i):
            x = self.env[ids[i]]
            return x.v.shape == out.v.shape and x.v.dtype == out.v.dtype
        if op in ('Mul', 'Add'):
            for i in (0, 1):
                if self.is_const(ids[1 - i], 1 if op == 'Mul' else 0) and same(i):
                    return ids[i]
        p = self.producer.get(ids[0])
        inverse = {'Neg': 'Neg', 'Exp': 'Log', 'Log': 'Exp'}
        if p and op in inverse and p['op'] == inverse[op]:
            x = self.env[p['inputs'][0]]
            return p['inputs'][0] if x.v.shape == out.v.shape and x.v.dtype == out.v.dtype else None
        if op == 'Cast' or (op in REDUCTIONS and op != 'Argmax' and not props['axes']) or \
                (op == 'DimShuffle' and props['order'] == list(range(ins[0].v.ndim))):
            return ids[0] if same(0) else None
        return None

    def fast_math_identity(self, op, props, ids, ins):
        def like(x, shape, dt):
            return _same(conv(x, dt), lambda a: np.array(np.broadcast_to(a, shape)))
        if op in ELEMWISE and op not in ('Cast',) and op not in COMPARISONS and op != 'Switch':
            shape = np.broadcast_shapes(*[x.v.shape for x in ins])
            dt = upcast(ins)
        if op == 'Sub' and self.key[ids[0]] == self.key[ids[1]]:
            return Val(np.zeros(shape, dt))
        if op == 'Mul' and (self.is_const(ids[0], 0) or self.is_const(ids[1], 0)):
            return Val(np.zeros(shape, dt))
        # x + 0 and exp(log x) fire only where x has the output's type
        if op == 'Add':
            for i in (0, 1):
                x = ins[1 - i]
                if self.is_const(ids[i], 0) and x.v.shape == shape and x.v.dtype == dt:
                    return x
        if op in ('Exp', 'Log'):
            p = self.producer.get(ids[0])
            if p and p['op'] == ('Log' if op == 'Exp' else 'Exp') and \
                    self.env[p['inputs'][0]].v.dtype == dt:
                return self.env[p['inputs'][0]]
        if op == 'Div':
            p = self.producer.get(ids[0])
            if p and p['op'] == 'Mul':
                for i in (0, 1):
                    if self.key[p['inputs'][i]] == self.key[ids[1]]:
                        return like(self.env[p['inputs'][1 - i]], shape, dt)
        if op == 'Mul':
            for i in (0, 1):
                p = self.producer.get(ids[i])
                if p and p['op'] == 'Div' and self.key[p['inputs'][1]] == self.key[ids[1 - i]]:
                    return like(self.env[p['inputs'][0]], shape, dt)
        if op == 'Sum':
            x = ins[0]
            nd = x.v.ndim
            axes = [a % nd for a in props['axes']] if nd else []
            if all(x.v.shape[a] == 1 for a in axes):
                out = self.apply(op, props, ins)
                return _same(conv(x, out.v.dtype), lambda a: a.reshape(out.v.shape))
        return None

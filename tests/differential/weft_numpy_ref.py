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
from NumPy (Relu = x > 0 ? x : 0; include/weft/linalg.h: Gemm with b == 0
ignores z), and NumPy everywhere else. Dtype promotion is NumPy's
np.result_type on dtypes (docs/dtypes.md §3): the generator draws 1-d and
larger arrays only, so NumPy 1.24's value-based casting of 0-d operands
never applies. Transcendental functions are
evaluated in extended precision (np.longdouble for float64, float64 for
float32) and rounded, so the reference is the correctly rounded value.

With fast_math=True the evaluator applies the IEEE-changing identities that
fast_run's canonicalizing rewrites use (x-x -> 0, x*0 -> 0, exp(log x) -> x,
log(exp x) -> x, x*y/y -> x, x/y*y -> x, x+0 -> x, a sum over length-1 axes
-> x) and the stabilizing ones (log(1+x) -> log1p(x), log(sigmoid x),
log(softmax x), log(sum(exp x)) -> logsumexp), each where weft's rewrite
fires (docs/rewrites.md): the values
fast_run may legitimately give instead.
"""

import decimal
import fractions
import math
import re

import warnings

import numpy as np

DTYPES = {n: np.dtype(n) for n in (
    'bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64',
    'float16', 'float32', 'float64', 'complex64', 'complex128')}
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
    return np.dtype(np.float64) if dt in (np.float16, np.float32) else np.dtype(np.longdouble)


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
# the float math kinds of issue 17 (weft/elemwise.h), float-only
MATH_UNARY = {'Tan', 'Arcsin', 'Arccos', 'Arctan', 'Sinh', 'Cosh', 'Arcsinh', 'Arccosh',
              'Arctanh', 'Exp2', 'Expm1', 'Log2', 'Log10', 'Erf', 'Erfc', 'Erfinv', 'Gammaln',
              'Digamma', 'Trigamma'}
MATH_BINARY = {'Arctan2', 'Hypot', 'Copysign', 'Nextafter', 'Polygamma'}
FLOAT_ONLY |= MATH_UNARY | MATH_BINARY
# rounding, integer, logical (issue 17); Round keeps an integer dtype, the
# other roundings compute integers in float64 (NumPy 1.24's loops)
ROUNDING = {'Floor': np.floor, 'Ceil': np.ceil, 'Trunc': np.trunc, 'Rint': np.rint,
            'Round': np.round}
PREDICATES = {'IsNan': np.isnan, 'IsInf': np.isinf, 'IsFinite': np.isfinite}
LOGICAL = {'LogicalNot': np.logical_not, 'LogicalAnd': np.logical_and,
           'LogicalOr': np.logical_or, 'LogicalXor': np.logical_xor}
INTEGER = {'Mod': np.remainder, 'FloorDivide': np.floor_divide, 'Fmod': np.fmod,
           'Invert': np.invert, 'BitwiseAnd': np.bitwise_and, 'BitwiseOr': np.bitwise_or,
           'BitwiseXor': np.bitwise_xor, 'LeftShift': np.left_shift,
           'RightShift': np.right_shift}
INT_KINDS = set(ROUNDING) | set(PREDICATES) | set(LOGICAL) | set(INTEGER) | {'NanToNum', 'Clip'}
ELEMWISE = (UNARY | BINARY | MATH_UNARY | MATH_BINARY | {'Switch'} | INT_KINDS |
            {'Real', 'Imag', 'Conj', 'Angle', 'Complex'})
REDUCTIONS = {'Sum', 'Mean', 'Max', 'Min', 'Prod', 'Argmax', 'Argmin'}
# weft_lreduce_at's classes other than Argmax/Argmin, the scans and sorting ops.
LANE_REDUCTIONS = {'Any', 'All', 'Var', 'Std', 'LogSumExp', 'NanSum', 'NanMean', 'NanMax', 'NanMin'}
AXIS_OPS = {'CumSum', 'CumProd', 'Sort', 'Topk'}
SOFTMAX_OPS = {'Softmax', 'LogSoftmax'}


def upcast(xs):
    """NumPy's promotion of the operands' dtypes (weft_dtype_promote)."""
    return np.result_type(*[x.v.dtype for x in xs])


def out_dtype(kind, dt):
    """The dtype weft computes kind in for inputs promoted to dt, as NumPy's
    ufunc loops: true division of integers and bool float64, the other
    float-only kinds the smallest float holding dt (weft_dtype_float_of),
    Pow and Sqr of bool int8."""
    if kind == 'Div' and not is_float(dt):
        return np.dtype(np.float64)
    if kind in ('Pow', 'Sqr') and dt == np.bool_:
        return np.dtype(np.int8)
    if kind in FLOAT_ONLY and kind != 'Pow' and not is_float(dt):
        return np.result_type(dt, np.float16)
    return dt


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


def own_nans(r, fn, vals, dt):
    """r with its NaNs replaced by the NaNs NumPy computes in dt itself: their
    sign bit is visible to Copysign, and it differs by precision (x86's
    float64 log(-inf) is -nan, long double's +nan)."""
    nan = np.isnan(r)
    if not nan.any():
        return r
    own = np.asarray(fn(*[np.asarray(v).astype(dt) for v in vals])).astype(dt)
    return np.where(nan & np.isnan(own), own, r)


def transcendental(kind, x):
    dt = x.v.dtype
    with np.errstate(all='ignore'):
        # sqrt is exact in its own dtype; computing it wider would round twice
        r = TRANSCENDENTAL[kind](x.v.astype(dt if kind == 'Sqrt' else hp(dt))).astype(dt)
        r = own_nans(r, TRANSCENDENTAL[kind], [x.v], dt)
        tol = TRANSCENDENTAL_ULPS * ulp(r) if kind != 'Sqrt' else None  # sqrt: IEEE-exact
        if x.tol is not None:
            tol = _domain_tol(kind, f64(x.v), x.tol) + (ulp(r) if tol is None else tol)
            tol = np.where(np.isinf(x.tol), np.inf, tol)  # an unchecked input may be inf or nan
    return finish(r, tol, [x])


# ---- the float math kinds (issue 17) -------------------------------------------------
# NumPy's functions where it has them. NumPy has no erf, erfinv, gammaln,
# digamma or trigamma: erf/erfc/gammaln are Python's math.erf/erfc/lgamma
# per element; erfinv solves erf(y) = x by Newton steps on math.erf/erfc
# (the inverse identity); digamma and trigamma shift x to >= 20 by the
# recurrences (weft stops at 10) and sum their asymptotic series, in float64.

def _per_element(fn):
    v = np.vectorize(fn, otypes=[np.float64])
    return lambda x: v(np.asarray(x, dtype=np.float64)) if np.asarray(x).size else \
        np.asarray(x, dtype=np.float64)


def _erfinv1(x):
    if math.isnan(x) or abs(x) > 1:
        return math.nan
    if abs(x) == 1:
        return math.copysign(math.inf, x)
    a, y = abs(x), 0.0
    w = -math.log((1 - a) * (1 + a))
    y = math.copysign(math.sqrt(w) * 0.9, 1.0) if a > 0.1 else a * 0.886226925452758
    for _ in range(60):
        r = (math.erf(y) - a) if a <= 0.5 else ((1 - a) - math.erfc(y))
        step = r / (2 / math.sqrt(math.pi) * math.exp(-y * y))
        y -= step
        if abs(step) <= 1e-17 * abs(y):
            break
    return math.copysign(y, x)


def _polygamma1(x, order):
    """digamma (order 0) or trigamma (order 1) of a float x."""
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return math.inf if order == 0 else 0.0
    if x <= 0 and x == math.floor(x):
        if order == 1:
            return math.inf
        return math.copysign(math.inf, -x) if x == 0 else math.nan
    if x < 0:  # reflection
        r = x - round(x)
        if order == 0:
            return _polygamma1(1 - x, 0) - math.pi / math.tan(math.pi * r)
        return (math.pi / math.sin(math.pi * r)) ** 2 - _polygamma1(1 - x, 1)
    acc = 0.0
    while x < 20:
        acc += -1 / x if order == 0 else 1 / (x * x)
        x += 1
    z = 1 / (x * x)
    if order == 0:
        return acc + math.log(x) - 0.5 / x - z * (
            1 / 12 - z * (1 / 120 - z * (1 / 252 - z * (1 / 240 - z / 132))))
    return acc + (1 + 0.5 / x + z * (1 / 6 - z * (1 / 30 - z * (1 / 42 - z * (1 / 30 - z * 5 / 66))))) / x


def _lgamma1(x):
    try:
        return math.lgamma(x)
    except ValueError:  # a pole
        return math.inf


def _erf1(fn):
    return lambda x: math.nan if math.isnan(x) else fn(x)


MATH = {'Tan': np.tan, 'Arcsin': np.arcsin, 'Arccos': np.arccos, 'Arctan': np.arctan,
        'Sinh': np.sinh, 'Cosh': np.cosh, 'Arcsinh': np.arcsinh, 'Arccosh': np.arccosh,
        'Arctanh': np.arctanh, 'Exp2': np.exp2, 'Expm1': np.expm1, 'Log2': np.log2,
        'Log10': np.log10, 'Arctan2': np.arctan2, 'Hypot': np.hypot, 'Copysign': np.copysign,
        'Nextafter': np.nextafter, 'Erf': _per_element(_erf1(math.erf)),
        'Erfc': _per_element(_erf1(math.erfc)), 'Erfinv': _per_element(_erfinv1),
        'Gammaln': _per_element(_lgamma1), 'Digamma': _per_element(lambda x: _polygamma1(x, 0)),
        'Trigamma': _per_element(lambda x: _polygamma1(x, 1))}
MATH_IN_FLOAT64 = {'Erf', 'Erfc', 'Erfinv', 'Gammaln', 'Digamma', 'Trigamma'}


# Polygamma(n, x): NumPy and this machine have no scipy or mpmath. n = 0 and
# n = 1 are the digamma / trigamma references above; n >= 2 sums
# (-1)^(n+1) n! (x + k)^-(n+1) in 40-digit decimals up to x + k >= 40 + 2n,
# then the Euler-Maclaurin tail with B2..B40 (exact fractions), for any x
# off the poles (negative x summed directly: no reflection, unlike weft).

def _bernoulli_over_fact(count):
    """B2j / (2j)!, j = 1..count, exact (the Akiyama-Tanigawa algorithm)."""
    a, b = [], []
    for m in range(2 * count + 1):
        a.append(fractions.Fraction(1, m + 1))
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        b.append(a[0])
    return [b[2 * j] / math.factorial(2 * j) for j in range(1, count + 1)]


_BERN = _bernoulli_over_fact(20)


def _polygamma_dec(n, x):
    """(value, n! sum |x + k|^-(n+1)) of psi_n(x), n >= 2, x off the poles."""
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        s, a = n + 1, decimal.Decimal(x)
        tot = absum = decimal.Decimal(0)
        while a < 40 + 2 * s:
            t = a ** -s
            tot, absum, a = tot + t, absum + abs(t), a + 1
        p, inv2, ser = decimal.Decimal(s) / a, 1 / (a * a), a / (s - 1) + decimal.Decimal('0.5')
        for j, c in enumerate(_BERN, 1):
            ser += decimal.Decimal(c.numerator) / decimal.Decimal(c.denominator) * p
            p *= (s + 2 * j - 1) * (s + 2 * j) * inv2
        tail = a ** -s * ser
        f = math.factorial(n) * (1 if n % 2 else -1)
        return float(f * (tot + tail)), float(abs(f) * (absum + tail))


def _polygamma_ref(n, x):
    """(psi_n(x), a scale of its terms: the sum of their magnitudes) as weft
    defines it (weft/elemwise.h): NaN for a negative or non-integral n."""
    if math.isnan(n) or math.isnan(x) or n < 0 or n != math.floor(n) or x == -math.inf:
        return math.nan, 0.0
    if x < -1e4:  # only a moved input (an uncertain x): unchecked
        return math.nan, 0.0
    n = int(min(n, 172 + n % 2))  # weft's: n! is inf beyond 171, keep the parity
    if n <= 1:
        v = _polygamma1(x, n)
        if x < 0 and not math.isinf(v) and not math.isnan(v):  # the reflection's two terms
            r = x - round(x)
            refl = math.pi / abs(math.tan(math.pi * r)) if n == 0 else (math.pi / math.sin(math.pi * r)) ** 2
            return v, abs(_polygamma1(1 - x, n)) + refl
        return v, abs(v)
    sign = 1.0 if n % 2 else -1.0
    if x == math.inf:
        return sign * 0.0, 0.0
    if x <= 0 and x == math.floor(x):
        return sign * math.inf, 0.0
    return _polygamma_dec(n, x)


def polygamma_(n, x):
    """Polygamma: x's float dtype whatever n's; n converted to it (weft's
    compute dtype). 4 ulp plus 32 eps of the terms' magnitudes (cancellation
    for x < 0, digamma's root); an uncertain x moves it by twice the largest
    change over x +- tol, unchecked where that interval holds a pole."""
    dt = x.v.dtype if is_float(x.v.dtype) else np.result_type(x.v.dtype, np.float16)
    n, x = conv(n, dt), conv(x, dt)
    nv, xv = np.broadcast_arrays(f64(n.v), f64(x.v))
    pairs = [_polygamma_ref(a, b) for a, b in zip(nv.ravel(), xv.ravel())]
    with np.errstate(all='ignore'):
        r = np.array([p[0] for p in pairs], dtype=np.float64).reshape(nv.shape).astype(dt)
        scale = np.array([p[1] for p in pairs], dtype=np.float64).reshape(nv.shape)
        tol = TRANSCENDENTAL_ULPS * ulp(r) + 32 * float(np.finfo(dt).eps) * scale
        if n.tol is not None:
            tol = tol + np.where(np.broadcast_to(tol_of(n, r.shape), r.shape) > 0, np.inf, 0)
        if x.tol is not None:
            t = np.broadcast_to(tol_of(x, r.shape), r.shape)
            for sgn in (-1, 1):
                moved = np.array([_polygamma_ref(a, b + sgn * c)[0] for a, b, c in
                                  zip(nv.ravel(), xv.ravel(), t.ravel())]).reshape(r.shape)
                d = np.abs(moved - f64(r))
                tol = tol + 2 * np.where(np.isnan(d) & ~np.isnan(f64(r)), np.inf,
                                         np.nan_to_num(d, posinf=np.inf))
            lo, hi = xv - t, xv + t
            tol = np.where((lo <= 0) & (np.floor(lo) != np.floor(hi)), np.inf, tol)
            tol = np.where(np.isinf(t), np.inf, tol)
    return finish(r, tol, [n, x])


def _math_eval(kind, vals, dt):
    """kind of vals, computed wide (Nextafter and Copysign in dt: exact there)."""
    wide = dt if kind in ('Nextafter', 'Copysign') else \
        np.float64 if kind in MATH_IN_FLOAT64 else hp(dt)
    with np.errstate(all='ignore'):
        r = np.asarray(MATH[kind](*[np.asarray(v).astype(wide) for v in vals])).astype(dt)
        return r if kind in MATH_IN_FLOAT64 else own_nans(r, MATH[kind], vals, dt)


def _math_own_tol(kind, xs, r):
    """The error allowed with exact inputs: 4 ulp; Copysign and Nextafter exact;
    digamma and gammaln near their roots an absolute part (sums of terms)."""
    if kind in ('Copysign', 'Nextafter'):
        return None
    tol = TRANSCENDENTAL_ULPS * ulp(r)
    if kind in ('Digamma', 'Gammaln'):
        x = np.abs(f64(xs[0].v))
        with np.errstate(all='ignore'):
            scale = 1 + np.abs(np.log(np.where(x > 0, x, 1))) + np.where(x > 0, 1 / x, 0)
        tol = tol + 16 * float(np.finfo(r.dtype).eps) * scale
    return tol


def math_kind(kind, xs):
    """A float math kind; input errors move the result by at most twice the
    largest change of f when one input moves by its tolerance (a first-order
    bound: the tolerances are small); NaN there (a domain edge) is unchecked."""
    dt = xs[0].v.dtype
    r = _math_eval(kind, [x.v for x in xs], dt)
    tol = _math_own_tol(kind, xs, r)
    if all(x.tol is None for x in xs):
        return finish(r, tol, xs)
    tol = ulp(r) if tol is None else tol
    base = f64(r)
    for i, x in enumerate(xs):
        if x.tol is None:
            continue
        for s in (-1, 1):
            moved = [f64(y.v) + s * y.tol if j == i else f64(y.v) for j, y in enumerate(xs)]
            with np.errstate(all='ignore'):
                d = np.abs(f64(_math_eval(kind, moved, np.float64)) - base)
            tol = tol + 2 * np.where(np.isnan(d) & ~np.isnan(base), np.inf, np.nan_to_num(d))
        tol = np.where(np.isinf(x.tol), np.inf, tol)
    return finish(r, tol, xs)


def pow_(a, b):
    dt = a.v.dtype
    if not is_float(dt):
        if dt.kind == 'i' and (b.v < 0).any():
            raise NumpyRaises('Integers to negative integer powers are not allowed.')
        with np.errstate(all='ignore'):
            return _int_exact(np.power(a.v, b.v), [a, b])
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


def _int_exact(r, ins):
    """An integer result: exact, unchecked where an input is uncertain."""
    if all(x.tol is None for x in ins):
        return Val(r)
    t = sum(np.broadcast_to(tol_of(x, r.shape), r.shape) for x in ins)
    t = np.where(t > 0, np.inf, 0.0)
    return Val(r, t if t.any() else None)


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


def ifelse_op(props, ins):
    """IfElse (docs/control-flow.md): the then side when the 0-d condition is
    nonzero (NaN included), else the else side; unchecked when the
    condition's own tolerance leaves its truth open."""
    if props['n'] != 1:
        raise NotImplementedError('check_numpy has no NumPy version of IfElse with n > 1')
    c, t, e = ins
    r = t if c.v != 0 else e
    tc = float(np.max(tol_of(c))) if c.tol is not None else 0.0
    if tc > 0 and not abs(f64(c.v)) > tc:
        return Val(r.v.copy(), np.full(r.v.shape, np.inf), r.neg)
    return Val(r.v.copy(), r.tol, r.neg)


def switch(c, a, b):
    r = np.where(c.v, a.v, b.v).astype(a.v.dtype)
    if c.tol is None and a.tol is None and b.tol is None:
        return Val(r)
    shape = r.shape
    tol = np.where(np.broadcast_to(c.v, shape), tol_of(a, shape), tol_of(b, shape))
    tol = np.where(tol_of(c, shape) > 0, np.inf, tol)
    return finish(r, tol, [a, b])


def _ew_unsure(ins, shape, sure):
    """Unchecked (inf) where an input's tolerance leaves the result in doubt:
    sure(v, t) says where an uncertain float input is still certain."""
    unsure = np.zeros(shape, dtype=bool)
    for x in ins:
        if x.tol is None:
            continue
        t = tol_of(x, shape)
        v = f64(np.broadcast_to(x.v, shape))
        ok = sure(v, t, x.v.dtype) if is_float(x.v.dtype) and sure else np.zeros(shape, bool)
        unsure |= (t > 0) & ~ok
    return np.where(unsure, np.inf, 0.0) if unsure.any() else None


def _rounding(kind, x):
    fn = ROUNDING[kind]
    r = np.asarray(fn(x.v)).astype(x.v.dtype)
    if x.tol is None:
        return Val(r)
    v, t = f64(x.v), x.tol
    return finish(r, np.where(fn(v - t) == fn(v + t), 0.0, np.inf), [x])


def int_kind(kind, ins):
    """The rounding, integer and logical kinds (include/weft/elemwise.h)."""
    dt = upcast(ins)
    if kind in ROUNDING and kind != 'Round' and not is_float(dt):
        dt = ROUNDING[kind](np.zeros(1, dt)).dtype  # NumPy's float for it (uint8: float16)
    xs = [conv(x, dt) for x in ins]
    with np.errstate(all='ignore'):
        if kind in ROUNDING:
            return _rounding(kind, xs[0])
        if kind == 'NanToNum':
            return finish(np.nan_to_num(xs[0].v), xs[0].tol, xs)
        if kind == 'Clip':
            # as arrays of at least one axis: NumPy 1.24's 0-d clip takes
            # another path that drops a NaN bound (its arrays propagate it)
            args = [np.atleast_1d(x.v) for x in xs]
            r = np.clip(*args).reshape(np.broadcast_shapes(*[x.v.shape for x in xs])).astype(dt)
            if all(x.tol is None for x in xs):
                return Val(r)
            return finish(r, np.maximum.reduce([tol_of(x, r.shape) for x in xs]), xs)
        fn = {**PREDICATES, **LOGICAL, **INTEGER}[kind]
        r = np.asarray(fn(*[x.v for x in xs]))
        if kind in PREDICATES:  # certain for a finite value away from overflow
            return Val(r, _ew_unsure(xs, r.shape,
                                  lambda v, t, d: np.isfinite(v) & (np.abs(v) + t < fmax(d))))
        if kind in LOGICAL:  # truth is certain away from 0
            return Val(r, _ew_unsure(xs, r.shape, lambda v, t, d: np.abs(v) > t))
        return Val(r.astype(dt), _ew_unsure(xs, r.shape, None))  # jumps: unchecked


def elemwise(kind, ins, props):
    if kind in COMPLEX_KINDS or (kind != 'Cast' and any(x.v.dtype.kind == 'c' for x in ins)):
        return complex_elemwise(kind, ins)
    if kind in INT_KINDS:
        return int_kind(kind, ins)
    if kind == 'Cast':
        return cast(ins[0], DTYPES[props['dtype']])
    if kind in COMPARISONS:
        dt = upcast(ins)
        return compare(kind, conv(ins[0], dt), conv(ins[1], dt))
    if kind == 'Switch':
        dt = upcast(ins[1:])
        return switch(ins[0], conv(ins[1], dt), conv(ins[2], dt))
    if kind == 'Polygamma':
        return polygamma_(ins[0], ins[1])
    dt = out_dtype(kind, upcast(ins))
    if dt == np.bool_ and kind in ('Sub', 'Neg', 'Sgn'):
        raise NumpyRaises('%s of bool' % kind)
    xs = [conv(x, dt) for x in ins]
    if kind in TRANSCENDENTAL:
        return transcendental(kind, xs[0])
    if kind in MATH:
        return math_kind(kind, xs)
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


def join(xs, axis):
    """Join (np.concatenate of one dtype): values and tolerances joined."""
    tol = None
    if any(x.tol is not None for x in xs):
        tol = np.concatenate([np.zeros(x.v.shape) if x.tol is None else
                              np.broadcast_to(x.tol, x.v.shape) for x in xs], axis=axis)
    return Val(np.concatenate([x.v for x in xs], axis=axis), tol, any(x.neg for x in xs))


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


# ---- advanced indexing (weft/index_ops.h) ---------------------------------------------

def axis_index(props, n, reps):
    """AxisIndex (docs/shapes.md §4): the source indices along an axis of
    length n, NumPy's np.roll / np.pad / np.tile / np.repeat read."""
    mode, a, b = props['mode'], int(props['a']), int(props['b'])
    n = int(n)
    if mode == 'roll':
        idx = (np.arange(n) - a) % max(n, 1)
    elif mode == 'edge':
        idx = np.clip(np.arange(-a, n + b), 0, n - 1)
    elif mode == 'reflect':
        # np.pad's reflect of arange(n) (NumPy extends a length-1 axis by its edge)
        idx = np.pad(np.arange(n), (a, b), 'edge' if n == 1 else 'reflect')
    elif mode == 'tile':
        idx = np.tile(np.arange(n), a)
    elif mode == 'repeat':
        idx = np.repeat(np.arange(n), a)
    else:
        idx = np.repeat(np.arange(n), reps.astype(np.int64))
    return Val(np.asarray(idx, dtype=np.int64))


def take_op(props, x, i):
    """np.take along props['axis']; indices are exact integers. last: the
    positions a later index repeats give 0 (set_at's y gradient)."""
    axis = int(props['axis'])
    idx = i.v.astype(np.int64) % max(x.v.shape[axis], 1)
    keep = np.ones(idx.shape, dtype=bool)
    if props.get('last'):
        flat = idx.ravel()
        seen = {int(t): k for k, t in enumerate(flat)}
        keep = np.array([seen[int(t)] == k for k, t in enumerate(flat)], dtype=bool).reshape(idx.shape)
    m = np.expand_dims(keep, tuple(range(axis)) + tuple(range(axis + idx.ndim, axis + idx.ndim + x.v.ndim - axis - 1)))

    def fn(a):
        r = np.take(a, idx, axis=axis)
        return np.where(m, r, np.zeros((), r.dtype)).astype(r.dtype)
    return _same(x, fn)


def adv_update(op, props, x, i, y):
    """x[..., idx, ...] = y (the last duplicate wins) or np.add.at (every
    duplicate accumulates, in index order, as weft's kernel adds them)."""
    axis = int(props['axis'])
    idx = (slice(None),) * axis + (i.v.astype(np.int64),)
    r = x.v.copy()
    yv = np.broadcast_to(y.v.astype(r.dtype), r[idx].shape)
    with np.errstate(all='ignore'):
        if op == 'AdvancedIncSubtensor':
            np.add.at(r, idx, yv)
        else:
            r[idx] = yv
    if x.tol is None and y.tol is None:
        return Val(r)
    t = np.array(tol_of(x), dtype=np.float64)
    ty = np.broadcast_to(tol_of(y), yv.shape)
    if op == 'AdvancedIncSubtensor':
        np.add.at(t, idx, ty + (ulp(r[idx]) if is_float(r.dtype) else 0))
    else:
        t[idx] = ty
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
            acc = np.uint64 if x.v.dtype.kind == 'u' else np.int64  # NumPy's sum dtype
            return _int_reduce(np.sum(x.v, axis=axes, keepdims=keep, dtype=acc), x, axes, keep)
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
            acc = np.uint64 if x.v.dtype.kind == 'u' else np.int64  # NumPy's prod dtype
            r = np.prod(x.v, axis=axes, keepdims=keep, dtype=acc)  # wraps, as weft
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


def _lanes(a, axes):
    """a with the reduced axes moved last (in their order) and flattened:
    PyTensor's Argmax over several axes (the flat C-order index into the
    reduced axes' sub-block)."""
    a = np.asarray(a)
    kept = [d for d in range(a.ndim) if d not in axes]
    t = np.transpose(a, kept + list(axes))
    return t.reshape([a.shape[d] for d in kept] + [int(np.prod([a.shape[d] for d in axes]))])


def _keep_shape(r, shape, axes, keep):
    if not keep:
        return r
    return None if r is None else r.reshape([1 if d in axes else n for d, n in enumerate(shape)])


def argmax(x, axes, keep, is_max=True):
    v = x.v
    a = _lanes(v, axes)
    r = (np.argmax if is_max else np.argmin)(a, axis=-1).astype(np.int64)
    tol = None
    if x.tol is not None:
        t = _lanes(x.tol, axes)
        af = f64(a) if is_max else -f64(a)
        best = np.take_along_axis(af, r[..., None], -1)
        tb = np.take_along_axis(t, r[..., None], -1)
        close = (af + t >= best - tb) | np.isnan(af)
        # an unchecked element may be anything, NaN (the maximum) included
        unsure = (np.sum(close, axis=-1) > 1) | np.any(np.isinf(t), axis=-1)
        tol = np.where(unsure, np.inf, 0.0)
    r = _keep_shape(r, v.shape, axes, keep)
    tol = _keep_shape(tol, v.shape, axes, keep)
    return Val(np.asarray(r), tol if tol is not None and tol.any() else None)


def reduce(op, props, x):
    if x.v.dtype.kind == 'c':
        return complex_reduce(op, props, x)
    nd = x.v.ndim
    axes = tuple(sorted(a % nd for a in props['axes'])) if nd else ()
    keep = bool(props['keepdims'])
    if op in ('Max', 'Min', 'Argmax', 'Argmin', 'NanMax', 'NanMin') and any(x.v.shape[a] == 0 for a in axes):
        kept_empty = any(x.v.shape[d] == 0 for d in range(nd) if d not in axes)
        raise NumpyRaises('%s over an empty axis (zero-size array to reduction)' % op, kept_empty)
    if op in ('Sum', 'Mean'):
        return sum_mean(op, x, axes, keep)
    if op == 'Prod':
        return prod(x, axes, keep)
    if op in ('Argmax', 'Argmin'):
        return argmax(x, axes if nd else (), keep, op == 'Argmax')
    return max_min(op, x, axes, keep)


# ---- lane reductions, scans, sorting (weft/reduce.h) ----------------------------------


def _unsure(x, axes, keep, shape):
    """Where a group holds an uncertain input: an order-based or exact
    integer result there cannot be checked."""
    if x.tol is None:
        return None
    t = np.where(_group_sum(x.tol, axes, keep) > 0, np.inf, 0.0)
    return np.broadcast_to(t, shape)


def _float_out(dt):
    return dt if dt in (np.float16, np.float32) else np.dtype(np.float64)


def _nan_ext(op, x, axes, keep):
    v = x.v
    if not is_float(v.dtype):
        r = np.asarray((np.max if op == 'NanMax' else np.min)(v, axis=axes, keepdims=keep))
        return finish(r, _unsure(x, axes, keep, r.shape), [])
    with np.errstate(all='ignore'), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        r = np.asarray((np.nanmax if op == 'NanMax' else np.nanmin)(v, axis=axes, keepdims=keep))
    t = np.zeros(r.shape)
    if x.tol is not None and v.size:
        t = np.asarray(np.max(np.where(np.isnan(v), 0, x.tol), axis=axes, keepdims=keep), dtype=np.float64)
    zero = v == 0
    both = np.any(zero & np.signbit(v), axis=axes, keepdims=keep) & np.any(zero & ~np.signbit(v), axis=axes, keepdims=keep)
    t = np.where(both & (r == 0), np.maximum(t, ulp(np.zeros((), r.dtype))), t)
    return finish(r, t if t.any() else None, [])


def _nan_sum_mean(op, x, axes, keep):
    v = x.v
    if not is_float(v.dtype):
        if op == 'NanSum':
            acc = np.uint64 if v.dtype.kind == 'u' else np.int64  # NumPy's sum dtype
            r = np.sum(v, axis=axes, keepdims=keep, dtype=acc)
            return _int_reduce(np.asarray(r), x, axes, keep)
        return sum_mean('Mean', Val(v.astype(np.float64), x.tol), axes, keep)
    ok = ~np.isnan(v)
    z = np.where(ok, v, 0).astype(v.dtype)
    zt = None if x.tol is None else np.where(ok, x.tol, 0)
    if op == 'NanSum':
        return sum_mean('Sum', Val(z, zt), axes, keep)
    cnt = np.sum(ok, axis=axes, keepdims=keep)
    cnt_k = np.maximum(np.sum(ok, axis=axes, keepdims=True), 1)
    s = sum_mean('Sum', Val(z), axes, keep)
    with np.errstate(all='ignore'):
        r = np.asarray(np.where(cnt > 0, f64(s.v) / np.maximum(cnt, 1), np.nan)).astype(v.dtype)
        tol = (0 if s.tol is None else ratio(s.tol, cnt)) + 2 * ulp(r)
        tol = np.where(cnt > 0, tol, 0.0)
    return _reduce_tol(r, tol, None if zt is None else zt / cnt_k, np.zeros(r.shape), axes, keep)


def _var_std(op, x, axes, keep, ddof):
    v = x.v
    dt = _float_out(v.dtype)
    n = int(np.prod([v.shape[a] for a in axes])) if axes else 1
    with np.errstate(all='ignore'):
        a = v.astype(np.longdouble)
        mean = np.mean(a, axis=axes, keepdims=True) if n else np.zeros([1] * v.ndim)
        m2 = np.sum((a - mean) ** 2, axis=axes, keepdims=keep)
        rc = max(n - ddof, 0)
        var = m2 / rc if rc else m2 / np.longdouble(0)
        r = np.asarray(np.sqrt(var) if op == 'Std' else var).astype(dt)
        sq = _group_sum(f64(v) ** 2, axes, keep)
        tv = (n + SUM_SLACK) * 4 * np.finfo(dt).eps * ratio(sq, rc)
        tol = (tv / np.maximum(2 * np.abs(f64(r)), np.sqrt(tv)) if op == 'Std' else tv) + 2 * ulp(r)
        bad = ~np.isfinite(sq) | (sq >= fmax(dt) / 4)
        if x.tol is not None:
            bad |= _group_sum(x.tol, axes, keep) > 0
        nonfin = ~np.all(np.isfinite(v), axis=axes, keepdims=keep)
        tol = np.where(bad & ~(nonfin & np.isnan(r)), np.inf, tol)
    return finish(r, tol, [])


def _logsumexp(x, axes, keep):
    v = x.v
    dt = _float_out(v.dtype)
    n = int(np.prod([v.shape[a] for a in axes])) if axes else 1
    with np.errstate(all='ignore'):
        a = v.astype(np.longdouble)
        if v.size == 0 or n == 0:
            r = np.full(np.sum(a, axis=axes, keepdims=keep).shape, -np.inf)
        else:
            m = np.max(np.where(np.isnan(a), -np.inf, a), axis=axes, keepdims=True)
            fin = np.isfinite(m)
            s = np.sum(np.exp(a - np.where(fin, m, 0)), axis=axes, keepdims=True)
            r = np.where(fin, m + np.log(s), m)
            r = np.where(np.any(np.isnan(a), axis=axes, keepdims=True), np.nan, r)
            r = r if keep else np.squeeze(r, axis=axes)
        r = np.asarray(r).astype(dt)
        ma = np.max(np.where(np.isfinite(v), np.abs(f64(v)), 0), axis=axes, keepdims=keep, initial=0)
        tol = ((n + SUM_SLACK + 4) * np.finfo(dt).eps * (1 + ma) + 2 * ulp(r))
    # an input's error moves the result by at most that error: the group's
    # sum of input tolerances bounds it
    return _reduce_tol(r, tol, x.tol, np.zeros(r.shape), axes, keep)


def lane_reduce(op, props, x):
    nd = x.v.ndim
    axes = tuple(sorted(a % nd for a in props['axes'])) if nd else ()
    keep = bool(props['keepdims'])
    if op in ('NanMax', 'NanMin') and any(x.v.shape[a] == 0 for a in axes):
        kept_empty = any(x.v.shape[d] == 0 for d in range(nd) if d not in axes)
        raise NumpyRaises('%s over an empty axis (zero-size array to reduction)' % op, kept_empty)
    if op in ('Any', 'All'):
        r = np.asarray((np.any if op == 'Any' else np.all)(x.v != 0, axis=axes, keepdims=keep))
        return finish(r, _unsure(x, axes, keep, r.shape), [])
    if op in ('NanMax', 'NanMin'):
        return _nan_ext(op, x, axes, keep)
    if op in ('NanSum', 'NanMean'):
        return _nan_sum_mean(op, x, axes, keep)
    if op in ('Var', 'Std'):
        return _var_std(op, x, axes, keep, float(props['ddof']))
    return _logsumexp(x, axes, keep)


def _scan(op, x, axis):
    v = x.v
    if not is_float(v.dtype):
        with np.errstate(all='ignore'):
            acc = np.uint64 if v.dtype.kind == 'u' else np.int64  # NumPy's scan dtype
            r = (np.cumsum if op == 'CumSum' else np.cumprod)(v.astype(acc), axis=axis)
        t = None
        if x.tol is not None:
            t = np.where(np.cumsum(x.tol, axis=axis) > 0, np.inf, 0.0)
        return Val(r, t if t is not None and t.any() else None)
    dt = v.dtype
    eps = np.finfo(dt).eps
    with np.errstate(all='ignore'):
        scan = np.cumsum if op == 'CumSum' else np.cumprod
        r = scan(v.astype(hp(dt)), axis=axis).astype(dt)
        # NumPy scans in dt: where that overflows, a later inf of the other
        # sign gives NaN (inf + -inf), which the wider scan never sees
        own = scan(v, axis=axis)
        r = np.where(np.isfinite(own), r, own)
        i = np.arange(v.shape[axis]).reshape([-1 if d == axis else 1 for d in range(v.ndim)])
        if op == 'CumSum':
            mag = np.cumsum(_finite_abs(v), axis=axis)
            tol = (i + 1 + SUM_SLACK) * eps * mag + ulp(r)
            tol = np.where(mag >= fmax(dt) / 4, np.inf, tol)
            if x.tol is not None:
                tol = tol + np.cumsum(x.tol, axis=axis)
        else:
            vf = f64(v)
            nz = np.isfinite(vf) & (vf != 0)
            lg = np.where(nz, np.log2(np.where(nz, np.abs(vf), 1)), 0)
            info = np.finfo(dt)
            risky = (np.cumsum(np.maximum(lg, 0), axis=axis) >= info.maxexp - 2) | \
                (np.cumsum(np.minimum(lg, 0), axis=axis) <= info.minexp - 2)
            tol = (i + 1 + SUM_SLACK) * eps * np.abs(f64(r)) + ulp(r)
            if x.tol is not None:
                rel = ratio(x.tol, np.abs(vf) - x.tol)
                tol = tol + 2 * np.abs(f64(r)) * np.cumsum(rel, axis=axis)
                tol = np.where(np.isnan(tol), np.inf, tol)
            tol = np.where(risky, np.inf, tol)
    return finish(r, tol, [x])


def _desc_order(a):
    """Stable descending order along the last axis, NaN first (Topk)."""
    if is_float(a.dtype):
        key = np.where(np.isnan(a), -np.inf, -f64(a))
        nan_first = np.where(np.isnan(a), 0, 1)
        idx = np.argsort(key, axis=-1, kind='stable')
        k2 = np.take_along_axis(nan_first, idx, -1)
        return np.take_along_axis(idx, np.argsort(k2, axis=-1, kind='stable'), -1)
    return np.argsort(~a if a.dtype != np.bool_ else ~a, axis=-1, kind='stable')


def axis_op(op, props, x):
    v = x.v
    axis = int(props['axis'])
    if op in ('CumSum', 'CumProd'):
        return _scan(op, x, axis)
    a = np.moveaxis(v, axis, -1)
    if op == 'Sort':
        idx = np.argsort(a, axis=-1, kind='stable')
    else:
        idx = _desc_order(a)[..., :int(props['k'])]
    r = idx.astype(np.int64) if props['indices'] else np.take_along_axis(a, idx, -1)
    r = np.moveaxis(r, -1, axis)
    t = None
    if x.tol is not None:
        lane = np.any(np.moveaxis(x.tol, axis, -1) > 0, axis=-1, keepdims=True)
        t = np.moveaxis(np.broadcast_to(np.where(lane, np.inf, 0.0), np.moveaxis(r, axis, -1).shape), -1, axis)
    return Val(np.asarray(r), t if t is not None and t.any() else None)


def softmax_op(op, props, x):
    """NumPy's max-shifted softmax / log_softmax along the axis, in hp. weft's
    exp is within 2 ulp and its sum is blocked; float64 softmax results below
    3.3e-308 are flushed to 0; x - m is rounded to the dtype, as in NumPy,
    an error exp scales by |x - m|. An input error t moves log_softmax_i by at most
    t_i + max t over the lane, softmax_i by that factor (exp(.) - 1)."""
    v = x.v
    axis = int(props['axis'])
    n = v.shape[axis]
    eps = np.finfo(v.dtype).eps
    with np.errstate(all='ignore'):
        a = v.astype(hp(v.dtype))
        m = np.max(a, axis=axis, keepdims=True) if v.size else a
        s = np.sum(np.exp(a - m), axis=axis, keepdims=True)
        d = a - m
        r = (np.exp(d) / s if op == 'Softmax' else d - np.log(s)).astype(v.dtype)
        if op == 'Softmax':
            # x - m is rounded (as in NumPy): exp turns its error eps |d| relative
            tol = (n + 8) * eps * np.abs(f64(r)) * (1 + np.abs(f64(d))) + 4 * ulp(r)
            if v.dtype == np.float64:
                tol = tol + 3.4e-308
        else:
            tol = (n + 8) * eps * (1 + np.abs(f64(d))) + 4 * ulp(r)
        if x.tol is not None and v.size:
            lane = x.tol + np.max(x.tol, axis=axis, keepdims=True)
            tol = tol + (np.abs(f64(r)) * np.expm1(lane) if op == 'Softmax' else lane)
    return finish(r, tol, [])


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


def einsum_op(props, ins):
    """np.einsum; floats in long double with dot's bound: every summed
    product (at most the product of the summed lengths, plus the operand
    count for the pairwise intermediates) rounds once."""
    s = props['subscripts']
    dt = ins[0].v.dtype
    if not is_float(dt):  # integers wrap as NumPy's
        return Val(np.asarray(np.einsum(s, *[x.v for x in ins])).astype(dt))
    with np.errstate(all='ignore'):
        p = np.einsum(s, *[x.v.astype(np.longdouble) for x in ins])
        mag = np.einsum(s, *[_finite_abs(x.v) for x in ins])
        err = 0
        if any(x.tol is not None for x in ins):
            err = np.einsum(s, *[_finite_abs(x.v) + tol_of(x) for x in ins]) - mag
            err = np.where(np.isnan(err), np.inf, err)
    n_terms = max(1, int(np.prod([x.v.size for x in ins], dtype=np.float64) / max(1, np.asarray(p).size)))
    return _linalg_val(np.asarray(p).astype(dt), n_terms + len(ins), mag, err)


def solve_triangular(a, b, props):
    """scipy.linalg.solve_triangular on broadcast stacks (weft_solve_triangular):
    a vector b is solved against every matrix of a."""
    n = a.shape[-1]
    t = np.tril(a) if props['lower'] else np.triu(a)
    if props['unit_diagonal']:
        t = t - t * np.eye(n) + np.eye(n)
    if props['trans']:
        t = np.swapaxes(t, -1, -2)
    vec = b.ndim == 1
    if vec:
        b = np.broadcast_to(b[:, None], a.shape[:-2] + (n, 1))
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:]
    r = np.linalg.solve(t, b) if n and b.size else np.zeros(shape)
    return r[..., 0] if vec else r


def solve_shape(a, b):
    """np.linalg.solve's output shape (NumPy 1.24): b is a stack of vectors
    when b.ndim == a.ndim - 1, else of matrices; the batch axes broadcast."""
    core = 1 if b.ndim == a.ndim - 1 else 2
    return np.broadcast_shapes(a.shape[:-2], b.shape[:b.ndim - core]) + b.shape[b.ndim - core:]


LAPACK_OPS = ('Solve', 'CholeskySolve', 'Inv', 'Det', 'Svd', 'Eigh', 'SolveTriangular')


def lapack_op(op, ins, props=None):
    """The LAPACK solvers (include/weft/linalg_lapack.h) as np.linalg in
    float64. The generator feeds well-conditioned matrices only (diagonally
    dominant, diff_gen_ops.c la_square), so the error bound is a few ulps
    times the order: 32 (n + 2) eps (|r| + max|r|); Det's relative error also
    grows with |log det| (NumPy's exp of a sum of logs, in the dtype)."""
    a = f64(ins[0].v)
    dt = ins[0].v.dtype
    n = a.shape[-1]
    if op == 'CholeskySolve':
        lo = np.tril(a)
        a = lo @ np.swapaxes(lo, -1, -2)
    if op == 'SolveTriangular':
        r = solve_triangular(a, f64(ins[1].v), props)
    elif op in ('Solve', 'CholeskySolve'):
        b = f64(ins[1].v)
        r = np.linalg.solve(a, b) if n and b.size else np.zeros(solve_shape(a, b))
    elif op == 'Inv':
        r = np.linalg.inv(a) if n else np.zeros(a.shape)
    elif op == 'Svd':  # singular values only (compute_uv false)
        r = np.linalg.svd(a, compute_uv=False) if n else np.zeros(a.shape[:-1])
    elif op == 'Eigh':  # eigenvalues only (eigvalsh)
        uplo = 'L' if props['lower'] else 'U'
        r = np.linalg.eigvalsh(a, UPLO=uplo) if n else np.zeros(a.shape[:-1])
    else:
        r = np.linalg.det(a) if n else np.ones(a.shape[:-2])
    r = np.asarray(r)
    eps = float(np.finfo(dt).eps)
    mag = np.abs(r)
    if op == 'Det':
        with np.errstate(divide='ignore'):
            logs = np.abs(np.log(np.where(mag > 0, mag, 1)))
        tol = 32 * (n + 2) * eps * (1 + logs) * mag
    else:
        tol = 32 * (n + 2) * eps * (mag + (mag.max() if mag.size else 0))
    r = r.astype(dt)
    tol = np.array(np.broadcast_to(tol + ulp(r), r.shape), dtype=np.float64)
    return Val(r, tol if tol.any() else None)


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
        # a == 0: 0*(x@y) is 0 or NaN as the product overflows in dt or not
        # (unsure where raw_mag is huge, below); 0*inf must not make the
        # tolerance NaN
        amag = aa * mag if aa != 0 else np.zeros_like(mag)
    return _linalg_val(r, x.v.shape[-1], amag, err, ab * zm, mag)


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
        fresh = op in ('Dot', 'Gemm', 'Gemv', 'Einsum') or op in LAPACK_OPS or (op in REDUCTIONS and any(
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
            if props.get('shape_input'):
                shape = [int(t) for t in ins[1].v]
            else:
                shape = ins[1].v.shape if props.get('like') else props['shape']
            return _same(ins[0], lambda a: a.reshape(shape))
        if op == 'Shape':
            return Val(np.array(ins[0].v.shape, dtype=np.int64))
        if op == 'Shape_i':
            return Val(np.array(ins[0].v.shape[props['i']], dtype=np.int64))
        if op == 'ARange':
            a, b, c = (x.v.item() for x in ins)
            return Val(np.arange(a, b, c, dtype=props['dtype']))
        if op == 'Linspace':
            a, b, c = (x.v.item() for x in ins)
            return Val(np.linspace(a, b, int(c), endpoint=props['endpoint']).astype(props['dtype']))
        if op == 'AxisIndex':
            return axis_index(props, ins[0].v, ins[1].v if len(ins) > 1 else None)
        if op == 'Subtensor':
            return subtensor(ins[0], parse_index(props['idx']))
        if op == 'Join':
            return join(ins, props['axis'])
        if op == 'Alloc':
            shape = [int(x.v) for x in ins[1:]] if 'shape_inputs' in props else props['shape']
            return _same(ins[0], lambda a: np.broadcast_to(a, shape).copy())
        if op in ('SetSubtensor', 'IncSubtensor'):
            return set_subtensor(ins[0], ins[1], parse_index(props['idx']), op == 'IncSubtensor')
        if op == 'Nonzero':
            return Val(np.flatnonzero(ins[0].v).astype(np.int64))
        if op == 'Take':
            return take_op(props, ins[0], ins[1])
        if op in ('AdvancedSetSubtensor', 'AdvancedIncSubtensor'):
            return adv_update(op, props, ins[0], ins[1], ins[2])
        if op == 'IfElse':
            return ifelse_op(props, ins)
        if op in REDUCTIONS:
            return reduce(op, props, ins[0])
        if op in LANE_REDUCTIONS:
            return lane_reduce(op, props, ins[0])
        if op in AXIS_OPS:
            return axis_op(op, props, ins[0])
        if op in SOFTMAX_OPS:
            return softmax_op(op, props, ins[0])
        if op == 'Dot':
            return dot(ins[0], ins[1])
        if op == 'Einsum':
            return einsum_op(props, ins)
        if op in ('Gemm', 'Gemv'):
            return gemm(*ins)
        if op in LAPACK_OPS:
            return lapack_op(op, ins, props)
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
        if op == 'Cast' or (op in REDUCTIONS and op not in ('Argmax', 'Argmin') and not props['axes']) or \
                (op == 'DimShuffle' and props['order'] == list(range(ins[0].v.ndim))):
            return ids[0] if same(0) else None
        return None

    def stabilized_log(self, vid, shape, dt):
        """log(v) as fast_run's stabilize group computes it (docs/rewrites.md
        §5.1) when v's producer makes a rewrite fire, else None."""
        p = self.producer.get(vid)
        if not p:
            return None
        xs = [self.env[i] for i in p['inputs']]
        fits = xs[0].v.shape == shape and xs[0].v.dtype == dt
        if p['op'] == 'Add':
            for i in (0, 1):
                x = xs[1 - i]
                if self.is_const(p['inputs'][i], 1) and x.v.shape == shape and x.v.dtype == dt:
                    return self.apply('Log1p', {}, [x])
        if p['op'] == 'Sigmoid' and fits:
            x = xs[0]
            with np.errstate(all='ignore'):
                r = np.asarray(-np.logaddexp(0, -x.v.astype(hp(dt)))).astype(dt)
            return finish(r, 4 * ulp(r) + tol_of(x), [x])
        if p['op'] == 'Softmax' and fits:
            return softmax_op('LogSoftmax', p['props'], xs[0])
        if p['op'] == 'Sum':
            e = self.producer.get(p['inputs'][0])
            if e and e['op'] == 'Exp':
                x = self.env[e['inputs'][0]]
                r = lane_reduce('LogSumExp', p['props'], x)
                if r.v.shape == shape and r.v.dtype == dt:
                    return r
        return None

    def fast_math_identity(self, op, props, ids, ins):
        def like(x, shape, dt):
            return _same(conv(x, dt), lambda a: np.array(np.broadcast_to(a, shape)))
        if op in ELEMWISE and op not in ('Cast',) and op not in COMPARISONS and op != 'Switch':
            shape = np.broadcast_shapes(*[x.v.shape for x in ins])
            dt = out_dtype(op, upcast(ins))
        if op == 'Sub' and self.key[ids[0]] == self.key[ids[1]]:
            return Val(np.zeros(shape, dt))
        if op == 'Mul':  # x * 0 is the zero constant itself, its sign kept (canon.c)
            for i in (0, 1):
                if self.is_const(ids[i], 0):
                    return like(Val(self.const[ids[i]]), shape, dt)
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
        if op == 'Log':
            r = self.stabilized_log(ids[0], shape, dt)
            if r is not None:
                return r
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

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from models.common.introsort import introsort_argsort, introsort_argsort_tail, top_desc

REPO = Path(__file__).resolve().parents[2]

_CHECK = r"""
import numpy as np, sys
sys.path.insert(0, sys.argv[1])
from models.common.introsort import introsort_argsort, introsort_argsort_tail
rng = np.random.default_rng(0)
bad = 0
for trial in range(240):
    n = int(rng.integers(1, 2500))
    kind = trial % 4
    if kind == 0: v = rng.integers(0, 5, n).astype(np.float32)
    elif kind == 1: v = rng.random(n)
    elif kind == 2: v = np.round(rng.random(n), 2).astype(np.float32)
    else: v = np.sort(rng.integers(0, 50, n)).astype(np.float64)[::-1].copy()
    a = np.argsort(v)
    bad += not np.array_equal(a, introsort_argsort(v))
    k = int(rng.integers(1, n + 1))
    bad += not np.array_equal(a[n - k:], introsort_argsort_tail(v, k))
print(bad)
"""


def test_introsort_equals_numpy_classic_introsort():
    """With numpy's SIMD sorts disabled, np.argsort is the classic introsort: must match."""
    env = dict(os.environ)
    env["NPY_DISABLE_CPU_FEATURES"] = "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"
    out = subprocess.run([sys.executable, "-c", _CHECK, str(REPO)], env=env, capture_output=True,
                         text=True, timeout=120)
    if out.returncode != 0 and "NPY_DISABLE_CPU_FEATURES" in out.stderr:
        import pytest
        pytest.skip("this numpy build cannot disable its SIMD sort dispatch: " + out.stderr[-200:])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"


def test_introsort_is_a_sort_and_tail_consistent():
    rng = np.random.default_rng(1)
    v = rng.integers(0, 7, 5000).astype(np.float32)
    o = introsort_argsort(v)
    assert np.all(np.diff(v[o]) >= 0) and sorted(o.tolist()) == list(range(v.size))
    np.testing.assert_array_equal(introsort_argsort_tail(v, 123), o[-123:])
    np.testing.assert_array_equal(top_desc(v, 50), o[::-1][:50])


def test_the_heapsort_fallback_sorts_only_its_segment():
    """The depth-limit fallback (reached only on adversarial inputs, so the comparisons above rarely
    meet it): the segment comes out ascending with NaN last, a permutation of what was there, and
    nothing outside it moves."""
    from models.common.introsort import _heapsort
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 40, 257):
        v = rng.integers(0, 6, n + 9).astype(np.float64)
        v[rng.random(n + 9) < 0.15] = np.nan
        idx = rng.permutation(n + 9)
        before = idx.copy()
        _heapsort(v, idx, 4, n)
        seg = v[idx[4:4 + n]]
        finite = seg[~np.isnan(seg)]
        assert np.all(np.diff(finite) >= 0) and not np.isnan(seg[:finite.size]).any()
        assert sorted(idx[4:4 + n]) == sorted(before[4:4 + n])
        assert np.array_equal(idx[:4], before[:4]) and np.array_equal(idx[4 + n:], before[4 + n:])

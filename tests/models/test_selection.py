import numpy as np
import pytest

from models.common.selection import (dpt_top, global_scores, h_top, leverage, leverage_table, order_desc,
                              order_desc_stable, positions, py_round, split_budget,
                              strict_joint_select, strict_prefix_length)


def _naive_strict(order_h, order_d, C, q):
    """Literal transcription of spec §4.4 on full orders."""
    p = len(order_h)
    C = min(C, p)
    ih = round(q * C)
    idd = C - ih
    H = list(order_h[:ih])
    D = list(order_d[:idd])
    U = set(H) | set(D)
    needed = C - len(U)
    if needed > 0:
        th = round(q * needed)
        td = needed - th
        ph, pd, ah, ad = ih, idd, 0, 0
        exh = exd = False
        while ah + ad < needed:
            if exh and exd:
                break
            if exh:
                side = "d"
            elif exd:
                side = "h"
            else:
                sh, sd = max(th - ah, 0), max(td - ad, 0)
                side = "h" if sh > sd else "d" if sd > sh else ("h" if ah <= ad else "d")
            if side == "h":
                while ph < p and order_h[ph] in U:
                    ph += 1
                if ph >= p:
                    exh = True
                    continue
                H.append(order_h[ph])
                U.add(order_h[ph])
                ph += 1
                ah += 1
            else:
                while pd < p and order_d[pd] in U:
                    pd += 1
                if pd >= p:
                    exd = True
                    continue
                D.append(order_d[pd])
                U.add(order_d[pd])
                pd += 1
                ad += 1
    return sorted(H), sorted(D)


@pytest.mark.parametrize("seed", range(20))
def test_strict_matches_literal_spec_and_invariants(seed):
    rng = np.random.default_rng(seed)
    p = int(rng.integers(5, 400))
    C = int(rng.integers(1, 150))
    q = float(rng.choice([0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0]))
    base = rng.permutation(p)
    # correlated orders -> many overlaps
    order_h = base
    order_d = base.copy()
    sw = rng.integers(0, p, size=(p // 3, 2))
    for a, b in sw:
        order_d[a], order_d[b] = order_d[b], order_d[a]
    sel = strict_joint_select(order_h, order_d, C, q)
    H, D = _naive_strict(list(order_h), list(order_d), C, q)
    assert sel.H.tolist() == H and sel.D.tolist() == D
    Ceff = min(C, p)
    U = set(H) | set(D)
    assert len(U) == Ceff
    assert len(H) + len(D) == Ceff + len(set(H) & set(D))
    assert np.all(np.diff(sel.H) > 0) and np.all(np.diff(sel.D) > 0)
    ph, pd = positions(order_h), positions(order_d)
    np.testing.assert_array_equal(sel.h_rank, ph[sel.H])
    np.testing.assert_array_equal(sel.d_rank, pd[sel.D])
    # prefixes are enough
    k = strict_prefix_length(C, p)
    sel2 = strict_joint_select(order_h[:k], order_d[:k], C, q, p=p)
    assert sel2.H.tolist() == H and sel2.D.tolist() == D


def test_strict_extremes():
    rng = np.random.default_rng(0)
    oh, od = rng.permutation(300), rng.permutation(300)
    s0 = strict_joint_select(oh, od, 100, 0.0)
    assert s0.H.size == 0 and s0.D.tolist() == sorted(od[:100].tolist())
    s1 = strict_joint_select(oh, od, 100, 1.0)
    assert s1.D.size == 0 and s1.H.tolist() == sorted(oh[:100].tolist())
    s = strict_joint_select(oh[:10], od[:10], 100, 0.5)  # C capped at p
    assert len(set(s.H) | set(s.D)) == 10


def test_python_rounding_and_split():
    assert py_round(0.5) == 0 and py_round(2.5) == 2 and py_round(3.5) == 4
    assert split_budget(100, None) == (100, 100)
    assert split_budget(100, 0.3) == (30, 70)
    assert split_budget(10, 0.25) == (2, 8)  # round(2.5) = 2
    with pytest.raises(ValueError):
        split_budget(10, 1.5)


def test_orders_and_tops():
    s = np.array([0.1, 0.5, 0.5, 0.9, 0.0], dtype=np.float32)
    o = order_desc(s)
    assert o[0] == 3 and set(o[1:3]) == {1, 2} and o[-1] == 4
    assert order_desc_stable(s).tolist() == [3, 1, 2, 0, 4]
    assert h_top(o, 2).tolist() == o[:2].tolist()
    assert dpt_top(o, 3).tolist() == sorted(o[:3].tolist())
    np.testing.assert_array_equal(order_desc(s, 2), o[:2])


def test_leverage():
    rng = np.random.default_rng(3)
    Vt = rng.standard_normal((5, 40))
    np.testing.assert_allclose(leverage(Vt, 3), (Vt[:3] ** 2).sum(0))
    L = leverage_table(Vt, 5)
    for nc in range(1, 6):
        np.testing.assert_array_equal(L[nc - 1], leverage(Vt, nc))
    r = rng.standard_normal(40).astype(np.float32)
    np.testing.assert_allclose(global_scores(L[1], r), L[1] * np.abs(r))

"""Real-data comparison of models.compat with the published reference outputs.

Reads ``../shared/pace-results`` and ``../shared/reference`` (skips when absent).
Two numeric environments are checked:

* ``compat numerics`` — a subprocess with ``COMPAT_NUMERICS_ENV``
  (OpenBLAS Haswell kernels, as on the machine that produced the references):
  the issue's tolerances are asserted;
* ``native`` — this process's default BLAS kernels: the same pipeline, but the
  published method's sensitivity to floating-point noise (exact ties of
  embedding values, null-space SVD columns; spec §18.21/§18.23) moves some
  numbers; looser, documented bounds are asserted and the figures printed.
"""

import numpy as np
import pytest

from tests.support.compat_env import run_in_compat_numerics
from tests.support.published_loader import default_reference_dir, default_results_dir

FOLDERS = ["v1", "v2", "v3", "v4"]
RUNS = ["fit_abs_C100", "abs_C100_frozen", "abs_C100_autotune"]

pytestmark = pytest.mark.realdata

_have = default_results_dir().is_dir() and default_reference_dir().is_dir()
if not _have:
    pytest.skip("../shared/pace-results or ../shared/reference not present", allow_module_level=True)

#: residuals that remain even under the compat numerics environment
#: (reference: numpy 1.26/OpenBLAS 0.3.23; ours: numpy 2.x/OpenBLAS 0.3.31)
KNOWN_EXACT_ENV_RESIDUALS = {
    "v1/abs_C100_autotune": "swebench_multimodal: a tie-noise-sensitive config (m=1, nc_h=4, q=0.6) "
                            "scores 0.02 better than the reference's winner under this OpenBLAS",
}


@pytest.fixture(scope="module")
def exact_results():
    return run_in_compat_numerics("tests.support.run_reference", FOLDERS, timeout=600)


@pytest.fixture(scope="module")
def native_results():
    from tests.support.run_reference import compare_all
    return compare_all(FOLDERS)


def test_loader_matches_reference_shapes():
    from tests.support.published_loader import load_published
    from tests.support.reference import REFERENCE_SOURCES
    expect = {"v1": (2068, 1935), "v2": (7068, 6544), "v3": (14217, 13377), "v4": (16381, 14757)}
    for v, (raw, valid) in expect.items():
        d = load_published(sources=REFERENCE_SOURCES[v])
        assert d.X_raw_cols == raw and d.X.shape == (14, valid)
        assert d.targets == ["gaia", "swebench", "swebench_multimodal", "swtbench"]
        assert {t: p.shape[1] for t, p in d.P.items()} == {
            "gaia": 165, "swebench": 500, "swebench_multimodal": 102, "swtbench": 431}
        assert d.Y.dtype == np.float32
        assert d.Y[3, 1] == 0.0  # DeepSeek-V3.2 swebench: no file -> 0 (spec §18.4)
        assert round(float(d.Y[0, 0]), 3) == 0.691 and round(float(d.Y[13, 1]), 3) == 0.624


def _check(c, key, strict_known=None):
    assert c["max_actual_diff"] <= 1e-6, key
    for t, r in c["per_target"].items():
        assert abs(r["d_mae"]) <= 0.005, (key, t, r)
        assert abs(r["d_spearman"]) <= 0.15, (key, t, r)
    ok_pp = c["frac_within_1pp"] >= 0.90
    ok_sel = c["selection"]["mean"] >= 0.95
    if strict_known and not (ok_pp and ok_sel):
        pytest.xfail(f"{key}: {strict_known} (within 1pp {c['frac_within_1pp']:.3f}, "
                     f"selection overlap {c['selection']['mean']:.3f})")
    assert ok_pp, (key, c["frac_within_1pp"])
    assert ok_sel, (key, c["selection"])


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("run", RUNS)
def test_reference_tolerances_compat_numerics(exact_results, folder, run):
    key = f"{folder}/{run}"
    _check(exact_results[key], key, KNOWN_EXACT_ENV_RESIDUALS.get(key))


def test_reference_native_numerics(native_results):
    """Native BLAS kernels: target means exact; selections of the frozen configs equal up to
    ties; every run within documented noise bounds (figures printed for the report)."""
    for key, c in native_results.items():
        print(key, f"within1pp={c['frac_within_1pp']:.3f} sel={c['selection']['mean']:.3f}",
              {t: (round(r['d_mae'] * 100, 2), round(r['d_spearman'], 3)) for t, r in c['per_target'].items()})
        assert c["max_actual_diff"] <= 1e-6
        assert c["frac_within_1pp"] >= 0.70, key
        for t, r in c["per_target"].items():
            assert abs(r["d_mae"]) <= 0.01, (key, t)
            assert abs(r["d_spearman"]) <= 0.20, (key, t)
        if "autotune" not in key:
            assert c["selection"]["mean"] >= 0.95, key

"""Real-data comparison of models.compat.goal_b (compat Goal B) with the published reference outputs.

Reads ``../shared/pace-results`` and ``../shared/reference`` (skips when absent). Runs
``pair --count 100 --B 300 --seed 42 --strict-budget --pin-task-a-selection`` (frozen,
TASK_B_CONFIGS_PINNED_A) and the same with ``--auto-tune`` for v1..v4.

* ``compat numerics`` — a subprocess with ``COMPAT_NUMERICS_ENV`` (OpenBLAS Haswell kernels):
  per-target pair accuracy within 2 pp of the log, the auto-tuned configs equal, the Platt
  parameters equal to the printed precision. Measured: every run identical (accuracy, every
  predicted winner, margins to 1e-6 relative) except ``v1/pair_C100_autotune``, which inherits the
  known Goal A auto-tune residual (swebench_multimodal: our Goal A picks another config, so another
  selection is pinned). With the reference's Goal A configs (``pair_C100_autotune_refA``) v1 is
  identical too.
* ``native`` — this process's BLAS kernels. Where the pinned H sets are rank-deficient for the
  configured nc_h (spec §18 item 23: held-out coordinates of ~1e10–1e12 along null directions),
  the margin signs are floating-point noise and accuracies move by up to ~18 pp (v1/v2 frozen), so
  only v4 (no such blow-up in the selected configs) is run and asserted.
"""

import pytest

from tests.support.compat_env import run_in_compat_numerics
from tests.support.published_loader import default_reference_dir, default_results_dir

FOLDERS = ["v1", "v2", "v3", "v4"]
RUNS = ["pair_C100_frozen", "pair_C100_autotune", "pair_C100_autotune_refA"]

pytestmark = pytest.mark.realdata

_have = default_results_dir().is_dir() and default_reference_dir().is_dir()
if not _have:
    pytest.skip("../shared/pace-results or ../shared/reference not present", allow_module_level=True)

KNOWN_EXACT_ENV_RESIDUALS = {
    "v1/pair_C100_autotune": "inherits the Goal A v1 auto-tune residual (swebench_multimodal: Goal A "
                             "picks m=1.0/nc_h=4/nc_d=9/q=0.6 instead of 0.1/6/6/0.7 under this "
                             "OpenBLAS, so a different selection is pinned); exact with refA",
}


@pytest.fixture(scope="module")
def exact_results():
    return run_in_compat_numerics("tests.support.run_pair_reference", FOLDERS, timeout=1200)


#: the folder the native check asserts: in v1-v3 the margins' signs are floating-point noise under native
#: kernels (see the module doc), so running them here only printed figures (~20 s of the suite)
NATIVE_FOLDERS = ["v4"]


@pytest.fixture(scope="module")
def native_results():
    from tests.support.run_pair_reference import compare_all
    return compare_all(NATIVE_FOLDERS, runs=("pair_C100_frozen", "pair_C100_autotune"))


def _report(key, c):
    print(key, f"avg={c['average']:.4f} ref={c['ref_average']:.4f} {c['seconds']:.1f}s",
          {t: (round(r["d_acc_pp"], 2), round(r["winner_agree"], 3)) for t, r in c["per_target"].items()})


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("run", RUNS)
def test_pair_reference_compat_numerics(exact_results, folder, run):
    key = f"{folder}/{run}"
    c = exact_results[key]
    _report(key, c)
    known = KNOWN_EXACT_ENV_RESIDUALS.get(key)
    ok_acc = all(abs(r["d_acc_pp"]) <= 2.0 for r in c["per_target"].values())
    ok_cfg = ("ref_configs" not in c) or c["configs"] == c["ref_configs"]
    if known and not (ok_acc and ok_cfg):
        pytest.xfail(f"{key}: {known}")
    for t, r in c["per_target"].items():
        assert abs(r["d_acc_pp"]) <= 2.0, (key, t, r)
        assert r["n"] == r["ref_n"], (key, t)
        assert r["winner_agree"] >= 0.95, (key, t, r["winner_agree"])
        for mine, ref in zip(r["platt"], r["ref_platt"]):
            assert abs(mine - ref) <= 2e-3 + 1e-4 * abs(ref), (key, t, r["platt"], r["ref_platt"])
    assert ok_cfg, (key, c["configs"], c.get("ref_configs"))


def test_pair_reference_native_numerics(native_results):
    """Native BLAS: v4 (no rank blow-up in its configs) within 2 pp."""
    assert sorted(native_results) == ["v4/pair_C100_autotune", "v4/pair_C100_frozen"]
    for key, c in native_results.items():
        _report(key, c)
        for t, r in c["per_target"].items():
            assert r["n"] == r["ref_n"]
            assert abs(r["d_acc_pp"]) <= 2.0, (key, t, r)

"""The ``default`` method's inductive training basis (spec §20 items 3–5, 11).

Everything one training set determines, from the training rows only, independent of the target:
usable columns (observed for ≥ ``MIN_OBS`` of the training models and, in LOOCV, for the model to
predict — its source row only), training-mean imputation and centring, the zero-variance filter,
deduplication of identical columns (stable: the first column represents its group), the global
SVD of the centred block truncated at numerical rank, and the normalised ranks used by selection.

Large training blocks (more than ``LARGE_CELLS`` rows × columns, e.g. 900 models × 100k instances,
where one dense copy of the block is 720 MB and its SVD ~15 s) give the same quantities computed
column chunk by column chunk, without any dense copy of the block:

* the ranks are kept as integers (twice the average rank, exact) and the rank correlations with a
  target computed from them on request (the same normalised ranks, summed in another order);
* the centred block is recomputed from X for the columns a proxy selects (``block``);
* only the leading ``LEADING`` right singular vectors are kept (every grid uses nc ≤ 8), from the
  eigenvectors of the m × m Gram matrix of the centred block: the SVD's vectors up to rounding
  (~1e-12 relative), not an approximation of them. When the Gram matrix cannot tell that the rank
  is at least ``LEADING``, the full SVD is used as for a small block.

Below ``LARGE_CELLS`` (the real data: 14 models × 16k instances) the arithmetic is exactly the
dense one, so those results are bit for bit what they were.
"""
from __future__ import annotations

import copy
import hashlib
import math
import threading
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np

from models.common.spearman import average_ranks_few_values, normalized_ranks

__all__ = ["RANK_RTOL", "MIN_OBS", "VAR_EPS", "LARGE_CELLS", "LEADING", "svd_wide", "rank_truncation",
           "duplicate_groups", "TrainingBasis", "CentredRows", "training_basis", "shared_bases",
           "large_bases_note"]

#: singular values ≤ s_max · RANK_RTOL count as zero (numerical rank)
RANK_RTOL = 1e-8
#: a column is usable in a fold when observed for at least this share of the training models
MIN_OBS = 0.75
#: a column whose centred training variance is ≤ this is constant
VAR_EPS = 1e-10
#: training blocks with more cells (training rows × columns of X) than this take the chunked path
LARGE_CELLS = 5_000_000
#: right singular vectors a large basis keeps (the grids use nc ≤ 8)
LEADING = 10
#: columns per chunk of the chunked path (m × CHUNK float64: 30 MB at m = 900)
CHUNK = 4096
_KEY_SEED = 20261205      # column_keys' words: any fixed value
#: the Gram matrix tells the rank is ≥ LEADING when λ_LEADING > λ_1 · GRAM_RTOL (s ratio 1e-5 ≫ RANK_RTOL)
GRAM_RTOL = 1e-10


def svd_wide(A: np.ndarray):
    """Thin SVD (U, S, Vt) of a wide matrix (m ≪ p) via QR of Aᵀ (same result, ~2× faster than gesdd)."""
    m, p = A.shape
    if p <= 2 * m:
        return np.linalg.svd(A, full_matrices=False)
    Q, R = np.linalg.qr(A.T)
    U, S, Wt = np.linalg.svd(R.T)
    return U, S, Wt @ Q.T


def rank_truncation(S: np.ndarray) -> int:
    """Numerical rank of descending singular values S: #{s > s_max · RANK_RTOL} (0 if none)."""
    if S.size == 0 or S[0] <= 0:
        return 0
    return int((S > S[0] * RANK_RTOL).sum())


def duplicate_groups(B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups of identical columns of B (m, p): (first column of each group, ascending; group sizes).

    The same result as ``np.unique(B.T, axis=0, return_index=True, return_counts=True)`` reordered by
    first index (0.0 and -0.0 are equal), by hashing each column's bytes (~10x faster at p ~ 10^5:
    no lexicographic sort of the columns); a hash collision is resolved by comparing the values."""
    cols = np.ascontiguousarray(B.T) + 0.0         # + 0.0 turns -0.0 into 0.0, as np.unique compares
    groups: dict[bytes, list[int]] = {}
    reps: list[int] = []
    count: list[int] = []
    for j in range(cols.shape[0]):
        key = cols[j].tobytes()
        found = groups.get(key)
        if found is None:
            groups[key] = [len(reps)]
            reps.append(j)
            count.append(1)
        else:
            count[found[0]] += 1
    return np.asarray(reps, dtype=np.int64), np.asarray(count, dtype=np.int64)


def column_keys(cols: np.ndarray) -> list[int]:
    """A 64-bit key of each row of ``cols`` (p, m) float64, from its bits (equal rows, equal keys; a shared key
    does not prove equality: compare the values). A multiply-add of the bits with fixed random odd words,
    vectorised: a hash per column in a Python loop (blake2b over each column's bytes) held the GIL for ~20 s
    of a 1,000-model fit, in both worker threads at once."""
    bits = np.ascontiguousarray(cols, dtype=np.float64).view(np.uint64)
    words = np.random.default_rng(_KEY_SEED).integers(0, 2 ** 63, size=bits.shape[1], dtype=np.uint64) * 2 + 1
    mixed = (bits * words).sum(axis=1, dtype=np.uint64)         # wraps modulo 2^64, as intended
    return (mixed ^ (mixed >> np.uint64(31))).tolist()


class TrainingBasis:
    """Everything a training set determines (target independent).

    X: (n, S) raw scores (NaN = missing); rows: training rows; mask_rows: rows that must be
    observed on a usable column (the model to predict; empty for a fit on all models).
    Attributes — cols: usable, non-constant columns (indices into X); mu: their training means;
    reps: indices into ``cols`` of the duplicate-group representatives (ascending); mult: group
    sizes; rep_cols / rep_mu: the representatives' columns and means; Vr: (r, p_rep) right
    singular vectors of the full centred block (duplicates weighted by multiplicity) restricted
    to the representatives, r = numerical rank (a large basis: r = min(rank, LEADING));
    lev: (r, p_rep) cumulative leverages (row c = nc of c + 1); large: the chunked path was taken.
    Small bases also hold Bc: (m, p_rep) the centred imputed training block on reps and Z: the
    normalised ranks of the training block on reps; use ``block`` and ``rank_correlation``, which
    work for both.
    """

    def __init__(self, X: np.ndarray, rows: np.ndarray, mask_rows: np.ndarray, min_obs: float,
                 large: bool | None = None):
        self.rows, self.m = rows, len(rows)
        self._X = None
        self._rank_memo: dict[bytes, np.ndarray] = {}
        if large is None:
            large = self.m * X.shape[1] > LARGE_CELLS and self.m > 2 * LEADING
        self.large = bool(large) and self._init_large(X, np.asarray(rows, dtype=np.int64), mask_rows, min_obs)
        if not self.large:
            self._init_dense(X, rows, mask_rows, min_obs)
        self.lev = np.cumsum(self.Vr * self.Vr, axis=0)  # row c = leverage with nc = c + 1

    # ------------------------------------------------------------------ small blocks: dense arithmetic
    def _init_dense(self, X, rows, mask_rows, min_obs) -> None:
        Xtr = X[rows]
        m = self.m
        obs = ~np.isnan(Xtr)
        ok = obs.sum(axis=0) >= max(2, math.ceil(min_obs * m - 1e-9))
        if mask_rows.size:
            ok &= ~np.isnan(X[mask_rows]).any(axis=0)
        cols = np.flatnonzero(ok)
        Bk = Xtr[:, cols]
        mu = np.nanmean(Bk, axis=0) if cols.size else np.zeros(0)
        Bk = np.where(np.isnan(Bk), mu, Bk)
        Bc = Bk - mu
        keep = (Bc * Bc).mean(axis=0) > VAR_EPS
        cols, mu, Bk, Bc = cols[keep], mu[keep], Bk[:, keep], Bc[:, keep]
        if cols.size:
            reps, mult = duplicate_groups(Bk)
        else:
            reps, mult = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        self.cols, self.mu = cols, mu
        self.reps, self.mult = reps, mult
        self.rep_cols = cols[reps]
        self.rep_mu = mu[reps]
        self.Bc = Bc[:, reps]
        if reps.size:
            sq = np.sqrt(mult.astype(np.float64))
            _, S, Vt = svd_wide(self.Bc * sq)
            r = rank_truncation(S)
            self.Vr = Vt[:r] / sq
            self.Z = normalized_ranks(Bk[:, reps])
        else:
            self.Vr = np.zeros((0, 0))
            self.Z = np.zeros((m, 0))

    # ------------------------------------------------------------------ large blocks: column chunks
    def _init_large(self, X, rows, mask_rows, min_obs) -> bool:
        """The chunked path; False (nothing kept) when the Gram matrix cannot certify rank ≥ LEADING."""
        m, S = self.m, X.shape[1]
        need = max(2, math.ceil(min_obs * m - 1e-9))
        observed_new = ~np.isnan(X[mask_rows]).any(axis=0) if mask_rows.size else None
        cols, mus, ranks, rank_mean, rank_scale = [], [], [], [], []
        reps: list[int] = []           # positions among the usable columns
        rep_x: list[int] = []          # their columns of X and means (to compare a hash match)
        rep_mu: list[float] = []
        mult: list[int] = []
        groups: dict[int, list[int]] = {}
        rank_dtype = np.int16 if 2 * m < np.iinfo(np.int16).max else np.int32
        gram = np.zeros((m, m))
        n_cols = 0
        for a in range(0, S, CHUNK):
            blk = X[rows, a:a + CHUNK]
            ok = (~np.isnan(blk)).sum(axis=0) >= need
            if observed_new is not None:
                ok &= observed_new[a:a + CHUNK]
            idx = np.flatnonzero(ok)
            if not idx.size:
                continue
            Bk = blk[:, idx]
            mu = np.nanmean(Bk, axis=0)
            Bk = np.where(np.isnan(Bk), mu, Bk)
            Bc = Bk - mu
            keep = (Bc * Bc).mean(axis=0) > VAR_EPS
            if not keep.any():
                continue
            idx, mu, Bk, Bc = idx[keep], mu[keep], Bk[:, keep], Bc[:, keep]
            gram += Bc @ Bc.T          # every column, duplicates included: their multiplicity weights
            values = np.ascontiguousarray(Bk.T) + 0.0     # as duplicate_groups: -0.0 equals 0.0
            new = []
            for j, key in enumerate(column_keys(values)):
                held = groups.get(key)
                found = None if held is None else next(
                    (g for g in held if self._imputed(X, rows, rep_x[g], rep_mu[g]).tobytes() == values[j].tobytes()),
                    None)
                if found is None:
                    groups.setdefault(key, []).append(len(reps))
                    reps.append(n_cols + j)
                    rep_x.append(a + int(idx[j]))
                    rep_mu.append(mu[j])
                    mult.append(1)
                    new.append(j)
                else:
                    mult[found] += 1
            cols.append(a + idx)
            mus.append(mu)
            n_cols += idx.size
            if new:
                R = average_ranks_few_values(Bk[:, new])
                ranks.append((2 * R).astype(rank_dtype))       # half-integers: exact
                centred = R - R.mean(axis=0)
                rank_mean.append(R.mean(axis=0))
                rank_scale.append(np.sqrt((centred * centred).mean(axis=0)) + 1e-12)
        if not reps or m <= LEADING:
            return False
        from scipy.linalg import eigh

        lam, vec = eigh(gram, subset_by_index=[m - LEADING, m - 1])
        lam, vec = lam[::-1], vec[:, ::-1]
        if not lam[0] > 0 or lam[-1] <= lam[0] * GRAM_RTOL:
            return False
        self.cols, self.mu = np.concatenate(cols), np.concatenate(mus)
        self.reps, self.mult = np.asarray(reps, dtype=np.int64), np.asarray(mult, dtype=np.int64)
        self.rep_cols, self.rep_mu = self.cols[self.reps], self.mu[self.reps]
        self._X, self._rows = X, rows
        self._ranks = np.concatenate(ranks, axis=1)
        self._rank_mean, self._rank_scale = np.concatenate(rank_mean), np.concatenate(rank_scale)
        self.Bc = self.Z = None
        # V_k = U_kᵀ Bc / s_k on the representatives (the weighted SVD's V_k divided by √mult)
        s = np.sqrt(lam)
        Vr = np.empty((LEADING, self.reps.size))
        for a in range(0, self.reps.size, CHUNK):
            part = np.arange(a, min(a + CHUNK, self.reps.size))
            Vr[:, part] = (vec.T @ self.block(part)) / s[:, None]
        self.Vr = Vr
        return True

    @staticmethod
    def _imputed(X, rows, col: int, mu: float) -> np.ndarray:
        """Column ``col`` of the training rows, missing cells imputed with ``mu`` (-0.0 as 0.0)."""
        x = X[rows, col]
        return np.where(np.isnan(x), mu, x) + 0.0

    # ------------------------------------------------------------------ both
    def block(self, cols: np.ndarray) -> np.ndarray:
        """(m, |cols|) the centred imputed training block on representatives ``cols`` (indices into reps)."""
        if self.Bc is not None:
            return self.Bc[:, cols]
        D = self._X[np.ix_(self._rows, self.rep_cols[cols])] - self.rep_mu[cols]
        return np.where(np.isnan(D), 0.0, D)

    def rank_correlation(self, zy: np.ndarray) -> np.ndarray:
        """(p_rep,) Spearman correlation of each representative with a target whose normalised ranks
        over the training rows are ``zy`` (m,)."""
        if self.Z is not None:
            return (self.Z.T @ zy) / self.m
        key = zy.tobytes()
        hit = self._rank_memo.get(key)
        if hit is None:
            # a column sum per column (not a matrix product, whose rounding depends on where a column sits
            # in its block): columns with the same ranks get exactly the same correlation, a tie
            hit = np.empty(self.reps.size)
            for a in range(0, self.reps.size, CHUNK):
                R = self._ranks[:, a:a + CHUNK] * 0.5
                Z = (R - self._rank_mean[a:a + CHUNK]) / self._rank_scale[a:a + CHUNK]
                hit[a:a + CHUNK] = (Z * zy[:, None]).sum(axis=0) / self.m
            self._rank_memo[key] = hit
        return hit

    def centred(self, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Rows of X on the representatives, centred on the training means (missing → 0)."""
        D = X[np.ix_(rows, self.rep_cols)] - self.rep_mu
        return np.where(np.isnan(D), 0.0, D)

    def bound(self, X: np.ndarray | None, rows) -> "TrainingBasis":
        """The same basis reading its block from ``X[rows]`` (the same content; a large basis only keeps a
        reference to X, which a cached copy must not hold)."""
        if not self.large:
            return self
        other = copy.copy(self)
        other._X, other._rows, other.rows = X, None if rows is None else np.asarray(rows, dtype=np.int64), rows
        return other

    def nbytes(self) -> int:
        """Bytes of the arrays this basis holds (not X)."""
        arrays = [v for v in vars(self).values() if isinstance(v, np.ndarray)] + list(self._rank_memo.values())
        return int(sum(a.nbytes for a in arrays if a is not self._X))

    def centred_rows(self, X: np.ndarray, rows: np.ndarray):
        """``centred(X, rows)``; for a large basis a ``CentredRows``, computed per column subset on request
        (``[:, cols]``), never whole."""
        return CentredRows(self, X, rows) if self.large else self.centred(X, rows)


class CentredRows:
    """Rows of X centred on a basis' representatives (missing → 0), for the requested columns only:
    ``cr[:, cols]`` equals ``bs.centred(X, rows)[:, cols]`` without the (h, p_rep) block."""

    def __init__(self, bs: TrainingBasis, X: np.ndarray, rows: np.ndarray):
        self.bs, self.X, self.rows = bs, X, np.asarray(rows)
        self.shape = (self.rows.size, bs.rep_cols.size)

    def __getitem__(self, key):
        if not (isinstance(key, tuple) and len(key) == 2 and key[0] == slice(None)):
            raise TypeError("CentredRows supports [:, cols] only")
        cols = np.asarray(key[1])
        D = self.X[np.ix_(self.rows, self.bs.rep_cols[cols])] - self.bs.rep_mu[cols]
        return np.where(np.isnan(D), 0.0, D)


# ------------------------------------------------------------------------------ sharing bases in one fit
class _BasisCache:
    """Bases by the content of their training block, least recently used dropped beyond ``max_bytes``."""

    def __init__(self, max_bytes: int):
        self.max_bytes = int(max_bytes)
        self.entries: OrderedDict[bytes, tuple[TrainingBasis, int]] = OrderedDict()
        self.bytes = 0
        self.hits = self.misses = self.large = 0
        self.lock = threading.Lock()

    def get(self, key: bytes) -> TrainingBasis | None:
        with self.lock:
            found = self.entries.get(key)
            if found is None:
                self.misses += 1
                return None
            self.entries.move_to_end(key)
            self.hits += 1
            return found[0]

    def release(self, keep_sharing: bool = False) -> None:
        """Drop every basis (the counts stay); unless ``keep_sharing``, keep none from now on either (for
        training sets no later fit shares)."""
        with self.lock:
            self.entries.clear()
            self.bytes = 0
            if not keep_sharing:
                self.max_bytes = 0

    def put(self, key: bytes, bs: TrainingBasis) -> None:
        size = bs.nbytes()
        with self.lock:
            if key in self.entries or size > self.max_bytes:
                return
            self.entries[key] = (bs, size)
            self.bytes += size
            while self.bytes > self.max_bytes:
                _, (_, dropped) = self.entries.popitem(last=False)
                self.bytes -= dropped


_ACTIVE: _BasisCache | None = None


@contextmanager
def shared_bases(max_bytes: int = 5 << 29):
    """Inside the block ``training_basis`` hands out a basis already built for the same training models
    (same mask, same ``min_obs``) instead of building it again: a fit builds the same K-fold bases for its
    pairwise part, its tuning and its interval residuals. The result is the same either way (a basis is a
    deterministic function of its block). Only for a block in which a model name always stands for the same
    scores (one fit's matrices). Yields the cache (``hits``, ``misses``, ``large``: large bases built,
    ``release()``)."""
    global _ACTIVE
    previous, _ACTIVE = _ACTIVE, _BasisCache(max_bytes)
    try:
        yield _ACTIVE
    finally:
        _ACTIVE = previous


def large_bases_note(count: int) -> str:
    """What a fit says when ``count`` of its bases took the chunked path."""
    return (f"{count} training bases over {LARGE_CELLS:,} cells (training models x source instances) kept their "
            f"leading {LEADING} singular vectors, from the Gram matrix, instead of a full SVD (the same vectors "
            "up to rounding; every configuration uses at most 8)")


def _block_key(X: np.ndarray, rows, mask_rows, min_obs: float, names) -> bytes:
    """The models of the training rows and of the mask rows by name, and a digest of a sample of the
    block's values (every 61st column: a guard, not the identity; hashing whole blocks would cost ~1 s each
    at 1,000 models x 100k instances)."""
    rows, mask_rows = np.asarray(rows, dtype=np.int64), np.asarray(mask_rows, dtype=np.int64)
    h = hashlib.blake2b(digest_size=32)
    h.update(repr((X.shape[1], float(min_obs), [str(names[i]) for i in rows], [str(names[i]) for i in mask_rows]))
             .encode())
    h.update(np.ascontiguousarray(X[np.ix_(rows, np.arange(0, X.shape[1], 61))]).tobytes())
    return h.digest()


def training_basis(X: np.ndarray, rows, mask_rows, min_obs: float, names=None) -> TrainingBasis:
    """``TrainingBasis(X, rows, mask_rows, min_obs)``. Inside ``shared_bases`` and given ``names`` (the models
    of X's rows: within the block a model's row holds the same scores in every X, as in one fit), the basis
    already built for the same training (and mask) models, rebound to this X and rows."""
    cache = _ACTIVE
    if cache is None:
        return TrainingBasis(X, rows, mask_rows, min_obs)
    key = None if names is None else _block_key(X, rows, mask_rows, min_obs, names)
    found = None if key is None else cache.get(key)
    if found is not None:
        return found.bound(X, rows)
    bs = TrainingBasis(X, rows, mask_rows, min_obs)
    if bs.large:
        with cache.lock:
            cache.large += 1
    if key is not None:
        cache.put(key, bs.bound(None, None) if bs.large else bs)
    return bs

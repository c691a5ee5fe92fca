"""Distance to the closest record and a membership-inference test, benchmarked by a holdout set.

Distances are Gower distances: the mean over columns of a per-column distance, 0/1 mismatch
for categorical columns and ``|x - y| / range`` for numeric ones (range of the original data),
so every distance lies in [0, 1] and 0 means an exact copy.

- :func:`distance_to_closest_record`: for (a sample of) synthetic records, the distance to the
  closest original record and, with a holdout set (records from the same population not used to
  synthesize), to the closest holdout record.  The two reference sets are cut to the same size,
  so that a synthesizer which does not copy puts each synthetic record closer to the original set
  half of the time (ties count one half).
- :func:`membership_inference`: an intruder holding records of which half were used to
  synthesize (members, from the original) and half were not (holdout) guesses membership from
  the distance to the closest synthetic record; the AUC of that guess is 0.5 when synthesis leaks
  nothing about membership.

Course 002, sections 3.16.2 to 3.16.4.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..._frames import as_pandas
from ..._random import as_generator
from ..._results import Result
from ..._validation import check_integer
from ...exceptions import DataError, InvalidArgumentError
from ._data import as_frame_pair, check_columns, is_categorical, joint_codes, numeric_values
from ._propensity import roc_auc

__all__ = ["DistanceToClosestRecord", "MembershipInference", "distance_to_closest_record", "membership_inference"]

_BLOCK_ELEMENTS = 1 << 23  # query x reference entries per block (~32 MB of float32)


def _encode(frames: list[pd.DataFrame], cols: list[str], categorical: Sequence[str] | None, owner: str) -> Any:
    """Categorical codes (int32) and scaled numeric values (float32) of each frame."""
    cat = [c for c in cols if any(is_categorical(f[c], categorical) for f in frames)]
    num = [c for c in cols if c not in cat]
    cat_codes = [np.zeros((len(f), len(cat)), dtype=np.int32) for f in frames]
    for j, c in enumerate(cat):
        codes, _ = joint_codes([f[c] for f in frames])
        for k, a in enumerate(codes):
            cat_codes[k][:, j] = a
    num_vals = [np.zeros((len(f), len(num)), dtype=np.float32) for f in frames]
    for j, c in enumerate(num):
        vals = [numeric_values(f[c], owner) for f in frames]
        ref = vals[0][~np.isnan(vals[0])]
        rng_ = float(ref.max() - ref.min()) if ref.size else 0.0
        scale = 1.0 / rng_ if rng_ > 0 else 0.0
        for k, v in enumerate(vals):
            num_vals[k][:, j] = np.nan_to_num((v - (ref.min() if ref.size else 0.0)) * scale, nan=0.0)
    return cat_codes, num_vals, len(cols)


def _nearest(qc: np.ndarray, qn: np.ndarray, rc: np.ndarray, rn: np.ndarray, p: int) -> np.ndarray:
    """Gower distance from each query row to its nearest reference row (blocks of queries)."""
    nq, nr = qc.shape[0], rc.shape[0]
    out = np.empty(nq, dtype=np.float64)
    if nr == 0:
        out[:] = np.nan
        return out
    step = max(1, _BLOCK_ELEMENTS // max(nr, 1))
    for a in range(0, nq, step):
        b = min(nq, a + step)
        acc = np.zeros((b - a, nr), dtype=np.float32)
        for j in range(qc.shape[1]):
            acc += qc[a:b, j, None] != rc[None, :, j]
        for j in range(qn.shape[1]):
            acc += np.abs(qn[a:b, j, None] - rn[None, :, j])
        out[a:b] = acc.min(axis=1) / p
    return out


def _inputs(
    original: Any, synthetic: Any, holdout: Any, n_sample: int | None, owner: str
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None, int | None]:
    """The checked original, synthetic and holdout frames (holdout None when not given) and n_sample."""
    if n_sample is not None:
        n_sample = check_integer(n_sample, "n_sample", owner, low=1)
    orig, syn = as_frame_pair(original, synthetic, owner)
    hold = None
    if holdout is not None:
        hold = as_pandas(holdout, "holdout")
        if len(hold) == 0:
            raise DataError(f"{owner}: the holdout data have no rows.")
    return orig, syn, hold, n_sample


def _sample(n: int, size: int | None, gen: np.random.Generator) -> np.ndarray:
    if size is None or size >= n:
        return np.arange(n)
    return np.sort(gen.choice(n, size=size, replace=False))


@dataclass(frozen=True)
class DistanceToClosestRecord(Result):
    """Distances from synthetic records to the closest original (and holdout) record.

    Attributes
    ----------
    dcr_original : numpy.ndarray
        Gower distance of each sampled synthetic record to the closest original record.
    dcr_holdout : numpy.ndarray or None
        The same to the closest holdout record.
    share_exact_original, share_exact_holdout : float
        Shares of sampled synthetic records that copy an original (holdout) record exactly.
    median_original, median_holdout : float
    share_closer_to_original : float
        Share of synthetic records closer to the original set than to the holdout set (ties
        count 1/2); 0.5 expected when synthesis does not copy.
    n_reference : int
        Records in each reference set (both cut to the same size when there is a holdout).
    """

    dcr_original: np.ndarray = field(repr=False)
    dcr_holdout: np.ndarray | None = field(repr=False)
    share_exact_original: float
    share_exact_holdout: float
    median_original: float
    median_holdout: float
    share_closer_to_original: float
    n_reference: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "share_exact_original": self.share_exact_original,
            "share_exact_holdout": self.share_exact_holdout,
            "median_original": self.median_original,
            "median_holdout": self.median_holdout,
            "share_closer_to_original": self.share_closer_to_original,
        }


@dataclass(frozen=True)
class MembershipInference(Result):
    """A distance-based membership-inference test.

    Attributes
    ----------
    auc : float
        AUC of ``-distance to the closest synthetic record`` as a membership score (0.5: no
        information).
    exact_tpr, exact_fpr : float
        Shares of members and of non-members with an exact copy in the synthetic data.
    exact_precision : float
        Share of members among the records with an exact copy.
    advantage : float
        Largest ``TPR - FPR`` over distance thresholds.
    n_members, n_nonmembers : int
    """

    auc: float
    exact_tpr: float
    exact_fpr: float
    exact_precision: float
    advantage: float
    n_members: int
    n_nonmembers: int
    distances: np.ndarray = field(repr=False, compare=False)
    is_member: np.ndarray = field(repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "auc": self.auc,
            "exact_tpr": self.exact_tpr,
            "exact_fpr": self.exact_fpr,
            "exact_precision": self.exact_precision,
            "advantage": self.advantage,
        }


def distance_to_closest_record(
    original: Any,
    synthetic: Any,
    holdout: Any = None,
    columns: Sequence[str] | None = None,
    *,
    categorical: Sequence[str] | None = None,
    n_sample: int | None = 1000,
    rng: Any = None,
) -> DistanceToClosestRecord:
    """Distance from synthetic records to the closest original record, against a holdout.

    Parameters
    ----------
    original, synthetic : DataFrame
    holdout : DataFrame, optional
        Records from the same population that were not used for synthesis.
    columns : sequence of str, optional
        Columns in the distance (default: all columns shared by the frames).
    categorical : sequence of str, optional
        Numeric columns compared as categories (exact mismatch).
    n_sample : int or None
        Synthetic records to evaluate (a random sample; None for all).
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    DistanceToClosestRecord

    Notes
    -----
    Course 002, sections 3.16.3 (distance to closest record) and 3.16.4 (holdout benchmark).

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"a": list("xyz"), "b": list("uuv")})
    >>> distance_to_closest_record(o, o).share_exact_original
    1.0
    """
    owner = "distance_to_closest_record"
    orig, syn, hold, n_sample = _inputs(original, synthetic, holdout, n_sample, owner)
    gen = as_generator(rng)
    frames = {"original": orig, "synthetic": syn}
    if hold is not None:
        frames["holdout"] = hold
        n_ref = min(len(orig), len(hold))
        orig = orig.iloc[_sample(len(orig), n_ref, gen)]
        hold = hold.iloc[_sample(len(hold), n_ref, gen)]
    else:
        n_ref = len(orig)
    cols = check_columns(frames, columns, owner)
    syn = syn.iloc[_sample(len(syn), n_sample, gen)]
    fr = [orig, syn] + ([hold] if hold is not None else [])
    cat, num, p = _encode(fr, cols, categorical, owner)
    d_o = _nearest(cat[1], num[1], cat[0], num[0], p)
    if holdout is not None:
        d_h = _nearest(cat[1], num[1], cat[2], num[2], p)
        closer = float(np.mean((d_o < d_h) + 0.5 * (d_o == d_h)))
        ex_h, med_h = float(np.mean(d_h == 0)), float(np.median(d_h))
    else:
        d_h = None
        closer = ex_h = med_h = float("nan")
    return DistanceToClosestRecord(
        dcr_original=d_o,
        dcr_holdout=d_h,
        share_exact_original=float(np.mean(d_o == 0)),
        share_exact_holdout=ex_h,
        median_original=float(np.median(d_o)),
        median_holdout=med_h,
        share_closer_to_original=closer,
        n_reference=int(n_ref),
    )


def membership_inference(
    original: Any,
    synthetic: Any,
    holdout: Any,
    columns: Sequence[str] | None = None,
    *,
    categorical: Sequence[str] | None = None,
    n_sample: int | None = 1000,
    rng: Any = None,
) -> MembershipInference:
    """Distance-based membership-inference test with a holdout set.

    Parameters
    ----------
    original : DataFrame
        The records used to synthesize (members).
    synthetic : DataFrame
        One synthetic data set.
    holdout : DataFrame
        Records of the same population not used to synthesize (non-members).
    columns, categorical
        As :func:`distance_to_closest_record`.
    n_sample : int or None
        Members and non-members drawn for the attack (each at most the holdout's size).
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    MembershipInference

    Notes
    -----
    Course 002, section 3.16.2: the intruder guesses "member" when a record is close to a
    synthetic record; the holdout gives the benchmark (AUC 0.5, advantage near 0).

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"a": list("xyzw")})
    >>> h = pd.DataFrame({"a": list("pqrs")})
    >>> membership_inference(o, o, h).auc
    1.0
    """
    owner = "membership_inference"
    if holdout is None:
        raise InvalidArgumentError(f"{owner} needs a holdout: records of the same population not used to synthesize.")
    orig, syn, hold, n_sample = _inputs(original, synthetic, holdout, n_sample, owner)
    cols = check_columns({"original": orig, "synthetic": syn, "holdout": hold}, columns, owner)
    assert hold is not None  # given, checked above
    gen = as_generator(rng)
    n = min(len(orig), len(hold)) if n_sample is None else min(n_sample, len(orig), len(hold))
    mem = orig.iloc[_sample(len(orig), n, gen)]
    non = hold.iloc[_sample(len(hold), n, gen)]
    cat, num, p = _encode([syn, mem, non], cols, categorical, owner)
    d = np.concatenate([_nearest(cat[1], num[1], cat[0], num[0], p), _nearest(cat[2], num[2], cat[0], num[0], p)])
    member = np.r_[np.ones(n, dtype=bool), np.zeros(n, dtype=bool)]
    exact = d == 0
    tpr0, fpr0 = float(exact[member].mean()), float(exact[~member].mean())
    prec0 = float(member[exact].mean()) if exact.any() else float("nan")
    # advantage: max over thresholds of TPR - FPR (distances sorted once)
    thr = np.unique(d)
    dm, dn = np.sort(d[member]), np.sort(d[~member])
    tpr = np.searchsorted(dm, thr, side="right") / n
    fpr = np.searchsorted(dn, thr, side="right") / n
    adv = float(np.max(tpr - fpr)) if thr.size else 0.0
    return MembershipInference(
        auc=roc_auc(-d, member),
        exact_tpr=tpr0,
        exact_fpr=fpr0,
        exact_precision=prec0,
        advantage=max(adv, 0.0),
        n_members=n,
        n_nonmembers=n,
        distances=d,
        is_member=member,
    )

"""Identity disclosure by exact matching on key variables (partially synthetic data).

An intruder who knows the key values of some people looks for records with the same keys in the
released data.  For partially synthetic data, record ``i`` of the released data is the
(partly synthesized) record of person ``i``, so the data holder can tell true matches from false
ones.  For each targeted person ``i`` let ``c_i`` be the number of released records matching
their original keys and ``T_i = 1`` if their own released record is among them.  Then (course 002,
section 3.15.1; Reiter and Mitra 2009):

- expected match rate = ``sum_i T_i / c_i`` (the expected number of correct identifications
  when the intruder picks one of the ``c_i`` candidates at random);
- true match rate = ``#{i : c_i = 1, T_i = 1} / N`` with ``N`` the number of original records;
- false match rate = ``#{i : c_i = 1, T_i = 0} / #{i : c_i = 1}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..._frames import as_pandas
from ..._results import Result, json_ready
from ...exceptions import DataError, InvalidArgumentError
from ._data import check_columns, combined_key

__all__ = ["KeyMatches", "MatchRates", "key_matches", "match_rates"]


@dataclass(frozen=True)
class KeyMatches(Result):
    """Exact key matches of known records in released data.

    Attributes
    ----------
    n_matches : numpy.ndarray
        For each known record, the number of released records with the same keys.
    pairs : pandas.DataFrame
        One row per match: ``known_row`` and ``released_row`` (positions).
    """

    n_matches: np.ndarray
    pairs: pd.DataFrame = field(repr=False)

    def rows(self, i: int) -> np.ndarray:
        """Positions in the released data that match known record ``i``."""
        return self.pairs.loc[self.pairs["known_row"] == i, "released_row"].to_numpy()

    def to_frame(self) -> pd.DataFrame:
        """The matching pairs (a copy of :attr:`pairs`)."""
        return self.pairs.copy()

    def to_dict(self) -> dict[str, Any]:
        """Counts of known records by number of matches (the pairs: :meth:`to_frame`)."""
        n = np.asarray(self.n_matches)
        return {
            "n_known": int(n.size),
            "n_unmatched": int(np.sum(n == 0)),
            "n_unique_matches": int(np.sum(n == 1)),
            "n_pairs": int(len(self.pairs)),
        }


@dataclass(frozen=True)
class MatchRates(Result):
    """Identity disclosure measures of partially synthetic data.

    Attributes
    ----------
    expected_match_rate : float
        ``sum_i T_i / c_i`` over the targeted records (a count, not a share).
    true_match_rate : float
        Share of all original records that are unique, correct matches.
    false_match_rate : float
        Share of unique matches that are wrong (nan when there is no unique match).
    n_unique_matches : int
    n_targets : int
    n_original : int
    """

    expected_match_rate: float
    true_match_rate: float
    false_match_rate: float
    n_unique_matches: int
    n_targets: int
    n_original: int

    def to_dict(self) -> dict[str, Any]:
        return json_ready(
            {
                "expected_match_rate": self.expected_match_rate,
                "true_match_rate": self.true_match_rate,
                "false_match_rate": self.false_match_rate,
                "n_unique_matches": self.n_unique_matches,
                "n_targets": self.n_targets,
                "n_original": self.n_original,
            }
        )


def key_matches(known: Any, released: Any, keys: Sequence[str]) -> KeyMatches:
    """Find, for each known record, the released records with the same key values.

    Parameters
    ----------
    known : DataFrame
        What the intruder knows (at least the key columns).
    released : DataFrame
        The released data.
    keys : sequence of str

    Returns
    -------
    KeyMatches

    Examples
    --------
    Course 002, section 3.17: Adam (2009, Chorus) has one match, Betsy (2010, Band) three.

    >>> import pandas as pd
    >>> known = pd.DataFrame({"Year": [2009, 2010], "Elective": ["Chorus", "Band"]})
    >>> rel = pd.DataFrame({"Year": [2008, 2008, 2009, 2009, 2010, 2010, 2010],
    ...                     "Elective": ["Chorus", "Chorus", "Chorus", "Band", "Band", "Band", "Band"]})
    >>> key_matches(known, rel, ["Year", "Elective"]).n_matches.tolist()
    [1, 3]
    """
    k = as_pandas(known, "known")
    r = as_pandas(released, "released")
    keys = [keys] if isinstance(keys, str) else list(keys)
    if not keys:
        raise InvalidArgumentError("key_matches needs at least one key variable.")
    check_columns({"known": k, "released": r}, keys, "key_matches")
    (qk, qr), n_q = combined_key([k, r], keys)
    counts = np.bincount(qr, minlength=n_q)
    order = np.argsort(qr, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)])
    n_match = counts[qk]
    known_row = np.repeat(np.arange(len(k)), n_match)
    # released rows of each known record's key group, concatenated
    offsets = np.concatenate([[0], np.cumsum(n_match)])[:-1]
    within = np.arange(n_match.sum()) - np.repeat(offsets, n_match)
    released_row = order[np.repeat(starts[qk], n_match) + within]
    pairs = pd.DataFrame({"known_row": known_row, "released_row": released_row})
    return KeyMatches(n_matches=n_match.astype(np.int64), pairs=pairs)


def match_rates(
    original: Any,
    synthetic: Any,
    keys: Sequence[str],
    *,
    targets: Sequence[int] | None = None,
) -> MatchRates:
    """Expected, true and false match rates of partially synthetic data.

    Parameters
    ----------
    original : DataFrame
        The original records (the intruder knows their keys).
    synthetic : DataFrame
        The partially synthetic records, row ``i`` being person ``i``'s record.
    keys : sequence of str
        Key variables used for matching (some may have been synthesized).
    targets : sequence of int, optional
        Positions of the original records the intruder attacks (default: all).

    Returns
    -------
    MatchRates

    Notes
    -----
    Course 002, section 3.15.1 (module notes).  Identity disclosure is defined only when
    records correspond one to one, so the two frames must have the same number of rows.

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"k": ["a", "a", "b"], "x": [1, 2, 3]})
    >>> match_rates(o, o, ["k"]).expected_match_rate
    2.0
    """
    o = as_pandas(original, "original")
    s = as_pandas(synthetic, "synthetic")
    if len(o) != len(s):
        raise DataError(
            f"match_rates needs partially synthetic data with one record per original record; got {len(o)} "
            f"original and {len(s)} synthetic records. For fully synthetic data use attribute_disclosure."
        )
    keys = [keys] if isinstance(keys, str) else list(keys)
    if not keys:
        raise InvalidArgumentError("match_rates needs at least one key variable.")
    check_columns({"original": o, "synthetic": s}, keys, "match_rates")
    n = len(o)
    if targets is None:
        idx = np.arange(n)
    else:
        idx = np.asarray(targets, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise InvalidArgumentError(f"match_rates: targets must be positions in [0, {n - 1}]. Got {idx.tolist()[:5]}...")
    (qo, qs), n_q = combined_key([o, s], keys)
    c = np.bincount(qs, minlength=n_q)[qo[idx]]
    true_in = qs[idx] == qo[idx]
    with np.errstate(divide="ignore", invalid="ignore"):
        emr = float(np.sum(np.where(true_in & (c > 0), 1.0 / np.maximum(c, 1), 0.0)))
    unique = c == 1
    n_unique = int(unique.sum())
    tmr = float(np.sum(unique & true_in) / n)
    fmr = float(np.sum(unique & ~true_in) / n_unique) if n_unique else float("nan")
    return MatchRates(emr, tmr, fmr, n_unique, int(idx.size), n)

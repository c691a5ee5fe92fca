"""The cell key method for magnitude tables: noise scaled to each cell's largest contributions.

A magnitude table publishes sums of a value (turnover, income).  The cell key method perturbs each
published sum by noise looked up in a :class:`~cellsafe.mechanisms.MagnitudePTable` by the cell's key
(the sum of its records' keys modulo 1, as for counts), with a magnitude proportional to the cell's
largest contributions: the largest contributor is what an attacker could learn from a sum, so it sets
the noise.  The proportion comes from the "flex function", large for small contributions and falling
to a floor for large ones.  The same records give a cell the same key and the same contributions, so
a cell published in several tables gets the same perturbation in each.  The method and its parameters
are those of the R package cellKey (sdcTools, ``ck_params_nums`` with ``type = "top_contr"`` and
``ck_flexparams``), whose results it reproduces.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .._catalog import declared
from .._params import refuse_renamed
from .._random import RNGLike, as_seed_sequence, stream
from .._registry import register
from ..exceptions import DataError, InvalidArgumentError
from ..io import FLOAT_KEY_BITS, aggregate_contributions
from ..published import Publication, PublishedTable, check_publication_spec, publication_for, top_contributions
from ..table import CountTable, Hierarchy, encode_cells
from ._base import Mechanism
from ._primary import Rule, parse_rule
from .magnitude_ptable import MagnitudePTable

__all__ = ["CellKeyMagnitude", "flex_multiplier"]

_MASK = np.uint64(2**FLOAT_KEY_BITS - 1)
_SCALE = float(2**FLOAT_KEY_BITS)


def flex_multiplier(x: Any, fp: float, p_small: float, p_large: float, q: float) -> np.ndarray:
    """The flex function m(x): the noise magnitude as a share of a contribution x >= 0.

    ``p_small`` below the flex point ``fp``; above it
    ``m(x) = p_large (1 + (p_small x - p_large fp) / (p_large fp) * (2 fp / (fp + x))^q)``, which equals
    ``p_small`` at ``fp`` and falls towards ``p_large`` as x grows (cellKey's ``ck_flexparams``;
    ESSnet deliverable D4.2, part I).

    Examples
    --------
    >>> flex_multiplier([100.0, 1000.0, 1e9], fp=1000, p_small=0.25, p_large=0.05, q=3).round(4).tolist()
    [0.25, 0.25, 0.05]
    """
    x = np.asarray(x, dtype=np.float64)
    # p_large (1 + f1 f2) written without dividing by p_large, which may be 0
    flexed = p_large + (p_small * x - p_large * fp) / fp * (2.0 * fp / (fp + x)) ** q
    return np.where(x < fp, p_small, flexed)


@register("mechanism", "ckm-magnitude")
class CellKeyMagnitude(Mechanism):
    """The cell key method for magnitude tables, with the flex function (cellKey's ``top_contr``).

    Parameters
    ----------
    ptable : MagnitudePTable
        The perturbation table for magnitudes.
    publication : Publication, formula or list of crossings, optional
        The published cells, e.g. ``'nace*region'``.  By default the crossing of all variables.
    fp : float
        The flex point: contributions below it get noise ``p_small`` times their size.
    top_k : int, default 1
        How many of a cell's largest contributions make noise (1..6); each adds one noise component.
    p_small, p_large : float, default 0.25 and 0.05
        Noise as a share of a contribution at and below the flex point, and for very large ones.
    q : float, default 3
        How fast the share falls from ``p_small`` to ``p_large`` above the flex point (q >= 1).
    flex_weights : sequence of float, optional
        Weights of the ``top_k`` components above the flex point: 1 first, then non-increasing
        (default all 1).
    mu_c : float, default 0
        Extra noise, in units of each component's magnitude, for cells marked sensitive (``perturb``'s
        ``sensitive``: a mask, or primary rules such as ``'p%=15'``).
    same_key : bool, default True
        The first component uses the cell key itself (else a key derived from it, as the others).
    use_zero_rkeys : bool, default False
        Cell keys sum the keys of every record of the cell (True: the cell key of the frequency table,
        as :class:`CellKeyMethod` computes it from the same keys), or only of those with a non-zero value.

    Notes
    -----
    For a published cell with sum ``x_0``, largest contributions ``x_1 >= x_2 >= ...`` and cell key
    ``k_1`` (the sum of its records' keys modulo 1), the components j = 1..top_k are added in turn: the
    magnitude is ``d_j = x_j p_small`` if ``x_j < fp``, else ``x_j w_j m(x_j)`` (:func:`flex_multiplier`);
    where the running value ``x`` is smaller than ``d_j``, ``d_j = x``.  The noise value
    ``v_j`` is looked up by key ``k_j`` in the row ``|x| / d_j`` of the ptable (interpolated between
    rows, the last row beyond it), and ``x`` changes by ``sign(v_j) |d_j| (mu + |v_j|)``, never below
    0.  Keys of later components are the previous key times 10 modulo 1, computed exactly on the
    53-bit fixed-point key sum: cellKey moves the first decimal digit of the key's printed form to the
    end instead, which differs only in the last digits (rarely a cell then draws the neighbouring
    noise value: 1 of 8,142 cells at 1e5 records, none of 11,034 at 1e6; benchmarks/bench_cellkey_magnitude.py).  As cellKey 1.0.2 computes it,
    the flex weight ``w_j`` weights components above the flex point only and ``mu_c`` applies to every component
    of a sensitive cell; a cell with key 0 (no contributing record) or sum 0 is released unchanged,
    and a cell an earlier component took to 0 stays 0 (where cellKey divides 0 by 0).  Each contributor is a holding (its records
    in a cell are summed first); with no contributor column each record is one.  Separate ptables for
    small cells or for even/odd numbers of contributors are not supported.  Sources: Meindl, R package
    cellKey 1.0.2 (``ck_params_nums``, ``ck_flexparams``); Giessing and Tent (2019), UNECE SDC work
    session; Enderle, R package ptable (``create_num_ptable``).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sector": ["a", "a", "b", "b"], "turnover": [900.0, 100.0, 50.0, 40.0],
    ...                    "rkey": [0.12, 0.4, 0.7, 0.05]})
    >>> ckm = CellKeyMagnitude(MagnitudePTable.generate(D=10, V=3), "sector", fp=500, top_k=2, flex_weights=(1, 0.5))
    >>> res = ckm.perturb(df, variables=["sector"], value="turnover", record_key="rkey")
    >>> res.to_frame().columns.tolist(), res.original.tolist()
    (['sector', 'turnover'], [1090.0, 1000.0, 90.0])
    >>> bool(np.all(res.released >= 0))
    True
    """

    _purpose = 0x434D  # "CM"
    _params = declared("mechanism", "ckm-magnitude")
    _renamed = {"epsilon": "flex_weights"}

    def __init__(
        self,
        ptable: MagnitudePTable,
        publication: Publication | str | Sequence[Sequence[str]] | None = None,
        *,
        fp: float,
        top_k: int = 1,
        p_small: float = 0.25,
        p_large: float = 0.05,
        q: float = 3.0,
        flex_weights: Sequence[float] | None = None,
        mu_c: float = 0.0,
        same_key: bool = True,
        use_zero_rkeys: bool = False,
        **renamed: Any,
    ) -> None:
        refuse_renamed("CellKeyMagnitude", renamed, self._renamed)
        self.ptable = ptable
        self.publication = publication
        self.fp = fp
        self.top_k = top_k
        self.p_small = p_small
        self.p_large = p_large
        self.q = q
        self.flex_weights = flex_weights
        self.mu_c = mu_c
        self.same_key = same_key
        self.use_zero_rkeys = use_zero_rkeys
        if not isinstance(ptable, MagnitudePTable):
            raise InvalidArgumentError(
                f"The 'ptable' parameter of CellKeyMagnitude must be a MagnitudePTable. Got {type(ptable).__name__}."
            )
        check_publication_spec(publication, "CellKeyMagnitude", none_ok=True)
        self._check_params()
        if p_large > p_small:
            raise InvalidArgumentError(
                f"The 'p_large' parameter of CellKeyMagnitude must be at most p_small={p_small:g}. Got {p_large:g} instead."
            )
        _ = self.flex_weights_  # validated here, once

    @classmethod
    def from_spec(cls, **params: Any) -> "CellKeyMagnitude":
        """Build from flat parameters: the ptable's (``D``, ``V``, ``step``) and the method's."""
        own = {k: params.pop(k) for k in list(params) if k in cls.param_declarations()}
        if "D" not in params or "V" not in params:
            raise InvalidArgumentError("the magnitude cell key method's spec needs D and V (e.g. 'ckm-magnitude:D=10,V=3,fp=1000').")
        return cls(MagnitudePTable.generate(**params), **own)

    @property
    def flex_weights_(self) -> np.ndarray:
        """The weights of the ``top_k`` components in use."""
        if self.flex_weights is None:
            return np.ones(self.top_k)
        try:
            e = np.asarray(self.flex_weights, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            e = np.array([np.nan])
        if (e.shape != (self.top_k,) or not np.all(np.isfinite(e)) or e[0] != 1 or np.any(e < 0) or np.any(e > 1)
                or np.any(np.diff(e) > 0)):
            raise InvalidArgumentError(
                f"The 'flex_weights' parameter of CellKeyMagnitude must be {self.top_k} non-increasing weight(s) in [0, 1], "
                f"the first 1 (one per top_k component). Got {self.flex_weights!r} instead."
            )
        return e

    # ------------------------------------------------------------------ the perturbation kernel
    def component_keys(self, cell_keys: np.ndarray) -> np.ndarray:
        """Keys of the ``top_k`` components from fixed-point cell keys (uint64 modulo 2^53), as floats."""
        fixed = np.asarray(cell_keys, dtype=np.uint64) & _MASK
        shift = 0 if self.same_key else 1
        out = np.empty((fixed.shape[0], self.top_k))
        for j in range(self.top_k):
            # uint64 products wrap modulo 2^64, a multiple of 2^53: the key times 10^n modulo 1, exactly
            out[:, j] = ((fixed * np.uint64(10 ** (j + shift))) & _MASK).astype(np.float64) / _SCALE
        return out

    def perturbed(
        self, values: np.ndarray, top: np.ndarray, keys: np.ndarray, sensitive: np.ndarray | None = None
    ) -> np.ndarray:
        """Released sums from the sums, the ``top_k`` largest contributions and the component keys.

        Vectorized over cells; the loop runs over the ``top_k`` components, which are added in turn.
        """
        x = np.asarray(values, dtype=np.float64).copy()
        top = np.asarray(top, dtype=np.float64)
        eps = self.flex_weights_
        mu = np.zeros(x.shape[0]) if sensitive is None else np.where(sensitive, float(self.mu_c), 0.0)
        active = (x != 0) & (keys[:, 0] != 0)
        for j in range(self.top_k):
            xj = np.abs(top[:, j])
            use = active & (xj > 0) & (x != 0)
            share = np.where(xj < self.fp, self.p_small,
                             flex_multiplier(xj, self.fp, self.p_small, self.p_large, self.q) * eps[j])
            d = xj * share
            d = np.where(np.abs(x) < d, np.abs(x), d)
            use &= d > 0
            a = np.divide(np.abs(x), d, out=np.ones_like(x), where=use)
            v = np.where(keys[:, j] == 0, 0.0, self.ptable.noise(a, keys[:, j]))
            sign_v = np.where(v >= 0, 1.0, -1.0)
            sign_x = np.where(x >= 0, 1.0, -1.0)
            step = sign_x * d * sign_v * (mu + np.abs(v))
            # a negative noise never takes a positive sum below 0 (nor a negative one above 0)
            step = np.where((sign_v < 0) & (sign_x > 0), np.maximum(step, -x), step)
            step = np.where((sign_v < 0) & (sign_x < 0), np.minimum(step, -x), step)
            x = x + np.where(use, step, 0.0)
        return x

    # ------------------------------------------------------------------ releases
    def _publication(self, table: CountTable, hierarchies: Mapping[str, Any] | None = None) -> Publication:
        spec = self.publication if self.publication is not None else [tuple(table.names)]
        if hierarchies and not isinstance(spec, Publication):
            return Publication.from_formula(table, spec, zeros=False, hierarchies=hierarchies)
        return publication_for(table, spec, zeros=False)

    def _release(
        self,
        pub: Publication,
        row: np.ndarray,
        contributor: np.ndarray,
        values: np.ndarray,
        key_sums: np.ndarray,
        measure: str,
        sensitive: Any = None,
    ) -> PublishedTable:
        """The release from per (inner cell row, contributor) values and key sums (fixed point)."""
        rules = _rules(sensitive)
        n_top = max([self.top_k, 2] + [r.n for r in rules if r.kind == "nk"]) if rules else self.top_k
        original = pub.aggregate(np.bincount(row, weights=values, minlength=pub.n_inner))
        top, n_contributors = top_contributions(pub.X, row, contributor, values, n=n_top)
        if rules:
            # as for suppression: the frequency rule counts contributors, the dominance rules use the largest ones
            sensitive = np.logical_or.reduce([r.sensitive(n_contributors, original, top) for r in rules])
        elif sensitive is not None:
            sensitive = np.asarray(sensitive, dtype=bool)
            if sensitive.shape != original.shape:
                raise DataError(f"sensitive must hold one flag per published cell ({original.shape[0]}). Got shape {sensitive.shape}.")
        ckeys = _published_key_sums(pub, row, key_sums)
        released = self.perturbed(original, top[:, : self.top_k], self.component_keys(ckeys), sensitive)
        return PublishedTable(
            publication=pub,
            original=original,
            released=released,
            method="ckm-magnitude",
            mechanism=repr(self),
            cell_keys=ckeys.astype(np.float64) / _SCALE,
            measure=measure,
        )

    def _sample(self, table: CountTable, m: int, rng: RNGLike, progress: bool) -> list[PublishedTable]:
        """``m`` releases of a table of sums by inner cell, each inner cell one contributor with a fresh key.

        ``table``'s counts are read as the values summed in each inner cell (fractional sums allowed);
        each inner cell's key is drawn anew per release (the sum of its records' uniform keys modulo
        1 is itself uniform).  For records, use :meth:`perturb`.
        """
        root = as_seed_sequence(rng)
        pub = self._publication(table)
        row = np.searchsorted(pub.inner_index, table.index)
        values = np.asarray(table.counts, dtype=np.float64)
        out = []
        for i in range(m):
            keys = _fixed(stream(root, self._purpose, i, 0).random(table.nnz))
            if not self.use_zero_rkeys:
                keys[values == 0] = 0
            out.append(self._release(pub, row, np.arange(table.nnz), values, keys, "value"))
        return out

    def perturb(
        self,
        data: Any,
        *,
        variables: Sequence[str] | None = None,
        value: str,
        contributor: str | None = None,
        record_key: str | None = None,
        hierarchies: Mapping[str, Hierarchy | Sequence[Hierarchy]] | None = None,
        sensitive: Any = None,
        rng: RNGLike = None,
    ) -> PublishedTable:
        """Perturb the published sums of ``value`` over records with record keys.

        Parameters
        ----------
        data : CSV/Parquet path, or a DataFrame (pandas, polars, pyarrow) of records
            One row per record; read by DuckDB.
        variables : sequence of str, optional
            The crossed variables (default: those of the publication, when it is a Publication).
        value : str
            The numeric column summed (non-negative, no missing values).
        contributor : str, optional
            Contributor id (holdings): its records in a cell form one contribution.
        record_key : str, optional
            Column of uniform record keys in [0, 1).  Without it, one key per contribution is drawn
            from ``rng`` (the same ``rng`` gives the same keys for the same records).
        hierarchies : dict, optional
            Hierarchies of the variables, as for :meth:`Publication.from_formula`.
        sensitive : array of bool, or primary rule(s), optional
            Published cells that get the extra noise ``mu_c``: a mask, or rules as for
            :class:`CellSuppression` (``'p%=15'``, ``'nk(1,85)'``, ``'freq<=3'`` on contributors); a cell
            is sensitive when any rule flags it.
        rng : int, SeedSequence, Generator, optional

        Returns
        -------
        PublishedTable
            ``original`` and ``released`` hold the sums; ``measure`` is ``value``.
        """
        if variables is None:
            if not isinstance(self.publication, Publication):
                raise InvalidArgumentError("pass variables=[...] (the columns to cross) with records.")
            variables = list(self.publication.names)
        if isinstance(variables, str) or not len(variables):
            raise InvalidArgumentError(f"variables must be a non-empty list of column names. Got {variables!r}.")
        if not isinstance(value, str):
            raise InvalidArgumentError(f"value must name the numeric column summed. Got {value!r}.")
        contrib = aggregate_contributions(data, list(variables), value, contributor, record_key=record_key)
        vs, flat = encode_cells(contrib.cells, list(variables))
        order = np.argsort(flat, kind="stable")
        flat_sorted = flat[order]
        start = np.flatnonzero(np.r_[True, flat_sorted[1:] != flat_sorted[:-1]])
        table = CountTable(vs, flat_sorted[start], np.add.reduceat(contrib.counts[order], start))
        pub = self._publication(table, hierarchies)
        row = np.searchsorted(pub.inner_index, flat)
        if np.any(row >= pub.n_inner) or np.any(pub.inner_index[np.minimum(row, pub.n_inner - 1)] != flat):
            raise DataError(f"some records of {list(variables)} fall outside the publication's inner cells.")
        if record_key is None:
            keys: Any = _fixed(np.asarray(_drawn_keys(rng).random(int(flat.shape[0]))))
            if not self.use_zero_rkeys:
                keys[contrib.values == 0] = 0
        else:
            keys = contrib.key_sums if self.use_zero_rkeys else contrib.key_sums_nonzero
        return self._release(pub, row, contrib.contributor, contrib.values, keys, value, sensitive)


def _rules(sensitive: Any) -> list[Rule]:
    """``sensitive`` as a list of primary rules, or [] when it is a mask (or None)."""
    if isinstance(sensitive, (str, Rule)):
        return [parse_rule(sensitive)]
    if isinstance(sensitive, (list, tuple)) and sensitive and all(isinstance(r, (str, Rule)) for r in sensitive):
        return [parse_rule(r) for r in sensitive]
    return []


def _drawn_keys(rng: RNGLike) -> np.random.Generator:
    """The generator of drawn record keys: one stream under ``rng``, keyed by this method's purpose."""
    return stream(as_seed_sequence(rng), CellKeyMagnitude._purpose, 0, 0)


def _fixed(u: np.ndarray) -> np.ndarray:
    """Uniform keys in [0, 1) as 53-bit fixed-point integers."""
    return np.floor(np.asarray(u, dtype=np.float64) * _SCALE).astype(np.uint64)


def _published_key_sums(pub: Publication, row: np.ndarray, key_sums: np.ndarray) -> np.ndarray:
    """Key sums modulo 2^53 of every published cell, from key sums per (inner cell row, contributor).

    uint64 sums wrap modulo 2^64, a multiple of 2^53, so the order of summation never changes a key.
    """
    inner = np.zeros(pub.n_inner, dtype=np.uint64)
    if row.size:
        order = np.argsort(row, kind="stable")
        r = row[order]
        start = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
        inner[r[start]] = np.add.reduceat(np.asarray(key_sums, dtype=np.uint64)[order], start)
    Xc = pub.X.tocsc()
    vals = np.r_[inner[Xc.indices], np.zeros(1, dtype=np.uint64)]
    sums = np.add.reduceat(vals, Xc.indptr[:-1]) if Xc.shape[1] else np.zeros(0, dtype=np.uint64)
    sums[np.diff(Xc.indptr) == 0] = 0
    return sums & _MASK

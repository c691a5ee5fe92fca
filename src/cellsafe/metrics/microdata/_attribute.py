"""Identity (replicated uniques) and attribute disclosure from key variables to a target.

An intruder knows the keys ``q`` of people in the original data and looks them up in the
synthetic data.  With ``d_q``, ``d_tq`` the original counts of key combination ``q`` (and target
level ``t``), ``s_q``, ``s_tq`` the synthetic ones, ``pd_tq = d_tq / d_q``, ``ps_tq = s_tq / s_q``
and ``N_d``, ``N_s`` the numbers of records, each measure is a share of records:

- ``UiO`` = sum(d_q : d_q = 1) / N_d (unique in original); ``UiS`` the same in the synthetic
  data over N_s; ``UiOiS`` = sum(d_q : d_q = 1, s_q > 0) / N_d;
- ``repU`` = sum(d_q : d_q = 1, s_q = 1) / N_d (replicated uniques);
- ``DiO`` = sum(d_tq : pd_tq = 1) / N_d (disclosive in original), ``DiS`` = sum(s_tq : ps_tq = 1)
  / N_s (disclosive in synthetic, taken as if real);
- ``iS`` = sum(d_q : s_q > 0) / N_d (key combination found in the synthetic data);
- ``DiSCO`` = sum(d_tq : ps_tq = 1) / N_d (disclosive in synthetic, correct in original);
- ``DiSDiO`` = sum(d_tq : ps_tq = 1, pd_tq = 1) / N_d;
- ``TCAP`` = sum(d_tq : ps_tq = 1) / sum(d_q : q disclosive in synthetic): among original
  records whose synthetic key group has a single target level, the share whose target matches;
- ``baseCAPd`` = sum_t (d_t / N_d)^2, ``CAPd`` = sum pd_tq d_tq / N_d, ``CAPs`` = sum ps_tq
  s_tq / N_s, ``DCAP`` = sum ps_tq d_tq / N_d;
- ``DiSCO_chance``: the expected DiSCO had the synthetic targets been drawn independently of
  the keys from their synthetic marginal ``p_t``: ``sum_i [s_q > 0] p_{t_i}^{s_q} / N_d``.

Definitions of Raab, Nowok and Dibben ("Practical privacy metrics for synthetic data", the
synthpop disclosure vignette, Appendices 1 and 2), methods.md section 8 for TCAP, course 002
section 3.16.1.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from ..._results import Result, json_ready
from ...exceptions import InvalidArgumentError
from ._data import as_frame_pair, check_columns, combined_key, joint_codes

__all__ = ["AttributeDisclosure", "attribute_disclosure"]


@dataclass(frozen=True)
class AttributeDisclosure(Result):
    """Identity and attribute disclosure shares (fractions in [0, 1]) for keys and one target.

    See the module notes for each definition.
    """

    keys: tuple[str, ...]
    target: str
    UiO: float
    UiS: float
    UiOiS: float
    repU: float
    DiO: float
    DiS: float
    iS: float
    DiSCO: float
    DiSDiO: float
    TCAP: float
    baseCAPd: float
    CAPd: float
    CAPs: float
    DCAP: float
    DiSCO_chance: float
    n_original: int
    n_synthetic: int

    def to_dict(self) -> dict[str, Any]:
        """The measures as a dict (for JSON)."""
        d = asdict(self)
        d["keys"] = list(self.keys)
        return json_ready(d)


def attribute_disclosure(
    original: Any,
    synthetic: Any,
    keys: Sequence[str],
    target: str,
) -> AttributeDisclosure:
    """Replicated uniques, DiSCO, TCAP and the CAP family for keys and a target.

    Parameters
    ----------
    original, synthetic : DataFrame
        The original records and one synthetic data set.  Keys and target are compared as
        categories (exact values); group numeric columns first if they are continuous.
    keys : sequence of str
        Variables the intruder knows.
    target : str
        The variable the intruder wants to learn (not among the keys).

    Returns
    -------
    AttributeDisclosure

    Notes
    -----
    Module notes; identical synthetic data give ``DiSCO = DiO`` and ``repU = UiO``.

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"age": [1, 1, 2, 3], "sex": list("FFMM"), "ill": list("yyny")})
    >>> r = attribute_disclosure(o, o, ["age", "sex"], "ill")
    >>> r.DiSCO == r.DiO == 1.0, r.repU == r.UiO == 0.5
    (True, True)
    """
    orig, syn = as_frame_pair(original, synthetic, "attribute_disclosure")
    if isinstance(keys, str):
        keys = [keys]
    keys = list(keys)
    if not keys:
        raise InvalidArgumentError("attribute_disclosure needs at least one key variable.")
    if target in keys:
        raise InvalidArgumentError(f"attribute_disclosure: the target {target!r} cannot also be a key.")
    check_columns({"original": orig, "synthetic": syn}, keys + [target], "attribute_disclosure")

    (qo, qs), n_q = combined_key([orig, syn], keys)
    (to, ts), t_uniq = joint_codes([orig[target], syn[target]])
    n_t = len(t_uniq)
    n_d, n_s = len(orig), len(syn)

    d_q = np.bincount(qo, minlength=n_q)
    s_q = np.bincount(qs, minlength=n_q)
    # (q, t) pairs present in either data set, densely coded
    pair_o = qo * n_t + to
    pair_s = qs * n_t + ts
    uniq, inv = np.unique(np.concatenate([pair_o, pair_s]), return_inverse=True)
    inv = inv.reshape(-1)
    po_idx, ps_idx = inv[:n_d], inv[n_d:]
    d_tq = np.bincount(po_idx, minlength=uniq.size)
    s_tq = np.bincount(ps_idx, minlength=uniq.size)
    pair_q = uniq // n_t
    # number of target levels seen per key combination in the synthetic data
    levels_s = np.bincount(pair_q[s_tq > 0], minlength=n_q)

    # per original record
    dq_i, sq_i = d_q[qo], s_q[qo]
    dtq_i, stq_i = d_tq[po_idx], s_tq[po_idx]
    in_syn = sq_i > 0
    dis_syn_correct = in_syn & (stq_i == sq_i)
    dis_orig = dtq_i == dq_i
    dis_syn_group = levels_s[qo] == 1

    # per synthetic record
    sq_j, stq_j = s_q[qs], s_tq[ps_idx]

    p_t_syn = np.bincount(ts, minlength=n_t) / n_s
    p_t_orig = np.bincount(to, minlength=n_t) / n_d
    chance = np.where(in_syn, p_t_syn[to] ** np.maximum(sq_i, 1), 0.0)

    n_dis_group = int(dis_syn_group.sum())
    return AttributeDisclosure(
        keys=tuple(keys),
        target=target,
        UiO=float(np.mean(dq_i == 1)),
        UiS=float(np.mean(sq_j == 1)),
        UiOiS=float(np.mean((dq_i == 1) & in_syn)),
        repU=float(np.mean((dq_i == 1) & (sq_i == 1))),
        DiO=float(np.mean(dis_orig)),
        DiS=float(np.mean(stq_j == sq_j)),
        iS=float(np.mean(in_syn)),
        DiSCO=float(np.mean(dis_syn_correct)),
        DiSDiO=float(np.mean(dis_syn_correct & dis_orig)),
        TCAP=float(dis_syn_correct.sum() / n_dis_group) if n_dis_group else float("nan"),
        baseCAPd=float(np.sum(p_t_orig**2)),
        CAPd=float(np.mean(dtq_i / dq_i)),
        CAPs=float(np.mean(stq_j / sq_j)),
        DCAP=float(np.mean(np.where(in_syn, stq_i / np.maximum(sq_i, 1), 0.0))),
        DiSCO_chance=float(np.mean(chance)),
        n_original=n_d,
        n_synthetic=n_s,
    )

"""The frontier's axes for every kind of mechanism: what each metric is, and where it is not defined.

A frontier point is one mechanism at one setting.  Its risk and utility come from one of:

- the cell-wise metrics (``tauN(k)`` risk; ``mse`` and ``hellinger`` utility), computed from the
  mechanism's transition probabilities on the table's cell-size distribution: defined for cell-wise
  mechanisms only;
- the privacy loss (``epsilon``, ``rho`` risk): the loss of one release under the frontier's
  neighbour relation (:meth:`privacy_loss`), defined for mechanisms with a differential-privacy
  guarantee (geometric and discrete Gaussian noise, the DP synthesizers, MST and AIM);
- ``marginal_tv(k)`` utility: the expected average total-variation error of the released k-way
  marginals, :func:`cellsafe.apriori.marginal_error` on the table: defined for the marginal
  synthesizers (MST, AIM) only.

Where a metric is not defined for a mechanism the point keeps NaN and says why in ``undefined``;
no number is made up to put a mechanism on an axis it does not have.
"""

from __future__ import annotations

import math
from typing import Any

from .. import apriori
from ..exceptions import InvalidArgumentError
from ._targets import Metric

__all__ = ["PRIVACY_RISKS", "is_marginal", "privacy_columns", "marginal_tv", "undefined_for", "why_undefined"]

#: Risks that are a privacy loss rather than a cell-wise metric.
PRIVACY_RISKS = ("epsilon", "rho")


def is_marginal(mech: Any) -> bool:
    from ..mechanisms import MarginalSynthesizer

    return isinstance(mech, MarginalSynthesizer)


def privacy_columns(mech: Any, relation: str, delta: float) -> dict[str, float]:
    """``loss_epsilon``, ``loss_delta``, ``loss_rho`` of one release under ``relation`` (NaN without a DP guarantee).

    A zCDP mechanism with its own delta (MST, AIM) states (epsilon, delta) at it; one without (the
    discrete Gaussian) at the frontier's ``delta``; pure DP has delta 0.
    """
    if not hasattr(mech, "privacy_loss"):
        return {"loss_epsilon": math.nan, "loss_delta": math.nan, "loss_rho": math.nan}
    own = getattr(mech, "delta", None)
    loss = mech.privacy_loss(relation, delta=float(own) if own is not None else delta)
    return {"loss_epsilon": float(loss.epsilon), "loss_delta": float(loss.delta),
            "loss_rho": math.nan if loss.rho is None else float(loss.rho)}


def marginal_tv(table: Any, mech: Any, k: int) -> float:
    """The a priori expected average TV error of the released k-way marginals (:func:`apriori.marginal_error`)."""
    return apriori.marginal_error(table, mech, degrees=(k,)).tv(k)


def _name(metric: Metric | str) -> str:
    if isinstance(metric, str):
        return metric
    return "mse" if metric.kind == "mse_utility" else metric.name


def why_undefined(risk: Metric | str, utility: Metric, mech: Any, name: str) -> tuple[str, str]:
    """(why the risk, why the utility) have no value for ``mech``: '' where they have one.

    A marginal synthesizer with a cell-wise risk and utility gets one sentence for both.
    """
    r, u = undefined_for(risk, mech, name), undefined_for(utility, mech, name)
    cellwise = " is a cell-wise metric"
    if cellwise in r and cellwise in u:
        return r.replace(_name(risk) + cellwise, f"{_name(risk)} and {_name(utility)} are cell-wise metrics"), ""
    return r, u


def undefined_for(metric: Metric | str, mech: Any, name: str) -> str:
    """Why ``metric`` has no value for ``mech`` (a mechanism of kind ``name``), '' when it has one."""
    what = _name(metric)
    marginal = is_marginal(mech)
    if what in PRIVACY_RISKS:
        if not hasattr(mech, "privacy_loss"):
            return f"{what} is a differential-privacy loss; {name} makes no differential-privacy statement"
        return ""
    if isinstance(metric, Metric) and metric.on_marginals:
        if not marginal:
            return (f"{what} is the a priori error of a marginal synthesizer's released marginals (MST, AIM); "
                    f"cellsafe has no a priori marginal error for the cell-wise {name}")
        return ""
    if marginal:
        return (f"{what} is a cell-wise metric (from each cell's transition probabilities); {name} draws records "
                "from a model fitted to noisy marginals and has none: compare it by risk 'epsilon' or 'rho' and "
                "utility 'marginal_tv(k)'")
    return ""


def check_risk(risk: str) -> str | Metric:
    """A privacy risk ('epsilon', 'rho') as text, or a cell-wise 'tauN(k)' as a Metric."""
    from ._targets import parse_metric

    text = str(risk).strip().lower()
    if text in PRIVACY_RISKS:
        return text
    m = parse_metric(text)
    if m.kind != "tau":
        raise InvalidArgumentError(
            f"the risk metric must be 'tauN(k)' (for example 'tau4(1)'), 'epsilon' or 'rho'. Got {risk!r}.")
    return m


def check_utility(utility: str) -> Metric:
    """'mse', 'hellinger' or 'marginal_tv(k)'."""
    from ._targets import parse_metric

    text = str(utility).strip().lower().replace(" ", "")
    m = None
    if text in ("mse", "mse_utility", "hellinger", "hellinger_utility") or text.startswith("marginal_tv("):
        m = parse_metric(text)
    if m is None or m.kind not in ("mse_utility", "hellinger", "marginal_tv"):
        raise InvalidArgumentError(f"unknown utility {utility!r}; use 'mse', 'hellinger' or 'marginal_tv(k)' (k in 1..3).")
    return m

"""Build a count distribution from its name (used by the command line)."""

from __future__ import annotations

from typing import Any

from ..exceptions import InvalidArgumentError
from ._base import CountDistribution

__all__ = ["DISTRIBUTION_NAMES", "make_distribution"]

#: Names accepted by :func:`make_distribution` (case-insensitive).
DISTRIBUTION_NAMES = ("poisson", "nbi", "pig", "gaf")


def make_distribution(name: str, sigma: Any = None, nu: Any = None) -> CountDistribution:
    """The count distribution called ``name`` with shape parameters ``sigma`` and ``nu``.

    Parameters
    ----------
    name : {'poisson', 'nbi', 'pig', 'gaf'}
        Family name, case-insensitive.
    sigma : float, optional
        Dispersion in (0, inf); required for 'nbi', 'pig' and 'gaf', must be omitted for 'poisson'.
    nu : float, optional
        Variance-mean exponent of 'gaf' (default 0: variance about ``sigma^2``, constant in
        ``mu``); must be omitted for the other families.

    Returns
    -------
    CountDistribution

    Raises
    ------
    InvalidArgumentError
        Unknown name, missing ``sigma``, or a parameter the family does not take.

    Examples
    --------
    >>> from cellsafe.distributions import make_distribution
    >>> make_distribution("NBI", sigma=0.5)
    NBI(sigma=0.5)
    >>> make_distribution("gaf", sigma=1.0)
    GAF(sigma=1.0, nu=0.0)
    """
    from .gaf import GAF
    from .nbi import NBI
    from .pig import PIG
    from .poisson import Poisson

    key = name.lower() if isinstance(name, str) else None
    if key not in DISTRIBUTION_NAMES:
        raise InvalidArgumentError(
            f"The 'name' parameter of make_distribution must be one of "
            f"{', '.join(map(repr, DISTRIBUTION_NAMES))}. Got {name!r} instead."
        )
    if key == "poisson":
        if sigma is not None or nu is not None:
            raise InvalidArgumentError(
                "The Poisson distribution takes no 'sigma' or 'nu' parameter; "
                "omit them or choose 'nbi', 'pig' or 'gaf'."
            )
        return Poisson()
    if sigma is None:
        raise InvalidArgumentError(
            f"The {key!r} distribution needs a 'sigma' parameter (a float in (0, inf)); none was given."
        )
    if key == "gaf":
        return GAF(sigma=sigma, nu=0.0 if nu is None else nu)
    if nu is not None:
        raise InvalidArgumentError(f"The {key!r} distribution takes no 'nu' parameter (only 'gaf' does); omit it.")
    return NBI(sigma=sigma) if key == "nbi" else PIG(sigma=sigma)

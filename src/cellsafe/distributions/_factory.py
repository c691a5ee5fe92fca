"""Build a count distribution from its registered name (the command line, specs, grids)."""

from __future__ import annotations

from typing import Any

from .._params import REQUIRED
from .._registry import lookup, names
from ..exceptions import InvalidArgumentError
from ._base import CountDistribution

__all__ = ["distribution_names", "make_distribution"]


def distribution_names() -> tuple[str, ...]:
    """The registered family names, e.g. ``('poisson', 'nbi', 'pig', 'gaf')``."""
    return names("distribution")


def make_distribution(name: str, **params: Any) -> CountDistribution:
    """The count distribution called ``name`` with the given shape parameters.

    Parameters
    ----------
    name : str
        A registered family name, case-insensitive: 'poisson', 'nbi', 'pig', 'gaf'.
    **params
        The family's parameters (``sigma`` for nbi, pig and gaf; ``nu`` for gaf, default 0).
        A parameter given as None counts as not given.

    Returns
    -------
    CountDistribution

    Raises
    ------
    InvalidArgumentError
        Unknown name, a required parameter missing, or a parameter the family does not take.

    Examples
    --------
    >>> from cellsafe.distributions import make_distribution
    >>> make_distribution("NBI", sigma=0.5)
    NBI(sigma=0.5)
    >>> make_distribution("gaf", sigma=1.0)
    GAF(sigma=1.0, nu=0.0)
    """
    cls: Any = lookup("distribution", name, "make_distribution")
    key = cls.registered_name
    decl = cls.param_declarations()
    given = {k: v for k, v in params.items() if v is not None}
    extra = [k for k in given if k not in decl]
    if extra:
        takes = f"its parameters: {', '.join(map(repr, decl))}" if decl else "it has no parameters"
        raise InvalidArgumentError(
            f"The {key!r} distribution takes no {extra[0]!r} parameter ({takes}); omit it."
        )
    missing = [p for p in decl.values() if p.name not in given and p.default is REQUIRED]
    if missing:
        p = missing[0]
        raise InvalidArgumentError(
            f"The {key!r} distribution needs a {p.name!r} parameter ({p.doc}); none was given."
        )
    return cls(**given)

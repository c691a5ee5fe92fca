"""Mechanisms from short specs, and specs from mechanisms.

A spec names a count family or a registered mechanism, then its parameters:
``'nbi:sigma=1,alpha=0.01'`` (saturated synthesis with NBI noise), ``'ckm:D=5,V=3'`` (the cell
key method with a generated ptable), ``'geometric:epsilon=1'``.  The same spec is accepted by every
command that takes a mechanism, and :func:`mechanism_spec` writes it back, so a point of a
frontier or a line of a report can name its mechanism in a form the user can paste.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from .._params import REQUIRED
from .._registry import registered
from ..exceptions import InvalidArgumentError
from ._base import Mechanism

__all__ = ["make_mechanism", "mechanism_spec", "mechanism_names", "parse_spec"]

# Parameters of a saturated synthesizer that are not its distribution's.
_SATURATED_OWN = ("alpha", "zeros_to_ones")


def mechanism_names() -> tuple[str, ...]:
    """Every name a spec may start with: the count families, then the registered mechanisms."""
    return tuple(registered("distribution")) + tuple(n for n in registered("mechanism") if n != "saturated")


def _value(text: str, spec: str) -> Any:
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null", ""):
        return None
    try:
        return int(t)
    except ValueError:
        pass
    try:
        x = float(t)
    except ValueError:
        return t
    if not math.isfinite(x):
        raise InvalidArgumentError(f"mechanism spec {spec!r}: {text!r} is not a finite number.")
    return x


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``'nbi:sigma=1,alpha=0.01'`` -> ``('nbi', {'sigma': 1, 'alpha': 0.01})``.

    Examples
    --------
    >>> parse_spec("ckm:D=5,V=3")
    ('ckm', {'D': 5, 'V': 3})
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidArgumentError(f"a mechanism spec must be a non-empty string like 'nbi:sigma=1'. Got {spec!r}.")
    name, _, rest = spec.partition(":")
    params: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, text = part.partition("=")
        if not eq or not key.strip():
            raise InvalidArgumentError(
                f"mechanism spec {spec!r}: {part!r} is not 'name=value'; write e.g. 'nbi:sigma=1,alpha=0.01'."
            )
        if key.strip() in params:
            raise InvalidArgumentError(f"mechanism spec {spec!r} gives {key.strip()!r} twice.")
        params[key.strip()] = _value(text, spec)
    return name.strip().lower(), params


def make_mechanism(spec: str | Mapping[str, Any] | Mechanism) -> Mechanism:
    """The mechanism a spec describes.

    Parameters
    ----------
    spec : str, mapping or Mechanism
        ``'nbi:sigma=1,alpha=0.01'``, ``'ckm:D=5,V=3,js=2'``, ``'geometric:epsilon=1'``; or a
        mapping with the name under ``'mechanism'`` (or ``'family'``) and the parameters; a
        Mechanism is returned unchanged.

    Returns
    -------
    Mechanism

    Examples
    --------
    >>> make_mechanism("nbi:sigma=1,alpha=0.01")
    SaturatedSynthesizer(NBI(sigma=1), alpha=0.01)
    >>> make_mechanism({"family": "poisson", "alpha": 0.02})
    SaturatedSynthesizer(Poisson(), alpha=0.02)
    """
    if isinstance(spec, Mechanism):
        return spec
    if isinstance(spec, Mapping):
        params = {k: v for k, v in spec.items() if not _missing(v)}
        name = params.pop("mechanism", None) or params.pop("family", None)
        params.pop("family", None)
        if name is None:
            raise InvalidArgumentError(f"a mechanism setting needs a 'mechanism' or 'family' name. Got {dict(spec)!r}.")
        name = str(name).lower()
        text = name
    else:
        name, params = parse_spec(spec)
        text = spec
    families = registered("distribution")
    mechanisms = registered("mechanism")
    if name in families:
        from ..distributions import make_distribution
        from .saturated import SaturatedSynthesizer

        own = {k: params.pop(k) for k in _SATURATED_OWN if k in params}
        try:
            dist = make_distribution(name, **params)
        except InvalidArgumentError as exc:
            raise InvalidArgumentError(f"mechanism {text!r}: {exc}") from None
        return SaturatedSynthesizer(dist, **own)
    if name in mechanisms and name != "saturated":
        cls = mechanisms[name]
        build = getattr(cls, "from_spec", cls)
        try:
            return build(**params)
        except TypeError as exc:
            raise InvalidArgumentError(f"mechanism {text!r}: {exc}") from None
    raise InvalidArgumentError(
        f"unknown mechanism {name!r} in {text!r}; choose from {', '.join(map(repr, mechanism_names()))}."
    )


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def mechanism_spec(mechanism: Mechanism) -> str:
    """The spec of a mechanism whose parameters are numbers (the inverse of :func:`make_mechanism`).

    Examples
    --------
    >>> from cellsafe.distributions import NBI
    >>> from cellsafe.mechanisms import SaturatedSynthesizer
    >>> mechanism_spec(SaturatedSynthesizer(NBI(sigma=1.0), alpha=0.01))
    'nbi:sigma=1,alpha=0.01'
    """
    name = mechanism_family(mechanism)
    shown = {}
    nested = getattr(mechanism, "_nested", lambda: {})()
    ordered: dict[str, Any] = {}
    for holder in nested.values():  # the family's parameters first: 'nbi:sigma=1,alpha=0.01'
        ordered.update(holder.flat_params())
    for k, v in mechanism.flat_params().items():
        ordered.setdefault(k, v)
    for k, v in ordered.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or _missing(v):
            continue
        shown[k] = v
    decls: dict[str, Any] = {}
    for holder in [mechanism, *nested.values()]:
        decls.update(type(holder).param_declarations())
    parts = []
    for k, v in shown.items():
        d = decls.get(k)
        if d is not None and d.default is not REQUIRED and _equal(v, d.default):
            continue
        parts.append(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}")
    return name + (":" + ",".join(parts) if parts else "")


def _equal(a: Any, b: Any) -> bool:
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return False


def mechanism_family(mechanism: Mechanism) -> str:
    """The name a spec of this mechanism starts with ('nbi', 'ckm', 'geometric', ...)."""
    dist = getattr(mechanism, "distribution", None)
    if dist is not None and getattr(dist, "registered_name", None):
        return dist.registered_name
    return getattr(type(mechanism), "registered_name", type(mechanism).__name__.lower())

"""Mechanisms from short specs, and specs from mechanisms.

A spec names a count family or a registered mechanism, then its parameters:
``'nbi:sigma=1,alpha=0.01'`` (saturated synthesis with NBI noise), ``'ckm:D=5,V=3,js=2'`` (the cell
key method with a generated ptable), ``'geometric:epsilon=1'``.  The same spec is accepted by every
command that takes a mechanism, and :func:`mechanism_spec` writes it back with every parameter that
differs from its declared default, so ``make_mechanism(mechanism_spec(m)) == m``: a manifest, a
frontier point or a line of a report names its mechanism in a form that rebuilds it.

Values are numbers, ``true``/``false``/``none``, text (``publication=party*age + party*sex``; in
double quotes when it holds a comma, a bracket or a quote) and lists in brackets
(``flex_weights=(1,0.5,0.2)``, ``rules=(freq<=3,p%=15)``).  The parameters of a configured parameter
are written in its place: a ptable's ``D``, ``V``, ``js``...; a log-linear model's
``distribution=nbi,sigma=0.5``.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from .._params import REQUIRED, Configurable
from .._registry import names, registered
from ..exceptions import InvalidArgumentError
from ._base import Mechanism

__all__ = [
    "make_mechanism",
    "mechanism_spec",
    "mechanism_record",
    "mechanism_names",
    "parse_spec",
    "mechanism_family",
    "format_value",
]


def mechanism_names() -> tuple[str, ...]:
    """Every name a spec may start with: the count families, then the registered mechanisms."""
    return names("distribution") + tuple(n for n in names("mechanism") if n != "saturated")


# ---------------------------------------------------------------------- reading
def _value(text: str, spec: str) -> Any:
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] == '"':
        return t[1:-1]
    if t.startswith("(") and t.endswith(")"):
        inner = t[1:-1].strip()
        return tuple(_value(part, spec) for part in _split(inner, spec)) if inner else ()
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


def _split(text: str, spec: str) -> list[str]:
    """``text`` split at the commas outside brackets and double quotes."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise InvalidArgumentError(f"mechanism spec {spec!r}: a ')' closes no '('.")
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if quoted or depth:
        raise InvalidArgumentError(f"mechanism spec {spec!r}: an unclosed {'quote' if quoted else '('}.")
    parts.append(text[start:])
    return parts


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``'nbi:sigma=1,alpha=0.01'`` -> ``('nbi', {'sigma': 1, 'alpha': 0.01})``.

    Examples
    --------
    >>> parse_spec("ckm:D=5,V=3")
    ('ckm', {'D': 5, 'V': 3})
    >>> parse_spec("suppress:publication=a*b + a*c,rules=(freq<=3,p%=15)")
    ('suppress', {'publication': 'a*b + a*c', 'rules': ('freq<=3', 'p%=15')})
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidArgumentError(f"a mechanism spec must be a non-empty string like 'nbi:sigma=1'. Got {spec!r}.")
    name, _, rest = spec.partition(":")
    params: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in _split(rest, spec))):
        key, eq, text = part.partition("=")
        if not eq or not key.strip():
            raise InvalidArgumentError(
                f"mechanism spec {spec!r}: {part!r} is not 'name=value'; write e.g. 'nbi:sigma=1,alpha=0.01'."
            )
        if key.strip() in params:
            raise InvalidArgumentError(f"mechanism spec {spec!r} gives {key.strip()!r} twice.")
        params[key.strip()] = _value(text, spec)
    return name.strip().lower(), params


# ---------------------------------------------------------------------- building
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
    try:
        if name in families:
            from ..distributions import make_distribution
            from .saturated import SaturatedSynthesizer

            own = {k: params.pop(k) for k in SaturatedSynthesizer.param_declarations() if k in params}
            own.pop("distribution", None)
            return SaturatedSynthesizer(make_distribution(name, **params), **own)
        if name in mechanisms and name != "saturated":
            cls = mechanisms[name]
            _distribution_from_spec(cls, params, families)
            build = getattr(cls, "from_spec", cls)
            return build(**params)
    except InvalidArgumentError as exc:
        raise InvalidArgumentError(f"mechanism {text!r}: {exc}") from None
    except TypeError as exc:
        raise InvalidArgumentError(f"mechanism {text!r}: {exc}") from None
    raise InvalidArgumentError(
        f"unknown mechanism {name!r} in {text!r}; choose from {', '.join(map(repr, mechanism_names()))}."
    )


def _distribution_from_spec(cls: type, params: dict[str, Any], families: Mapping[str, type]) -> None:
    """``distribution=nbi,sigma=0.5`` in a mechanism's spec: the family built from its own parameters."""
    name = params.get("distribution")
    if "distribution" not in cls.param_declarations() or not isinstance(name, str):  # type: ignore[attr-defined]
        return
    if name.lower() not in families:
        raise InvalidArgumentError(
            f"unknown distribution {name!r}; choose from {', '.join(map(repr, families))}."
        )
    from ..distributions import make_distribution

    family = families[name.lower()]
    shape = {k: params.pop(k) for k in family.param_declarations() if k in params}  # type: ignore[attr-defined]
    params["distribution"] = make_distribution(name, **shape)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


# ---------------------------------------------------------------------- writing
def mechanism_spec(mechanism: Mechanism) -> str:
    """The spec that rebuilds a mechanism: ``make_mechanism(mechanism_spec(m)) == m``.

    Every parameter that differs from its declared default is written, those of a configured
    parameter (a ptable, a distribution) in its place.

    Raises
    ------
    InvalidArgumentError
        A parameter a spec cannot hold: a ptable read from a file, a Publication object, per-cell
        arrays (the message names it).

    Examples
    --------
    >>> from cellsafe.distributions import NBI
    >>> from cellsafe.mechanisms import SaturatedSynthesizer, CellKeyMethod, PTable
    >>> mechanism_spec(SaturatedSynthesizer(NBI(sigma=1.0), alpha=0.01))
    'nbi:sigma=1,alpha=0.01'
    >>> mechanism_spec(CellKeyMethod(PTable.generate(D=5, V=3, js=2, min_probability=0.01)))
    'ckm:D=5,V=3,js=2,min_probability=0.01'
    """
    name = mechanism_family(mechanism)
    items = _spec_items(mechanism, type(mechanism).__name__, top=True)
    return name + (":" + ",".join(f"{k}={format_value(v, k, mechanism)}" for k, v in items) if items else "")


def _spec_items(holder: Configurable, owner: str, *, top: bool) -> list[tuple[str, Any]]:
    """(name, value) of the parameters that differ from their defaults, nested ones in place."""
    decls = type(holder).param_declarations()
    out: list[tuple[str, Any]] = []
    for key, value in holder.get_params().items():
        decl = decls.get(key)
        if isinstance(value, Configurable):
            family = getattr(value, "registered_name", None)
            if family is not None and key == "distribution":
                if not (top and getattr(type(holder), "registered_name", None) == "saturated"):
                    out.append(("distribution", family))
            elif hasattr(value, "generated") and not value.generated:
                raise InvalidArgumentError(
                    f"{owner} has no spec: its {key} was read from a file or built from arrays, not generated "
                    "(record the file instead)."
                )
            out += _spec_items(value, owner, top=False)
            continue
        if decl is not None and decl.default is not REQUIRED and _same(value, decl.default):
            continue
        out.append((key, value))
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (type(a) is type(b) and a == b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False


def format_value(value: Any, name: str = "value", owner: Any = None) -> str:
    """A parameter value as a spec writes it (the inverse of the spec's reading of values).

    Examples
    --------
    >>> format_value(0.1), format_value(3.0), format_value((1, 0.5)), format_value("a*b + c")
    ('0.1', '3', '(1,0.5)', 'a*b + c')
    """
    if hasattr(value, "item") and not isinstance(value, (list, tuple, str)) and getattr(value, "ndim", 1) == 0:
        value = value.item()  # a numpy scalar
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgumentError(f"the {name!r} parameter of {_owner(owner)} is {value!r}; a spec holds finite numbers.")
        return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)
    if isinstance(value, str):
        plain = value == value.strip() and not any(c in value for c in ',()"') and isinstance(_value(value, value), str)
        if plain:
            return value
        if '"' in value:
            raise InvalidArgumentError(f"the {name!r} parameter of {_owner(owner)} holds a double quote; a spec cannot.")
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "(" + ",".join(format_value(v, name, owner) for v in value) + ")"
    raise InvalidArgumentError(
        f"{_owner(owner)} has no spec: its {name!r} parameter is a {type(value).__name__}, which a spec cannot hold "
        "(numbers, text and lists of them only)."
    )


def _owner(owner: Any) -> str:
    return type(owner).__name__ if owner is not None else "the mechanism"


def mechanism_record(mechanism: Mechanism) -> dict[str, Any]:
    """How manifests, reports and JSON outputs name a mechanism.

    Returns
    -------
    dict
        ``class``; ``spec``, the spec that rebuilds it (None when a spec cannot hold it, with the
        reason in ``spec_note``); ``ptable_sha256`` for a method with a perturbation table (the same
        hash means the same table, however it was made or read).

    Examples
    --------
    >>> rec = mechanism_record(make_mechanism("ckm:D=5,V=3,js=2"))
    >>> rec["spec"], len(rec["ptable_sha256"])
    ('ckm:D=5,V=3,js=2', 64)
    """
    out: dict[str, Any] = {"class": type(mechanism).__name__, "spec": None}
    try:
        out["spec"] = mechanism_spec(mechanism)
    except InvalidArgumentError as exc:
        out["spec_note"] = str(exc)
    table = getattr(mechanism, "ptable", None)
    if hasattr(table, "sha256"):
        out["ptable_sha256"] = table.sha256  # type: ignore[union-attr]
    return out


def mechanism_family(mechanism: Mechanism) -> str:
    """The name a spec of this mechanism starts with ('nbi', 'ckm', 'geometric', ...)."""
    dist = getattr(mechanism, "distribution", None)
    if getattr(type(mechanism), "registered_name", None) == "saturated" and getattr(dist, "registered_name", None):
        return dist.registered_name  # type: ignore[union-attr]
    return getattr(type(mechanism), "registered_name", type(mechanism).__name__.lower())

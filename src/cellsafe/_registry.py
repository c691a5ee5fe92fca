"""One registry of named families: count distributions and mechanisms.

Each class registers itself where it is defined (``@register("distribution", "nbi")``), so the
command line's choices, :func:`~cellsafe.distributions.make_distribution`,
:func:`~cellsafe.mechanisms.make_mechanism`, the tuning searches and the common tests all read
one list instead of keeping their own.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from .exceptions import InvalidArgumentError

__all__ = ["register", "registered", "lookup", "KINDS"]

#: The kinds of registered classes, and the package whose import registers them all.
KINDS = {"distribution": "cellsafe.distributions", "mechanism": "cellsafe.mechanisms"}

_REGISTRY: dict[str, dict[str, type]] = {kind: {} for kind in KINDS}


def register(kind: str, name: str) -> Callable[[type], type]:
    """Class decorator: register ``cls`` as the ``kind`` called ``name`` (lower case)."""
    if kind not in KINDS:
        raise AssertionError(f"unknown registry kind {kind!r}")

    def deco(cls: type) -> type:
        known = _REGISTRY[kind].get(name)
        if known is not None and known.__qualname__ != cls.__qualname__:
            raise AssertionError(f"{kind} name {name!r} is taken by {known.__qualname__}")
        _REGISTRY[kind][name] = cls
        cls.registered_name = name  # type: ignore[attr-defined]
        return cls

    return deco


def registered(kind: str) -> dict[str, type]:
    """The registered classes of ``kind`` by name (importing the package that defines them).

    A package that loads its modules lazily lists them in ``REGISTERING_MODULES``: they are all
    imported here, and the classes come in that order whichever was imported first.
    """
    package = importlib.import_module(KINDS[kind])
    modules = getattr(package, "REGISTERING_MODULES", ())
    for module in modules:
        importlib.import_module(f"{package.__name__}.{module}")
    found = dict(_REGISTRY[kind])
    if not modules:
        return found
    rank = {f"{package.__name__}.{m}": i for i, m in enumerate(modules)}
    return dict(sorted(found.items(), key=lambda item: rank.get(item[1].__module__, len(rank))))


def lookup(kind: str, name: Any, owner: str) -> type:
    """The class registered as ``name`` (case-insensitive), or a clear error listing the names."""
    known = registered(kind)
    key = name.lower() if isinstance(name, str) else None
    if key not in known:
        raise InvalidArgumentError(
            f"The 'name' parameter of {owner} must be one of {', '.join(map(repr, known))}. Got {name!r} instead."
        )
    return known[key]

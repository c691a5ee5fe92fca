"""One registry of named families: count distributions and mechanisms.

The names, where each class lives and its declared parameters are in the catalog
(:mod:`cellsafe._catalog`), which imports nothing heavy: the command line's choices and help read it
without numpy.  :func:`registered` imports the classes themselves, in the catalog's order, for
:func:`~cellsafe.distributions.make_distribution`, :func:`~cellsafe.mechanisms.make_mechanism`, the
tuning searches and the common tests.  Each class is marked where it is defined
(``@register("distribution", "nbi")``); a class registered that the catalog does not list (a family
from outside cellsafe) is added to it with the parameters it declares.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from . import _catalog
from .exceptions import InvalidArgumentError

__all__ = ["register", "registered", "lookup", "names", "KINDS"]

#: The kinds of registered classes.
KINDS = ("distribution", "mechanism")


def register(kind: str, name: str, **entry: Any) -> Callable[[type], type]:
    """Class decorator: ``cls`` is the ``kind`` called ``name`` (lower case).

    A name the catalog does not list is added to it (``entry`` gives the other :class:`~cellsafe._catalog.Entry`
    fields: ``title``, ``grid``, ``cellwise``...), with the parameters the class declares.
    """
    if kind not in KINDS:
        raise AssertionError(f"unknown registry kind {kind!r}")

    def deco(cls: type) -> type:
        known = _catalog.entries(kind).get(name)
        if known is None or entry:
            title = entry.pop("title", (cls.__doc__ or name).strip().splitlines()[0])
            _catalog.add(_catalog.Entry(kind, name, cls, tuple(getattr(cls, "_params", ())), title, **entry))
        elif not isinstance(known.target, str) and known.target.__qualname__ != cls.__qualname__:
            raise AssertionError(f"{kind} name {name!r} is taken by {known.target.__qualname__}")
        cls.registered_name = name  # type: ignore[attr-defined]
        return cls

    return deco


def _load(target: Any) -> type:
    if not isinstance(target, str):
        return target
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def names(kind: str) -> tuple[str, ...]:
    """The registered names of ``kind``, in listing order, without importing anything."""
    return tuple(_catalog.entries(kind))


def registered(kind: str) -> dict[str, type]:
    """The registered classes of ``kind`` by name, in the catalog's order (imported here)."""
    if kind not in KINDS:
        raise AssertionError(f"unknown registry kind {kind!r}")
    return {name: _load(e.target) for name, e in _catalog.entries(kind).items()}


def lookup(kind: str, name: Any, owner: str) -> type:
    """The class registered as ``name`` (case-insensitive), or a clear error listing the names."""
    known = _catalog.entries(kind)
    key = name.lower() if isinstance(name, str) else None
    if key not in known:
        raise InvalidArgumentError(
            f"The 'name' parameter of {owner} must be one of {', '.join(map(repr, known))}. Got {name!r} instead."
        )
    return _load(known[key].target)

"""Declared parameters: one protocol for every configured object (distributions, mechanisms).

A configured class lists its parameters once, as :class:`Param` declarations in ``_params``.
From that one list follow the validation of the constructor's arguments, :meth:`get_params`,
:meth:`with_params` (a new object with some parameters changed), a readable ``repr``, the
parameters the tuning searches may vary (numeric, continuous, with a default scan range) and the
names the command line accepts.  A parameter whose value is itself configured (the distribution of
a synthesizer, the ptable of the cell key method) lends its own parameters: ``with_params(sigma=2)``
on a synthesizer changes the sigma of its distribution.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from ._validation import check_integer, check_real
from .exceptions import InvalidArgumentError

__all__ = ["Param", "Configurable", "REQUIRED", "refuse_renamed"]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: Marks a parameter without a default.
REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Param:
    """One declared parameter.

    Parameters
    ----------
    name : str
        The keyword argument of the constructor and the attribute it is stored in.
    kind : {'real', 'integer', 'choice', 'object'}
        'real' and 'integer' are checked against the interval; 'choice' against ``choices``;
        'object' values are checked by the class itself.
    low, high : float
        The allowed interval (``low_open``/``high_open`` exclude the end).
    default : Any
        :data:`REQUIRED` when the constructor needs it.
    scan : (float, float), optional
        The range a parameter search scans by default; None when the parameter is not tunable.
    log : bool
        Scan on a log grid (for scale parameters spanning orders of magnitude).
    none_ok : bool
        None is allowed (meaning "not set" or "use the default rule").
    doc : str
        One line for the command line's help and the report.
    hint : str
        What to do when a value is above ``high``, appended to the error message.
    """

    name: str
    kind: str = "real"
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    default: Any = REQUIRED
    scan: tuple[float, float] | None = None
    log: bool = False
    choices: tuple[Any, ...] = ()
    none_ok: bool = False
    doc: str = ""
    hint: str = ""

    @property
    def tunable(self) -> bool:
        """True when a parameter search may vary it (numeric, continuous, with a scan range)."""
        return self.scan is not None and self.kind == "real"

    def check(self, value: Any, owner: str) -> Any:
        """``value`` checked against the declaration (returned unchanged, as given)."""
        if not self.hint:
            return self._check(value, owner)
        try:
            return self._check(value, owner)
        except InvalidArgumentError as e:
            if isinstance(value, numbers.Real) and float(value) > self.high:  # the hint is about values too large
                raise InvalidArgumentError(f"{e} {self.hint}") from None
            raise

    def _check(self, value: Any, owner: str) -> Any:
        if value is None and self.none_ok:
            return value
        if value is REQUIRED:
            raise InvalidArgumentError(f"{owner} needs the {self.name!r} parameter; none was given.")
        if self.kind == "real":
            check_real(
                value,
                self.name,
                owner,
                low=self.low,
                high=self.high,
                low_open=self.low_open,
                high_open=self.high_open,
            )
        elif self.kind == "integer":
            lo = None if self.low == -math.inf else int(math.ceil(self.low + (1 if self.low_open else 0)))
            hi = None if self.high == math.inf else int(math.floor(self.high - (1 if self.high_open else 0)))
            check_integer(value, self.name, owner, low=lo, high=hi)
        elif self.kind == "choice":
            if value not in self.choices:
                raise InvalidArgumentError(
                    f"The {self.name!r} parameter of {owner} must be one of "
                    f"{', '.join(map(repr, self.choices))}. Got {value!r} instead."
                )
        return value


def refuse_renamed(owner: str, given: Mapping[str, Any], renamed: Mapping[str, str]) -> None:
    """Refuse keyword arguments ``given`` that a constructor does not take, naming the new name of a renamed one.

    ``renamed`` maps old names to new ones (``{"epsilon": "min_probability"}``): in cellsafe ``epsilon``
    is a privacy loss and nothing else.
    """
    for name in given:
        if name in renamed:
            raise InvalidArgumentError(
                f"{owner} has no parameter {name!r}; it is called {renamed[name]!r} now "
                f"({name!r} means a privacy loss everywhere in cellsafe)."
                if name == "epsilon"
                else f"{owner} has no parameter {name!r}; it is called {renamed[name]!r} now."
            )
        raise InvalidArgumentError(f"{owner} has no parameter {name!r}.")


class Configurable:
    """Mixin of configured objects: declared parameters, ``get_params`` and ``with_params``.

    Subclasses declare ``_params`` and store each parameter, unchanged, in the attribute of the
    same name (validated by :meth:`_check_params` in ``__init__``, or by ``__post_init__`` for
    frozen dataclasses).
    """

    _params: ClassVar[tuple[Param, ...]] = ()
    #: Former parameter names and their new names: refused with an error naming the new one.
    _renamed: ClassVar[dict[str, str]] = {}

    # ------------------------------------------------------------------ declarations
    @classmethod
    def param_declarations(cls) -> dict[str, Param]:
        """The declared parameters by name, in declaration order."""
        return {p.name: p for p in cls._params}

    def _check_params(self) -> None:
        owner = type(self).__name__
        for p in self._params:
            p.check(getattr(self, p.name), owner)

    # ------------------------------------------------------------------ the protocol
    def get_params(self) -> dict[str, Any]:
        """The parameters as given to the constructor (a new dict)."""
        return {p.name: getattr(self, p.name) for p in self._params}

    def _nested(self) -> dict[str, "Configurable"]:
        return {k: v for k, v in self.get_params().items() if isinstance(v, Configurable)}

    def flat_params(self) -> dict[str, Any]:
        """Own parameters, then those lent by configured parameters (a distribution's sigma...)."""
        out = {k: v for k, v in self.get_params().items() if not isinstance(v, Configurable)}
        for value in self._nested().values():
            for k, v in value.flat_params().items():
                out.setdefault(k, v)
        return out

    def tunable_params(self) -> dict[str, Param]:
        """Declarations of the numeric parameters a search may vary, own and lent."""
        out = {p.name: p for p in self._params if p.tunable}
        for value in self._nested().values():
            for k, p in value.tunable_params().items():
                out.setdefault(k, p)
        return out

    def with_params(self, **changes: Any) -> Any:
        """A new object of the same class with some parameters changed (validated again).

        A name that is not one of this object's parameters is passed to the configured
        parameter that has it (``SaturatedSynthesizer(NBI(1)).with_params(sigma=2)``).

        Raises
        ------
        InvalidArgumentError
            A name no parameter has, or a value out of range.
        """
        own = self.get_params()
        nested = self._nested()
        routed: dict[str, dict[str, Any]] = {}
        for name, value in changes.items():
            if name in own:
                own[name] = value
                continue
            holders = [k for k, v in nested.items() if name in v.flat_params()]
            if not holders:
                self._refuse_renamed(name)
                raise InvalidArgumentError(
                    f"{type(self).__name__} has no parameter {name!r}; its parameters are "
                    f"{', '.join(map(repr, self.flat_params()))}."
                )
            routed.setdefault(holders[0], {})[name] = value
        for holder, sub in routed.items():
            if holder in changes:
                raise InvalidArgumentError(
                    f"give either {holder!r} or its parameters {', '.join(map(repr, sub))}, not both."
                )
            own[holder] = nested[holder].with_params(**sub)
        return self._rebuild(own)

    def _refuse_renamed(self, name: str) -> None:
        """Refuse a former parameter name of this object or of a configured parameter, naming the new one."""
        for holder in [self, *self._nested().values()]:
            if name in holder._renamed:
                refuse_renamed(type(holder).__name__, {name: None}, holder._renamed)

    def _rebuild(self, params: Mapping[str, Any]) -> Any:
        return type(self)(**params)

    def _repr_params(self) -> str:
        """``repr`` arguments: the first required parameter by position, the others by name when
        they differ from their defaults."""
        parts = []
        for i, p in enumerate(self._params):
            value = getattr(self, p.name)
            if p.default is not REQUIRED and _same(value, p.default):
                continue
            parts.append(repr(value) if i == 0 and p.default is REQUIRED else f"{p.name}={value!r}")
        return ", ".join(parts)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, numbers.Real) and isinstance(b, numbers.Real) and not isinstance(a, bool):
        return float(a) == float(b)
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False

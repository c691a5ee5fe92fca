"""A categorical variable: a name and its ordered categories."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, Iterable

from ..exceptions import InvalidArgumentError

__all__ = ["Variable"]


@dataclass(frozen=True)
class Variable:
    """A categorical variable of a contingency table.

    Parameters
    ----------
    name : str
        The variable's name (a column of the microdata or frequency table).
    categories : sequence of hashable
        The categories in table order.  The order defines the cell's flat index
        (row-major over the variables) and, for log-linear models, the reference
        category (the first).
    public : bool, default False
        The categories were given as public (by a :class:`cellsafe.Domain`), not read from
        confidential records.  Differentially private mechanisms sample only tables whose
        variables are all public.  Not part of equality.

    Examples
    --------
    >>> Variable("sex", ["F", "M"])
    Variable(name='sex', categories=('F', 'M'))
    """

    name: str
    categories: tuple[Hashable, ...]
    public: bool = field(default=False, compare=False, repr=False)

    def __init__(self, name: str, categories: Iterable[Any], *, public: bool = False) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidArgumentError(f"A Variable's name must be a non-empty string. Got {name!r} instead.")
        cats = tuple(categories)
        if len(cats) == 0:
            raise InvalidArgumentError(f"Variable {name!r} must have at least one category.")
        if len(set(cats)) != len(cats):
            seen: set[Any] = set()
            dup = next(c for c in cats if c in seen or seen.add(c))  # type: ignore[func-returns-value]
            raise InvalidArgumentError(f"Variable {name!r} lists category {dup!r} more than once.")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "categories", cats)
        object.__setattr__(self, "public", bool(public))

    @property
    def size(self) -> int:
        """Number of categories, l_j."""
        return len(self.categories)

    def __len__(self) -> int:
        return len(self.categories)

    def __repr__(self) -> str:
        cats = self.categories
        shown = repr(cats) if len(cats) <= 8 else f"({', '.join(map(repr, cats[:4]))}, ..., {cats[-1]!r}) [{len(cats)}]"
        return f"Variable(name={self.name!r}, categories={shown})"

"""Model formulas over a table's variables, in R's notation.

One parser serves log-linear models (``ethnicity*age + age*language``), IPF generating
classes and published-table specifications (``party*age + party*sex``; ``- 1`` drops the
grand total).  Supported operators, as in R: ``+`` (union of terms), ``-`` (removal; ``- 1``
removes the intercept / grand total), ``:`` (crossing alone), ``*`` (``a*b = a + b + a:b``),
``^`` (``(a+b+c)^2``: all crossings up to order 2), parentheses, ``.`` (all variables, when they
are given), and backtick-quoted names for names such as ```income>50K```.  A leading ``~`` is
ignored.

Terms are ordered as R orders them: by order (main effects, then two-way, ...), then by first
appearance; the variables inside a term follow their first appearance in the formula.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from .exceptions import InvalidArgumentError

__all__ = ["Formula", "parse_formula"]

_TOKEN = re.compile(r"\s*(?:(`[^`]+`)|([A-Za-z_.][A-Za-z0-9_.]*)|(\d+)|(.))")


@dataclass(frozen=True)
class Formula:
    """A parsed formula: its terms (tuples of variable names) and whether it has an intercept.

    Attributes
    ----------
    terms : tuple of tuple of str
        Non-empty terms in R's order.  The intercept (grand total) is not a term.
    intercept : bool
        False when the formula says ``- 1`` (or ``+ 0``).
    text : str
        The formula as written.
    removed : tuple of tuple of str
        The terms a ``-`` removes (``a*b - a`` removes ``('a',)``), whether or not they were there.
    """

    terms: tuple[tuple[str, ...], ...]
    intercept: bool
    text: str
    removed: tuple[tuple[str, ...], ...] = ()

    @property
    def variables(self) -> tuple[str, ...]:
        """The variables named, in order of first appearance."""
        seen: list[str] = []
        for t in self.terms:
            for v in t:
                if v not in seen:
                    seen.append(v)
        return tuple(seen)

    def generating_class(self) -> tuple[tuple[str, ...], ...]:
        """The maximal terms (those not contained in another term): an IPF model's margins."""
        sets = [frozenset(t) for t in self.terms]
        return tuple(t for t, s in zip(self.terms, sets) if not any(s < o for o in sets))

    def is_hierarchical(self) -> bool:
        """True when every sub-crossing of every term is also a term."""
        have = {frozenset(t) for t in self.terms}
        from itertools import combinations

        for t in self.terms:
            for r in range(1, len(t)):
                for sub in combinations(t, r):
                    if frozenset(sub) not in have:
                        return False
        return True

    def __str__(self) -> str:
        body = " + ".join(":".join(t) for t in self.terms) or "1"
        return body if self.intercept else f"{body} - 1"


class _Parser:
    def __init__(self, text: str, variables: Sequence[str] | None) -> None:
        self.text = text
        self.variables = None if variables is None else list(variables)
        self.tokens = self._tokenize(text)
        self.pos = 0
        self.order: list[str] = []
        self.removed: set[frozenset[str]] = set()

    def _tokenize(self, text: str) -> list[str]:
        out: list[str] = []
        for m in _TOKEN.finditer(text):
            quoted, name, num, other = m.groups()
            if quoted:
                out.append("N:" + quoted[1:-1])
            elif name:
                out.append("N:" + name if name != "." else ".")
            elif num:
                out.append("I:" + num)
            elif other and other.strip():
                if other not in "+-*:^()~":
                    self.fail(f"unexpected character {other!r}")
                out.append(other)
        if out and out[0] == "~":
            out = out[1:]
        if not out:
            self.fail("the formula is empty")
        return out

    def fail(self, why: str) -> None:
        raise InvalidArgumentError(
            f"cannot parse formula {self.text!r}: {why}. Write it as in R, for example 'a*b + a*c' or '(a + b + c)^2 - 1'."
        )

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            self.fail("it ends too early")
        self.pos += 1
        return tok  # type: ignore[return-value]

    # Each value is (set of terms as frozensets, intercept flag or None if not stated)
    def expr(self) -> tuple[set[frozenset[str]], bool | None]:
        terms, icpt = self.product()
        while self.peek() in ("+", "-"):
            op = self.take()
            rhs, r_icpt = self.product()
            if op == "+":
                terms |= rhs
                if r_icpt is not None:
                    icpt = r_icpt
            else:
                terms -= rhs
                self.removed |= rhs
                if r_icpt is True:
                    icpt = False
        return terms, icpt

    def product(self) -> tuple[set[frozenset[str]], bool | None]:
        terms, icpt = self.power()
        while self.peek() in ("*", ":"):
            op = self.take()
            rhs, _ = self.power()
            cross = {a | b for a in terms for b in rhs}
            terms = (terms | rhs | cross) if op == "*" else cross
            icpt = None
        return terms, icpt

    def power(self) -> tuple[set[frozenset[str]], bool | None]:
        terms, icpt = self.atom()
        if self.peek() == "^":
            self.take()
            tok = self.take()
            if not tok.startswith("I:"):
                self.fail("'^' must be followed by a whole number")
            n = int(tok[2:])
            base = set(terms)
            out = set(terms)
            for _ in range(n - 1):
                out = out | {a | b for a in out for b in base}
            terms = out
        return terms, icpt

    def atom(self) -> tuple[set[frozenset[str]], bool | None]:
        tok = self.take()
        if tok == "(":
            val = self.expr()
            if self.take() != ")":
                self.fail("a parenthesis is not closed")
            return val
        if tok.startswith("I:"):
            if tok[2:] not in ("0", "1"):
                self.fail(f"the number {tok[2:]} is not a term (only 0 and 1 are)")
            return set(), tok[2:] == "1"
        if tok == ".":
            if self.variables is None:
                self.fail("'.' (all variables) needs the table's variables")
            for v in self.variables or []:
                self._note(v)
            return {frozenset([v]) for v in self.variables or []}, None
        if tok.startswith("N:"):
            name = tok[2:]
            if self.variables is not None and name not in self.variables:
                raise InvalidArgumentError(
                    f"formula {self.text!r} names unknown variable {name!r}; the table has variables {self.variables}."
                )
            self._note(name)
            return {frozenset([name])}, None
        self.fail(f"unexpected {tok!r}")
        raise AssertionError  # unreachable

    def _note(self, name: str) -> None:
        if name not in self.order:
            self.order.append(name)


def parse_formula(text: str | Formula, variables: Iterable[str] | None = None) -> Formula:
    """Parse an R-style formula.

    Parameters
    ----------
    text : str
        For example ``'party*age + party*sex'`` or ``'~ (a + b + c)^2 - 1'``.
    variables : iterable of str, optional
        The table's variables: names are checked against them and ``.`` expands to all of them.

    Examples
    --------
    >>> f = parse_formula("party*age + party*sex")
    >>> f.terms
    (('party',), ('age',), ('sex',), ('party', 'age'), ('party', 'sex'))
    >>> f.generating_class()
    (('party', 'age'), ('party', 'sex'))
    """
    if isinstance(text, Formula):
        return text
    if not isinstance(text, str):
        raise InvalidArgumentError(f"a formula must be a string. Got {type(text).__name__}.")
    p = _Parser(text, None if variables is None else list(variables))
    terms, icpt = p.expr()
    if p.peek() is not None:
        p.fail(f"unexpected {p.peek()!r} after a complete formula")
    rank = {v: i for i, v in enumerate(p.order)}
    ordered = [tuple(sorted(t, key=rank.__getitem__)) for t in terms if t]
    first = {}
    # order of first appearance of a term: by the position of its variables
    for t in ordered:
        first[t] = tuple(sorted(rank[v] for v in t))
    ordered.sort(key=lambda t: (len(t), first[t]))
    removed = tuple(sorted(tuple(sorted(t, key=rank.__getitem__)) for t in p.removed if t))
    return Formula(tuple(ordered), True if icpt is None else icpt, text, removed)

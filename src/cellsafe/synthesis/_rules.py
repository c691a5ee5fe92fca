"""Rules that every synthetic record must obey: a small expression language, parsed, never evaluated as Python.

A rule belongs to one variable, the *target*, and reads ``CONDITION -> CONSEQUENCE``::

    rules = {"marital": "age < 16 -> 'single'",
             "hours": "employed == 'no' -> 0",
             "income": "age < 15 -> NA",
             "smoke": "age < 18 and sex == 'F' -> smoke in ('never', 'occasional')"}

When the condition holds for a record, its target is drawn under the consequence.  A bare
value (``'single'``, ``0``, ``NA``) fixes the target; a comparison of the target (``hours <= 40``,
``marital in ('single', 'widowed')``, ``marital != 'married'``) restricts it.

Grammar (keywords are lower case; ``&``, ``|`` and ``!`` are accepted for ``and``, ``or``, ``not``)::

    rule        := condition '->' consequence
    condition   := or
    or          := and ('or' and)*
    and         := not ('and' not)*
    not         := 'not' not | comparison
    comparison  := sum [('==' | '!=' | '<' | '<=' | '>' | '>=') sum]
                 | sum ['not'] 'in' '(' value (',' value)* ')'
    sum         := product (('+' | '-') product)*
    product     := unary (('*' | '/') unary)*
    unary       := '-' unary | NUMBER | 'STRING' | "STRING" | NA | NAME | `ANY NAME` | '(' or ')'

Names are columns (``Wr.Hnd`` and ``M.I`` are names; quote others in backticks).  ``x == NA``
holds where ``x`` is missing and ``x != NA`` where it is present; any other comparison with a
missing value is false.  Categories compare by label with ``==``, ``!=`` and ``in``, and by value with
``<`` and friends only when every label is a number.  A condition may only name variables
synthesized before its target (they are drawn first); a categorical target's consequence names
only the target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from ..exceptions import DataError, InvalidArgumentError
from ._columns import Column

__all__ = ["Rule", "parse_rule", "parse_rules", "CompiledRule", "compile_rule", "read_rules", "check_rules"]

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
    | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    | (?P<name>`[^`]+`|[A-Za-z_.][A-Za-z0-9_.]*)
    | (?P<op>->|==|!=|<=|>=|&&|\|\||[<>()+\-*/,&|!=])
    )""",
    re.VERBOSE,
)
_KEYWORDS = {"and", "or", "not", "in", "NA"}
_COMPARE = ("==", "!=", "<", "<=", ">", ">=")


@dataclass(frozen=True)
class _Node:
    kind: str  # "num", "str", "na", "col", "neg", "arith", "cmp", "in", "and", "or", "not"
    value: Any = None
    args: tuple["_Node", ...] = ()


def _tokens(text: str, where: str) -> list[tuple[str, str, int]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise InvalidArgumentError(f"{where}: cannot read {text[pos:].strip()[:20]!r} at character {pos + 1} of {text!r}.")
        group = m.lastgroup or "op"
        value = m.group(group)
        kind = "kw" if group == "name" and value in _KEYWORDS else group
        out.append((kind, value, m.start(group)))
        pos = m.end()
    out.append(("end", "", len(text)))
    return out


class _Parser:
    def __init__(self, text: str, where: str) -> None:
        self.text, self.where = text, where
        self.toks = _tokens(text, where)
        self.i = 0

    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i]

    def take(self) -> tuple[str, str, int]:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def error(self, what: str) -> InvalidArgumentError:
        kind, value, pos = self.peek()
        got = "the end" if kind == "end" else repr(value)
        return InvalidArgumentError(f"{self.where}: {what}, found {got} at character {pos + 1} of {self.text!r}.")

    def accept(self, *values: str) -> str | None:
        kind, value, _ = self.peek()
        if kind in ("op", "kw") and value in values:
            self.take()
            return value
        return None

    def or_(self) -> _Node:
        node = self.and_()
        while self.accept("or", "|", "||"):
            node = _Node("or", args=(node, self.and_()))
        return node

    def and_(self) -> _Node:
        node = self.not_()
        while self.accept("and", "&", "&&"):
            node = _Node("and", args=(node, self.not_()))
        return node

    def not_(self) -> _Node:
        if self.accept("not", "!"):
            return _Node("not", args=(self.not_(),))
        return self.comparison()

    def comparison(self) -> _Node:
        left = self.sum_()
        op = self.accept(*_COMPARE)
        if op is not None:
            return _Node("cmp", op, (left, self.sum_()))
        if self.peek()[1] == "=" and self.peek()[0] == "op":
            raise self.error("'=' is not a comparison; write '=='")
        negate = False
        if self.peek()[:2] == ("kw", "not") and self.toks[self.i + 1][:2] == ("kw", "in"):
            self.take()
            negate = True
        if self.accept("in"):
            if not self.accept("("):
                raise self.error("expected '(' after 'in'")
            values = [self.value()]
            while self.accept(","):
                values.append(self.value())
            if not self.accept(")"):
                raise self.error("expected ',' or ')' in the list after 'in'")
            node = _Node("in", tuple(values), (left,))
            return _Node("not", args=(node,)) if negate else node
        return left

    def value(self) -> _Node:
        sign = -1.0 if self.accept("-") else 1.0
        kind, value, _ = self.peek()
        if kind == "number":
            self.take()
            return _Node("num", sign * float(value))
        if sign < 0:
            raise self.error("expected a number after '-'")
        if kind == "string":
            self.take()
            return _Node("str", _unquote(value))
        if (kind, value) == ("kw", "NA"):
            self.take()
            return _Node("na")
        raise self.error("expected a number, a quoted category or NA")

    def sum_(self) -> _Node:
        node = self.product()
        while True:
            op = self.accept("+", "-")
            if op is None:
                return node
            node = _Node("arith", op, (node, self.product()))

    def product(self) -> _Node:
        node = self.unary()
        while True:
            op = self.accept("*", "/")
            if op is None:
                return node
            node = _Node("arith", op, (node, self.unary()))

    def unary(self) -> _Node:
        if self.accept("-"):
            return _Node("neg", args=(self.unary(),))
        kind, value, _ = self.peek()
        if kind == "number":
            self.take()
            return _Node("num", float(value))
        if kind == "string":
            self.take()
            return _Node("str", _unquote(value))
        if kind == "name":
            self.take()
            return _Node("col", value[1:-1] if value.startswith("`") else value)
        if (kind, value) == ("kw", "NA"):
            self.take()
            return _Node("na")
        if self.accept("("):
            node = self.or_()
            if not self.accept(")"):
                raise self.error("expected ')'")
            return node
        raise self.error("expected a column, a number, a quoted category, NA or '('")


def _unquote(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s[1:-1])


def _columns_of(node: _Node) -> set[str]:
    out = {node.value} if node.kind == "col" else set()
    for a in node.args:
        out |= _columns_of(a)
    return out


@dataclass(frozen=True)
class Rule:
    """A parsed rule ``condition -> consequence`` of one target variable.

    Attributes
    ----------
    target : str
    text : str
        The rule as written.
    condition, consequence : object
        Parsed expressions (private trees).
    fixed : bool
        Whether the consequence is a bare value that fixes the target.
    """

    target: str
    text: str
    condition: _Node
    consequence: _Node
    fixed: bool

    @property
    def condition_columns(self) -> set[str]:
        return _columns_of(self.condition)

    @property
    def consequence_columns(self) -> set[str]:
        return _columns_of(self.consequence)

    def __str__(self) -> str:
        return f"{self.target}: {self.text}"


def parse_rule(target: str, text: str) -> Rule:
    """Parse ``"CONDITION -> CONSEQUENCE"`` for ``target``.

    Examples
    --------
    >>> r = parse_rule("marital", "age < 16 -> 'single'")
    >>> r.fixed, sorted(r.condition_columns)
    (True, ['age'])
    >>> parse_rule("hours", "employed == 'no' -> hours <= 40").fixed
    False
    """
    where = f"rule for {target!r}"
    if not isinstance(text, str):
        raise InvalidArgumentError(f"{where} must be a string 'CONDITION -> CONSEQUENCE'. Got {text!r}.")
    p = _Parser(text, where)
    condition = p.or_()
    if not p.accept("->"):
        raise p.error("expected '->' between the condition and the consequence")
    if p.peek()[0] in ("number", "string") or p.peek()[:2] == ("kw", "NA") or (
        p.peek()[:2] == ("op", "-") and p.toks[p.i + 1][0] == "number"
    ):
        value = p.value()
        fixed = True
        consequence = _Node("cmp", "==", (_Node("col", target), value))
    else:
        consequence = p.or_()
        fixed = False
    if p.peek()[0] != "end":
        raise p.error("expected the end of the rule")
    if _is_value(condition):
        raise InvalidArgumentError(f"{where}: the condition {text.split('->')[0].strip()!r} is a value, not a comparison.")
    if not fixed and _is_value(consequence):
        raise InvalidArgumentError(f"{where}: the consequence must be a value or a comparison of {target!r}.")
    if target in _columns_of(condition):
        raise InvalidArgumentError(
            f"{where}: the condition names {target!r} itself; a rule draws its target, so its condition can only "
            "name variables synthesized before it."
        )
    if not fixed and target not in _columns_of(consequence):
        raise InvalidArgumentError(f"{where}: the consequence {text.split('->', 1)[1].strip()!r} does not name {target!r}.")
    return Rule(target, text.strip(), condition, consequence, fixed)


def _is_value(node: _Node) -> bool:
    return node.kind in ("num", "str", "na", "col", "neg", "arith")


def parse_rules(rules: Mapping[str, Any] | None) -> list[Rule]:
    """Parse ``{target: rule}`` or ``{target: [rules]}``."""
    if rules is None:
        return []
    if not isinstance(rules, Mapping):
        raise InvalidArgumentError(f"rules must be a dict {{column: 'CONDITION -> CONSEQUENCE'}}. Got {type(rules).__name__}.")
    out = []
    for target, texts in rules.items():
        for text in [texts] if isinstance(texts, str) else list(texts):
            out.append(parse_rule(str(target), text))
    return out


# --------------------------------------------------------------------------- evaluation on encoded arrays

_Arrays = Mapping[str, np.ndarray]


class _Value:
    """A compiled value: numbers (float, NaN missing) or category codes of one column."""

    def __init__(self, fn: Callable[..., Any], column: Column | None = None, literal: Any = None, na: bool = False):
        self.fn, self.column, self.literal, self.na = fn, column, literal, na


def _numeric_labels(col: Column) -> np.ndarray | None:
    try:
        return np.array([float(v) for v in col.labels], dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _code_of(col: Column, literal: Any, where: str) -> int:
    for i, lab in enumerate(col.labels):
        if lab == literal or str(lab) == str(literal):
            return i
    if isinstance(literal, float):
        nums = _numeric_labels(col)
        if nums is not None and np.any(nums == literal):
            return int(np.flatnonzero(nums == literal)[0])
    shown = ", ".join(repr(str(v)) for v in col.labels[:8]) + (", ..." if len(col.labels) > 8 else "")
    raise DataError(f"{where}: {literal!r} is not a category of {col.name!r} (its categories: {shown}).")


class _Compiler:
    def __init__(self, columns: Mapping[str, Column], where: str) -> None:
        self.columns, self.where = columns, where

    def value(self, node: _Node) -> _Value:
        if node.kind == "num":
            v = node.value
            return _Value(lambda a, v=v: np.float64(v), literal=v)
        if node.kind == "str":
            return _Value(lambda a: np.nan, literal=node.value)
        if node.kind == "na":
            return _Value(lambda a: np.nan, na=True)
        if node.kind == "col":
            if node.value not in self.columns:
                raise DataError(f"{self.where}: unknown column {node.value!r}; the columns are {list(self.columns)}.")
            col = self.columns[node.value]
            name = node.value
            if col.kind == "numeric":
                return _Value(lambda a, name=name: a[name], column=col)
            return _Value(lambda a, name=name: a[name], column=col)
        if node.kind in ("neg", "arith"):
            parts = [self.number(a) for a in node.args]
            if node.kind == "neg":
                f = parts[0]
                return _Value(lambda a, f=f: -f(a))
            f, g = parts
            op = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[node.value]
            return _Value(lambda a, f=f, g=g, op=op: _quiet(op, f(a), g(a)))
        raise InvalidArgumentError(f"{self.where}: a comparison is used where a value is expected.")

    def number(self, node: _Node) -> Callable[..., Any]:
        v = self.value(node)
        if v.na or (v.literal is not None and isinstance(v.literal, str)):
            raise InvalidArgumentError(f"{self.where}: arithmetic needs numbers; got {'NA' if v.na else repr(v.literal)}.")
        if v.column is not None and v.column.kind == "categorical":
            nums = _numeric_labels(v.column)
            if nums is None:
                raise DataError(f"{self.where}: {v.column.name!r} is categorical; it has no numeric value for arithmetic.")
            table = np.append(nums, np.nan)
            return lambda a, f=v.fn, t=table: t[f(a)]
        return v.fn

    def boolean(self, node: _Node) -> Callable[..., Any]:
        if node.kind in ("and", "or"):
            f, g = (self.boolean(a) for a in node.args)
            op = np.logical_and if node.kind == "and" else np.logical_or
            return lambda a: op(f(a), g(a))
        if node.kind == "not":
            f = self.boolean(node.args[0])
            return lambda a: np.logical_not(f(a))
        if node.kind == "in":
            left = self.value(node.args[0])
            tests = [self._compare("==", left, self.value(v)) for v in node.value]
            return lambda a: np.logical_or.reduce([t(a) for t in tests]) if len(tests) > 1 else tests[0](a)
        if node.kind == "cmp":
            return self._compare(node.value, self.value(node.args[0]), self.value(node.args[1]))
        raise InvalidArgumentError(f"{self.where}: a value is used where a comparison is expected.")

    def _compare(self, op: str, left: _Value, right: _Value) -> Callable[..., Any]:
        if left.column is None and right.column is not None:
            left, right = right, left
            op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
        if left.na or right.na:
            other = right if left.na else left
            if op not in ("==", "!="):
                raise InvalidArgumentError(f"{self.where}: NA compares only with == and !=.")
            miss = self._missing(other)
            return miss if op == "==" else (lambda a, m=miss: ~m(a))
        col = left.column
        if col is not None and col.kind == "categorical" and op in ("==", "!="):
            if right.column is not None:
                if right.column.kind != "categorical":
                    raise DataError(f"{self.where}: {col.name!r} is categorical and {right.column.name!r} numeric; they do not compare.")
                if list(map(str, col.labels)) != list(map(str, right.column.labels)):
                    raise DataError(f"{self.where}: {col.name!r} and {right.column.name!r} have different categories.")
                f, g, k = left.fn, right.fn, col.missing_code
                eq: Callable[..., Any] = lambda a: (f(a) == g(a)) & (f(a) != k)  # noqa: E731
            else:
                code = _code_of(col, right.literal, self.where)
                f = left.fn
                eq = lambda a, c=code: f(a) == c  # noqa: E731
            if op == "==":
                return eq
            present = self._missing(left)
            return lambda a: ~eq(a) & ~present(a)
        if col is not None and col.kind == "categorical" and right.literal is not None and isinstance(right.literal, str):
            raise DataError(f"{self.where}: categories compare with ==, != and in; {op!r} needs numbers.")
        f = self._num(left)
        g = self._num(right)
        npop = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}[op]

        def cmp(a: _Arrays) -> np.ndarray:
            x, y = f(a), g(a)
            with np.errstate(invalid="ignore"):
                out = npop(x, y)
            return np.asarray(out & ~np.isnan(x) & ~np.isnan(y))

        return cmp

    def _num(self, v: _Value) -> Callable[..., Any]:
        if v.literal is not None and isinstance(v.literal, str):
            raise DataError(f"{self.where}: the category {v.literal!r} is compared with a number.")
        if v.column is not None and v.column.kind == "categorical":
            nums = _numeric_labels(v.column)
            if nums is None:
                raise DataError(
                    f"{self.where}: {v.column.name!r} is categorical with labels that are not numbers; compare it with ==, != or in."
                )
            table = np.append(nums, np.nan)
            return lambda a, f=v.fn, t=table: t[f(a)]
        return v.fn

    def _missing(self, v: _Value) -> Callable[..., Any]:
        if v.column is None:
            if v.na:
                return lambda a: np.bool_(True)
            f = v.fn
            return lambda a: np.isnan(np.asarray(f(a), dtype=np.float64))
        if v.column.kind == "categorical":
            k = v.column.missing_code
            return lambda a, f=v.fn: f(a) == k
        return lambda a, f=v.fn: np.isnan(f(a))


def _quiet(op: Any, x: Any, y: Any) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return op(x, y)


@dataclass(frozen=True)
class CompiledRule:
    """A rule checked against the data's columns, ready to evaluate on encoded arrays.

    ``condition(arrays)`` and ``holds(arrays)`` return boolean arrays over records (``holds`` is
    ``not condition or consequence``); ``allowed`` is, for a categorical target, the codes its
    consequence allows.
    """

    rule: Rule
    condition: Callable[..., Any]
    consequence: Callable[..., Any]
    allowed: np.ndarray | None
    fixed_value: Any

    def holds(self, arrays: _Arrays, n: int) -> np.ndarray:
        cond = np.broadcast_to(self.condition(arrays), (n,))
        cons = np.broadcast_to(self.consequence(arrays), (n,))
        return ~cond | cons


def compile_rule(rule: Rule, columns: Mapping[str, Column]) -> CompiledRule:
    """Check ``rule`` against the columns (names, categories, types) and compile it."""
    where = f"rule for {rule.target!r} ({rule.text!r})"
    if rule.target not in columns:
        raise DataError(f"{where}: {rule.target!r} is not among the synthesized columns {list(columns)}.")
    comp = _Compiler(columns, where)
    condition = comp.boolean(rule.condition)
    consequence = comp.boolean(rule.consequence)
    target = columns[rule.target]
    allowed = None
    fixed_value: Any = None
    if target.kind == "categorical":
        others = rule.consequence_columns - {rule.target}
        if others:
            raise DataError(f"{where}: the consequence of a categorical target can only name {rule.target!r}; it names {sorted(others)}.")
        codes = np.arange(target.missing_code + 1)
        allowed = np.asarray(np.broadcast_to(consequence({rule.target: codes}), codes.shape), dtype=bool).copy()
        if not allowed.any():
            raise DataError(f"{where}: no category of {rule.target!r} meets the consequence.")
        if rule.fixed:
            fixed_value = int(np.flatnonzero(allowed)[0])
    elif rule.fixed:
        node = rule.consequence.args[1]
        if node.kind == "str":
            raise DataError(f"{where}: {rule.target!r} is numeric, but the rule fixes it to the category {node.value!r}.")
        fixed_value = np.nan if node.kind == "na" else float(node.value)
    return CompiledRule(rule, condition, consequence, allowed, fixed_value)


def read_rules(path: Any) -> tuple[dict[str, list[str]], list[dict[str, Any]]]:
    """Rules and allowed pairs from a file.

    A ``.json`` file holds ``{"rules": {column: rule or [rules]}, "allow": [{col: category, col: category}]}``
    or just ``{column: rule}``.  Any other file holds one rule a line, ``COLUMN: CONDITION -> CONSEQUENCE``;
    blank lines and lines starting with ``#`` are skipped.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "rules.txt"
    >>> _ = p.write_text("# survey\\nSmoke: Age < 18 -> 'Never'\\n")
    >>> read_rules(p)
    ({'Smoke': ["Age < 18 -> 'Never'"]}, [])
    """
    import json
    from pathlib import Path

    path = Path(path)
    if not path.is_file():
        raise DataError(f"rules file {str(path)!r} does not exist (or is not a file).")
    text = path.read_text(encoding="utf-8")
    rules: dict[str, list[str]] = {}
    allow: list[dict[str, Any]] = []
    if path.suffix.lower() == ".json":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"rules file {str(path)!r} is not valid JSON: {exc}.") from None
        if not isinstance(obj, dict):
            raise DataError(f"rules file {str(path)!r} must hold a JSON object {{\"rules\": {{...}}, \"allow\": [...]}}.")
        body = obj.get("rules", obj) if set(obj) <= {"rules", "allow"} else obj
        allow = list(obj.get("allow", [])) if body is not obj else []
        for col, r in dict(body).items():
            rules.setdefault(str(col), []).extend([r] if isinstance(r, str) else list(r))
        return rules, allow
    for i, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        col, sep, rule = line.partition(":")
        if not sep or not col.strip() or "->" not in rule:
            raise DataError(f"line {i} of rules file {str(path)!r} must read 'COLUMN: CONDITION -> CONSEQUENCE'. Got {line!r}.")
        rules.setdefault(col.strip().strip("`"), []).append(rule.strip())
    return rules, allow


def check_rules(frame: Any, rules: Mapping[str, Any], *, missing_values: Any = None) -> list[dict[str, Any]]:
    """For each rule: the records of ``frame`` that meet its condition and the records that break it.

    Columns are read as :meth:`SequentialSynthesizer.fit` reads them (numbers in text columns are
    numbers, ``missing_values`` are missing).

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"age": [10, 30, 12], "marital": ["single", "married", "married"]})
    >>> [(c["meets_condition"], c["broken"], c["rows"]) for c in check_rules(f, {"marital": "age < 16 -> 'single'"})]
    [(2, 1, [3])]
    """
    from ._columns import encode

    parsed = parse_rules(rules)
    names = sorted({r.target for r in parsed} | {c for r in parsed for c in r.condition_columns | r.consequence_columns})
    missing = [c for c in names if c not in frame.columns]
    if missing:
        raise DataError(f"the rules name {missing[0]!r}, which is not a column of the data ({list(map(str, frame.columns))}).")
    columns, arrays, _ = encode(frame, names, missing_values=missing_values)
    n = len(frame)
    out = []
    for r in parsed:
        c = compile_rule(r, columns)
        cond = np.broadcast_to(c.condition(arrays), (n,))
        broken = np.flatnonzero(~c.holds(arrays, n))
        out.append({"rule": str(r), "meets_condition": int(cond.sum()), "broken": int(broken.size), "rows": [int(i) + 1 for i in broken[:5]]})
    return out

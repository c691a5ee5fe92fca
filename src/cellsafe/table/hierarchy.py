"""Hierarchies of a variable's categories: named aggregates at named levels.

A :class:`Hierarchy` describes how a variable's categories (the *leaves*, the inner categories of a
table) are grouped into published aggregates: municipalities into districts into regions, NACE codes
into sections.  Each aggregate has a **code** and is a set of leaves; aggregates are arranged in
named **levels** (``'region'``, ``'district'``), which a publication's formula names like variables
(``region*sex + district*age``).  The leaves themselves are the variable's own level.

Aggregates need not nest: a level may hold any named groups of leaves, overlapping or not
(several hierarchies of one variable are several sets of levels, see :meth:`Hierarchy.combine`).
A leaf that belongs to no aggregate of a level is simply absent from that level's cells.

Hierarchies are built from a parent-child table (:meth:`Hierarchy.from_parent_child`, also
Statistics Norway's ``mapsFrom``/``mapsTo``/``sign`` frames), from level columns
(:meth:`Hierarchy.from_levels`), from code positions (:meth:`Hierarchy.from_positions`, tau-Argus's
"digits 1-2 are the region"), from a dict of groups (:meth:`Hierarchy.from_groups`), or from a
tau-Argus ``.hrc`` file (:meth:`Hierarchy.read_hrc`, one code per line, one leading ``@`` per level
of depth).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .._frames import as_pandas, pd
from ..exceptions import DataError, InvalidArgumentError
from ..io import read_hrc, write_hrc

__all__ = ["Hierarchy"]


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """Named aggregates of a variable's categories, in named levels.

    Build one with a ``from_*`` constructor; the constructor takes the finished parts.

    Attributes
    ----------
    leaves : tuple of str
        The inner categories (as strings), in the order given.
    levels : dict of str to tuple of str
        For each level (top first), the codes of its aggregates.
    groups : dict of str to tuple of int
        For each aggregate code, the sorted positions of its leaves in :attr:`leaves`.

    Examples
    --------
    >>> h = Hierarchy.from_positions(["0101", "0102", "0201"], {"region": 2})
    >>> h.levels
    {'region': ('01', '02')}
    >>> h.members("01")
    ('0101', '0102')
    """

    leaves: tuple[str, ...]
    levels: Mapping[str, tuple[str, ...]]
    groups: Mapping[str, tuple[int, ...]] = field(repr=False)

    def __post_init__(self) -> None:
        leaves = tuple(str(x) for x in self.leaves)
        object.__setattr__(self, "leaves", leaves)
        if len(set(leaves)) != len(leaves):
            raise DataError("a hierarchy lists a leaf more than once.")
        seen: set[str] = set()
        for level, codes in self.levels.items():
            if not isinstance(level, str) or not level:
                raise InvalidArgumentError(f"level names must be non-empty strings. Got {level!r}.")
            for c in codes:
                if c in seen:
                    raise DataError(f"aggregate code {c!r} appears in more than one level (or twice in level {level!r}).")
                if c not in self.groups:
                    raise DataError(f"level {level!r} names aggregate {c!r}, which has no leaves.")
                seen.add(c)
        n = len(leaves)
        for c, pos in self.groups.items():
            if len(pos) == 0:
                raise DataError(f"aggregate {c!r} of the hierarchy has no leaves.")
            if min(pos) < 0 or max(pos) >= n:
                raise AssertionError("leaf positions out of range")

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_groups(cls, groups: Mapping[str, Iterable[Any]], leaves: Iterable[Any] | None = None, *, level: str = "group") -> "Hierarchy":
        """One level of named, possibly overlapping groups of leaves.

        Parameters
        ----------
        groups : dict
            Aggregate code -> its leaves.
        leaves : iterable, optional
            All inner categories (default: every leaf named in a group, in order of appearance).
        level : str, default 'group'
            The level's name (what a formula calls it).

        Examples
        --------
        >>> h = Hierarchy.from_groups({"young": ["0-15", "16-24"], "working": ["16-24", "25-66"]}, level="agegroup")
        >>> h.members("working")
        ('16-24', '25-66')
        """
        named = {str(k): [str(x) for x in v] for k, v in groups.items()}
        if leaves is None:
            order: dict[str, None] = {}
            for v in named.values():
                order.update(dict.fromkeys(v))
            leaf_list = list(order)
        else:
            leaf_list = [str(x) for x in leaves]
        pos = {x: i for i, x in enumerate(leaf_list)}
        out = {}
        for code, members in named.items():
            unknown = [m for m in members if m not in pos]
            if unknown:
                raise DataError(f"group {code!r} names {unknown[0]!r}, which is not one of the leaves.")
            out[code] = tuple(sorted({pos[m] for m in members}))
        return cls(tuple(leaf_list), {level: tuple(named)}, out)

    @classmethod
    def from_parent_child(
        cls,
        frame: Any,
        *,
        child: str = "code",
        parent: str = "parent",
        level_names: Sequence[str] | None = None,
        total: Any = "Total",
    ) -> "Hierarchy":
        """A tree from (child, parent) rows; codes that are nobody's parent are the leaves.

        Parameters
        ----------
        frame : DataFrame or sequence of (child, parent) pairs
            A missing or empty parent (or ``total``) marks a top-level code.
        child, parent : str
            Column names.
        level_names : sequence of str, optional
            Names of the aggregate levels from the top (default ``level1``, ``level2``, ...).
        total : str or None, default 'Total'
            The code of the grand total: its row (if any) is dropped and the codes under it are the
            top level (the grand total is published anyway).  None: no code is the grand total.

        Notes
        -----
        An aggregate's level is its depth below the top; its leaves are every leaf below it.
        Leaves at different depths are allowed (a leaf is then in no aggregate of the deeper levels).

        Where the rows list the top level themselves (a row with an empty parent, or under
        ``total``), every parent must be one of the codes listed: a parent that is not, such as a
        typo, is an error naming it, never a new one-child aggregate.  Where no row is at the top
        (only leaves and lower aggregates are listed), the parents never listed as codes are the
        top level.

        Examples
        --------
        >>> pairs = [("N", None), ("N1", "N"), ("N2", "N"), ("S1", None)]
        >>> Hierarchy.from_parent_child(pairs).levels
        {'level1': ('N',)}

        A root row for the grand total is accepted; a parent that is not listed is refused:

        >>> rows = [("Total", None), ("N", "Total"), ("S", "Total"), ("N1", "N"), ("S1", "S")]
        >>> Hierarchy.from_parent_child(rows, level_names=["region"]).levels
        {'region': ('N', 'S')}
        >>> Hierarchy.from_parent_child(rows + [("N2", "Nn")])
        Traceback (most recent call last):
        ...
        cellsafe.exceptions.DataError: the hierarchy names parent 'Nn' (of 'N2'), which is not one of its codes; did you mean 'N'? Every parent must be listed as a code when the top-level codes are (an empty parent or 'Total').
        """
        if isinstance(frame, (list, tuple)):
            df = pd.DataFrame(list(frame), columns=[child, parent])
        else:
            df = as_pandas(frame, "hierarchy")
        for col in (child, parent):
            if col not in df.columns:
                raise DataError(f"the hierarchy frame lacks column {col!r}; it has {list(df.columns)}.")
        total = None if total is None else str(total)
        kids = [str(x) for x in df[child]]
        parents = [None if _blank(p) or str(p) == total else str(p) for p in df[parent]]
        if total is not None:
            bad = [p for k, p in zip(kids, parents) if k == total and p is not None]
            if bad:
                raise DataError(
                    f"the hierarchy gives the grand total {total!r} the parent {bad[0]!r}; the total is the root "
                    "(an empty parent), or pass another total code."
                )
            keep = [k != total for k in kids]
            kids = [k for k, ok in zip(kids, keep) if ok]
            parents = [p for p, ok in zip(parents, keep) if ok]
        _check_parents_listed(kids, parents, total)
        return cls._from_tree(kids, parents, level_names)

    @classmethod
    def from_ssb(cls, frame: Any, *, level_names: Sequence[str] | None = None) -> "Hierarchy":
        """A tree from a Statistics Norway hierarchy frame (``mapsFrom``, ``mapsTo``, ``sign``).

        The top code (a ``mapsTo`` that maps nowhere and has more than one child, or the only one) is
        the grand total and is dropped; signs must be ``+`` (or 1): differences are not aggregates.
        """
        df = as_pandas(frame, "hierarchy")
        for col in ("mapsFrom", "mapsTo"):
            if col not in df.columns:
                raise DataError(f"an SSB hierarchy frame needs columns 'mapsFrom', 'mapsTo' (and 'sign'); it lacks {col!r}.")
        if "sign" in df.columns:
            bad = [s for s in df["sign"] if str(s).strip() not in ("+", "1", "1.0")]
            if bad:
                raise DataError(f"the hierarchy has sign {bad[0]!r}; only '+' (additive) hierarchies are supported.")
        frm = [str(x) for x in df["mapsFrom"]]
        to = [str(x) for x in df["mapsTo"]]
        roots = sorted(set(to) - set(frm))
        kids, parents = list(frm), [None if t in roots else t for t in to]
        return cls._from_tree(kids, parents, level_names)

    @classmethod
    def read_hrc(
        cls, path: Any, *, level_names: Sequence[str] | None = None, marker: str = "@", total: str | None = "Total"
    ) -> "Hierarchy":
        """Read a tau-Argus hierarchy file: one code per line, a leading ``@`` per level of depth.

        A tau-Argus file does not list the grand total; a top-level line ``total`` (default
        ``'Total'``) with the others below it is accepted and dropped, as in :meth:`from_parent_child`.

        Examples
        --------
        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "geo.hrc")
        >>> _ = open(p, "w").write("N\\n@N1\\n@N2\\nS\\n@S1\\n")
        >>> Hierarchy.read_hrc(p, level_names=["region"]).levels
        {'region': ('N', 'S')}
        """
        codes, depths = read_hrc(path, marker=marker)
        parents: list[str | None] = []
        stack: list[str] = []
        for code, d in zip(codes, depths):
            if d > len(stack):
                raise DataError(f"{path}: code {code!r} is {d} level(s) deep but its parent is {len(stack) - 1} deep.")
            stack = stack[:d]
            parents.append(stack[-1] if stack else None)
            stack.append(code)
        if total is not None and str(total) in codes:
            at = codes.index(str(total))
            if depths[at] != 0:
                raise DataError(f"{path}: the grand total {total!r} is {depths[at]} level(s) deep; it can only be the top line.")
            keep = [i for i, c in enumerate(codes) if i != at]
            codes = [codes[i] for i in keep]
            parents = [None if parents[i] == str(total) else parents[i] for i in keep]
        return cls._from_tree(codes, parents, level_names)

    @classmethod
    def from_levels(cls, frame: Any, columns: Sequence[str]) -> "Hierarchy":
        """Levels from columns of a frame: the last column is the leaf, the others the levels (top first).

        Examples
        --------
        >>> df = pd.DataFrame({"region": ["N", "N", "S"], "municipality": ["a", "b", "c"]})
        >>> Hierarchy.from_levels(df, ["region", "municipality"]).members("N")
        ('a', 'b')
        """
        df = as_pandas(frame, "hierarchy")
        cols = list(columns)
        if len(cols) < 2:
            raise InvalidArgumentError("from_levels needs at least two columns: one level and the leaves (last).")
        for c in cols:
            if c not in df.columns:
                raise DataError(f"the hierarchy frame lacks column {c!r}; it has {list(df.columns)}.")
        sub = df[cols].astype(str).drop_duplicates()
        leaf_col = sub[cols[-1]]
        if leaf_col.duplicated().any():
            dup = leaf_col[leaf_col.duplicated()].iloc[0]
            raise DataError(f"leaf {dup!r} of column {cols[-1]!r} has more than one parent.")
        leaves = list(leaf_col)
        levels: dict[str, tuple[str, ...]] = {}
        groups: dict[str, tuple[int, ...]] = {}
        for c in cols[:-1]:
            codes = list(dict.fromkeys(sub[c]))
            levels[c] = tuple(codes)
            vals = sub[c].to_numpy()
            for code in codes:
                groups[code] = tuple(np.flatnonzero(vals == code).tolist())
        return cls(tuple(leaves), levels, groups)

    @classmethod
    def from_positions(cls, codes: Iterable[Any], levels: Mapping[str, int]) -> "Hierarchy":
        """Aggregates from the first characters of the leaf codes (tau-Argus's code positions).

        Parameters
        ----------
        codes : iterable of str
            The leaf codes, all at least as long as the longest prefix.
        levels : dict of str to int
            Level name -> prefix length, e.g. ``{"region": 2, "district": 4}``.
        """
        leaves = [str(c) for c in codes]
        out_levels: dict[str, tuple[str, ...]] = {}
        groups: dict[str, tuple[int, ...]] = {}
        for name, width in sorted(levels.items(), key=lambda kv: kv[1]):
            if not isinstance(width, (int, np.integer)) or width < 1:
                raise InvalidArgumentError(f"level {name!r} must be a positive prefix length. Got {width!r}.")
            short = [c for c in leaves if len(c) < width]
            if short:
                raise DataError(f"code {short[0]!r} is shorter than the {width} characters of level {name!r}.")
            prefix = np.array([c[:width] for c in leaves], dtype=object)
            # the leaves of each prefix, in one sort (prefixes in the order they first appear)
            uniq, first, inverse = np.unique(prefix, return_index=True, return_inverse=True)
            inverse = inverse.ravel()
            members = np.argsort(inverse, kind="stable")
            sizes = np.bincount(inverse, minlength=len(uniq))
            ends = np.cumsum(sizes)
            names = []
            for g in np.argsort(first, kind="stable"):
                p = str(uniq[g])
                if p in groups:
                    raise DataError(f"code {p!r} of level {name!r} is also a code of another level; use distinct code lengths.")
                groups[p] = tuple(members[ends[g] - sizes[g]:ends[g]].tolist())
                names.append(p)
            out_levels[name] = tuple(names)
        return cls(tuple(leaves), out_levels, groups)

    @classmethod
    def _from_tree(cls, kids: list[str], parents: list[str | None], level_names: Sequence[str] | None) -> "Hierarchy":
        if len(set(kids)) != len(kids):
            dup = next(k for i, k in enumerate(kids) if k in kids[:i])
            raise DataError(f"code {dup!r} appears more than once in the hierarchy (a code has one parent).")
        parent_of = dict(zip(kids, parents))
        for p in parents:
            if p is not None and p not in parent_of:
                parent_of[p] = None  # a parent never listed as a child: top level
        has_kids = {p for p in parent_of.values() if p is not None}
        leaves = [k for k in parent_of if k not in has_kids]
        depth: dict[str, int] = {}

        def depth_of(code: str) -> int:
            chain = []
            c: str | None = code
            while c is not None and c not in depth:
                if c in chain:
                    raise DataError(f"the hierarchy has a cycle through code {c!r}.")
                chain.append(c)
                c = parent_of[c]
            base = -1 if c is None else depth[c]
            for x in reversed(chain):
                base += 1
                depth[x] = base
            return depth[code]

        for code in parent_of:  # raises on a cycle before the walk up from the leaves below could loop forever
            depth_of(code)
        pos = {x: i for i, x in enumerate(leaves)}
        members: dict[str, list[int]] = {a: [] for a in parent_of if a in has_kids}
        for leaf in leaves:
            c = parent_of[leaf]
            while c is not None:
                members[c].append(pos[leaf])
                c = parent_of[c]
        aggregates = [a for a in parent_of if a in has_kids]
        n_levels = 1 + max((depth_of(a) for a in aggregates), default=-1)
        names = list(level_names) if level_names is not None else [f"level{d + 1}" for d in range(n_levels)]
        if len(names) != n_levels:
            raise InvalidArgumentError(f"the hierarchy has {n_levels} aggregate level(s); got {len(names)} level name(s): {names}.")
        levels = {names[d]: tuple(a for a in aggregates if depth_of(a) == d) for d in range(n_levels)}
        return cls(tuple(leaves), levels, {a: tuple(sorted(members[a])) for a in aggregates})

    @staticmethod
    def combine(*hierarchies: "Hierarchy") -> "Hierarchy":
        """Several hierarchies of the same leaves as one (their levels side by side; names must differ)."""
        if not hierarchies:
            raise InvalidArgumentError("combine needs at least one hierarchy.")
        first = hierarchies[0]
        levels: dict[str, tuple[str, ...]] = {}
        groups: dict[str, tuple[int, ...]] = {}
        for h in hierarchies:
            if set(h.leaves) != set(first.leaves):
                raise DataError("hierarchies of one variable must have the same leaves.")
            remap = np.array([first.leaves.index(x) for x in h.leaves])
            for name, codes in h.levels.items():
                if name in levels:
                    raise DataError(f"two hierarchies both have a level {name!r}; rename one.")
                levels[name] = codes
                for c in codes:
                    if c in groups:
                        raise DataError(f"two hierarchies both have aggregate code {c!r}; codes must be unique per variable.")
                    groups[c] = tuple(sorted(remap[list(h.groups[c])].tolist()))
        return Hierarchy(first.leaves, levels, groups)

    # ------------------------------------------------------------------ views
    def members(self, code: str) -> tuple[str, ...]:
        """The leaves of aggregate ``code``."""
        if code not in self.groups:
            raise InvalidArgumentError(f"{code!r} is not an aggregate of this hierarchy; its codes are {list(self.groups)[:10]}.")
        return tuple(self.leaves[i] for i in self.groups[code])

    def level_of(self, code: str) -> str:
        return next(name for name, codes in self.levels.items() if code in codes)

    def membership(self, level: str, categories: Sequence[Any] | None = None) -> Any:
        """The 0/1 matrix categories x codes of ``level`` (rows in the order of ``categories``).

        ``categories`` (default: the leaves) are matched to the leaves as strings; a category the
        hierarchy does not know raises DataError.
        """
        if level not in self.levels:
            raise InvalidArgumentError(f"the hierarchy has no level {level!r}; its levels are {list(self.levels)}.")
        cats = self.leaves if categories is None else tuple(str(c) for c in categories)
        pos = {x: i for i, x in enumerate(self.leaves)}
        unknown = [c for c in cats if c not in pos]
        if unknown:
            raise DataError(
                f"category {unknown[0]!r} is not a leaf of the hierarchy (leaves: {list(self.leaves)[:8]}...); "
                "every inner category must appear in the hierarchy."
            )
        row_of = np.full(len(self.leaves), -1, dtype=np.int64)
        row_of[[pos[c] for c in cats]] = np.arange(len(cats))
        codes = self.levels[level]
        rows = np.concatenate([row_of[list(self.groups[c])] for c in codes])
        cols = np.repeat(np.arange(len(codes)), [len(self.groups[c]) for c in codes])
        keep = rows >= 0
        import scipy.sparse as sp

        return sp.csr_matrix((np.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=(len(cats), len(codes)))

    def to_parent_child(self, *, child: str = "code", parent: str = "parent") -> pd.DataFrame:
        """(code, parent) rows of a nested hierarchy: each leaf and aggregate with its smallest containing aggregate."""
        rows = []
        for code in [c for codes in self.levels.values() for c in codes] + list(self.leaves):
            rows.append((code, self._parent(code)))
        return pd.DataFrame(rows, columns=[child, parent])

    def to_ssb(self) -> pd.DataFrame:
        """The hierarchy as a Statistics Norway frame: ``mapsFrom``, ``mapsTo``, ``sign``, ``level``.

        The top codes map to ``'Total'``; ``level`` is 1 for the leaves' rows, counting up.
        """
        pc = self.to_parent_child()
        parents = dict(zip(pc["code"], pc["parent"]))
        height: dict[str, int] = {}

        def h(code: str) -> int:  # steps from the leaves up to this code
            if code not in height:
                kids = [k for k, p in parents.items() if p == code]
                height[code] = 1 + max(map(h, kids)) if kids else 0
            return height[code]

        return pd.DataFrame(
            {
                "mapsFrom": pc["code"],
                "mapsTo": pc["parent"].fillna("Total"),
                "sign": "+",
                "level": [h(c) + 1 for c in pc["code"]],
            }
        )

    def write_hrc(self, path: Any, *, marker: str = "@") -> Any:
        """Write a nested hierarchy as a tau-Argus ``.hrc`` file (leaves in no aggregate are top-level lines)."""
        codes: list[str] = []
        depths: list[int] = []
        pc = self.to_parent_child()
        kids: dict[str | None, list[str]] = {}
        for code, par in zip(pc["code"], pc["parent"]):
            kids.setdefault(None if _blank(par) else par, []).append(code)

        def walk(node: str | None, d: int) -> None:
            for k in kids.get(node, []):
                codes.append(k)
                depths.append(d)
                walk(k, d + 1)

        walk(None, 0)
        return write_hrc(path, codes, depths, marker=marker)

    def _parent(self, code: str) -> str | None:
        """The smallest aggregate strictly above ``code``: a superset of its leaves, in a shallower level
        when the sets are equal (ties to the deepest level); DataError when that is ambiguous."""
        depth = {c: d for d, codes in enumerate(self.levels.values()) for c in codes}
        mine = set(self.groups[code]) if code in self.groups else {self.leaves.index(code)}
        my_depth = depth.get(code, len(self.levels))
        best, best_key = None, None
        for other, pos in self.groups.items():
            s = set(pos)
            if other == code or not mine <= s or (len(s) == len(mine) and depth[other] >= my_depth):
                continue
            key = (len(s), -depth[other])
            if best_key is not None and key == best_key:
                raise DataError(f"code {code!r} lies in both {best!r} and {other!r}; the hierarchy is not a tree.")
            if best_key is None or key < best_key:
                best, best_key = other, key
        return best

    @property
    def codes(self) -> tuple[str, ...]:
        """Every aggregate code, level by level."""
        return tuple(c for codes in self.levels.values() for c in codes)

    def __repr__(self) -> str:
        lv = ", ".join(f"{k}: {len(v)}" for k, v in self.levels.items())
        return f"Hierarchy({len(self.leaves)} leaves; {lv})"


def _check_parents_listed(kids: list[str], parents: list[str | None], total: str | None) -> None:
    """Where some row is at the top (no parent), every parent must be a listed code: name the first that is not."""
    if all(p is not None for p in parents):
        return  # the top level is not listed: parents never listed are the top-level codes
    listed = set(kids)
    for kid, par in zip(kids, parents):
        if par is not None and par not in listed:
            import difflib

            close = difflib.get_close_matches(par, sorted(listed), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else "."
            root = "an empty parent" + (f" or {total!r}" if total is not None else "")
            raise DataError(
                f"the hierarchy names parent {par!r} (of {kid!r}), which is not one of its codes{hint} Every parent "
                f"must be listed as a code when the top-level codes are ({root})."
            )


def _blank(x: Any) -> bool:
    return x is None or (isinstance(x, float) and np.isnan(x)) or (isinstance(x, str) and x.strip() == "")

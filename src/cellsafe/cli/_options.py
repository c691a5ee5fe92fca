"""Option declarations shared by the commands, built from the library's parameter declarations.

``--help`` and argument errors must come at once: everything here reads only argparse and the
catalog of declared parameters (:mod:`cellsafe._catalog`), never the modules that compute.  An
option for a declared parameter takes its type and its help's default from the declaration and stays
None unless given, so the library applies its own default: the library's defaults are the only ones.
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence

from .. import _catalog
from .._params import REQUIRED, Param
from ..exceptions import InvalidArgumentError

__all__ = [
    "Renamed",
    "flag",
    "default_text",
    "param_help",
    "add_param_option",
    "given_params",
    "family_names",
    "family_params",
    "cellwise_names",
    "tunable_ranges",
    "add_distribution_options",
    "mechanism_from_args",
    "distribution_from_args",
    "synthesizer_from_args",
]


class Renamed(argparse.Action):
    """A former option name: refused with an error naming the option that replaces it.

    ``p.add_argument("--epsilon", action=Renamed, new="--flex-weights")``.
    """

    def __init__(self, option_strings: Sequence[str], dest: str, new: str, why: str = "", **kwargs: Any) -> None:
        kwargs.setdefault("help", argparse.SUPPRESS)
        kwargs.setdefault("nargs", "?")
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, **kwargs)
        self.new = new
        self.why = why or ("epsilon means a privacy loss everywhere in cellsafe" if "epsilon" in dest else "")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        why = f" ({self.why})" if self.why else ""
        raise argparse.ArgumentError(self, f"{option_string} is now called {self.new}{why}.")


# ---------------------------------------------------------------------- options from declarations
def flag(name: str) -> str:
    """The option of a declared parameter: ``top_k`` -> ``--top-k``, ``D`` -> ``--D``."""
    return "--" + name.replace("_", "-")


def default_text(param: Param) -> str:
    """The declared default as help shows it (``default 0``); empty when there is none."""
    value = param.default
    if value is REQUIRED or value is None:
        return ""
    if isinstance(value, bool):
        return f"default {'on' if value else 'off'}"
    if isinstance(value, float):
        return f"default {value:g}"
    if isinstance(value, (tuple, list)):
        return "default " + ",".join(map(str, value))
    return f"default {value}"


def param_help(param: Param, text: str | None = None) -> str:
    """``text`` (or the declaration's doc) with the declared default."""
    words = param.doc if text is None else text
    default = default_text(param)
    return f"{words} ({default})" if default else words


def _declaration(kind: str, name: str, param: str) -> Param:
    return {p.name: p for p in _catalog.declared(kind, name)}[param]


def add_param_option(
    group: Any, kind: str, name: str, param: str, *, text: str | None = None, metavar: str | None = None,
    option: str | None = None, **extra: Any,
) -> None:
    """An option for the declared parameter ``param`` of the catalog entry ``kind``/``name``.

    Its type comes from the declaration, its help from ``text`` (or the declaration's doc) with the
    declared default, and its value is None unless given.
    """
    p = _declaration(kind, name, param)
    help_ = param_help(p, text).replace("%", "%%")
    if p.kind == "choice" and set(p.choices) <= {True, False, None}:
        group.add_argument(option or flag(param), action="store_const", const=True, default=None, help=help_)
        return
    types: dict[str, Any] = {"real": float, "integer": int}
    if p.kind == "choice":
        extra.setdefault("choices", p.choices)
    group.add_argument(option or flag(param), type=types.get(p.kind, str), default=None,
                       metavar=None if "choices" in extra and metavar is None else metavar or param.upper(), help=help_,
                       **extra)


def given_params(args: argparse.Namespace, params: Sequence[str]) -> dict[str, Any]:
    """The options among ``params`` given on the command line (None means not given)."""
    return {k: getattr(args, k) for k in params if getattr(args, k, None) is not None}


def family_names() -> tuple[str, ...]:
    """The count families, in listing order (nothing imported)."""
    return tuple(_catalog.entries("distribution"))


def family_params() -> dict[str, list[str]]:
    """Each parameter of any count family, with the families that take it: ``{'sigma': ['nbi', 'pig', 'gaf'], ...}``."""
    out: dict[str, list[str]] = {}
    for name, e in _catalog.entries("distribution").items():
        for p in e.params or ():
            out.setdefault(p.name, []).append(name)
    return out


def cellwise_names() -> tuple[str, ...]:
    """Every name a cell-wise spec may start with: the families, then the cell-wise mechanisms."""
    return family_names() + tuple(
        n for n, e in _catalog.entries("mechanism").items() if e.cellwise and n != "saturated"
    )


def tunable_ranges() -> str:
    """The declared scan range of every tunable parameter of a cell-wise spec, for help text:
    ``alpha 0..10 (saturated); ...; epsilon 0.01..10 (geometric); V 0.05..25 (ckm)``."""
    ranges: dict[str, dict[Any, list[str]]] = {}

    def note(owner: str, params: Any) -> None:
        for p in params or ():
            if p.tunable:
                ranges.setdefault(p.name, {}).setdefault(p.scan, []).append(owner)

    note("saturated", _catalog.declared("mechanism", "saturated"))
    for name, e in _catalog.entries("distribution").items():
        note(name, e.params)
    for name, e in _catalog.entries("mechanism").items():
        if e.cellwise and name != "saturated":
            note(name, _catalog.declared("part", "ptable") if name == "ckm" else e.params)
    parts = []
    for param, by_range in ranges.items():
        spans = [f"{lo:g}..{hi:g} ({', '.join(owners)})" for (lo, hi), owners in by_range.items()]
        parts.append(f"{param} {', '.join(spans)}")
    return "; ".join(parts)


# ---------------------------------------------------------------------- the saturated synthesizer's options
_SATURATED_OWN = ("alpha", "zeros_to_ones")


def add_distribution_options(p: argparse.ArgumentParser, *, required: bool = True, mechanism: bool = False) -> None:
    """--distribution and the parameters of the count families and of saturated synthesis (--sigma, --nu,
    --alpha, --zeros-to-ones...), from their declarations.

    With ``mechanism``, also ``--mechanism SPEC`` for any registered cell-wise mechanism, as an
    alternative to --distribution.
    """
    g = p.add_argument_group("mechanism")
    families = _catalog.entries("distribution")
    g.add_argument(
        "--distribution",
        required=required and not mechanism,
        type=str.lower,
        choices=tuple(families),
        help="noise family: " + ", ".join(f"{n} ({e.title})" if e.title else n for n, e in families.items()),
    )
    if mechanism:
        g.add_argument(
            "--mechanism",
            metavar="SPEC",
            default=None,
            help="instead of --distribution: any cell-wise mechanism as NAME:PARAM=VALUE,... e.g. "
            "'nbi:sigma=1,alpha=0.01', 'ckm:D=5,V=3,js=2', 'geometric:epsilon=1' (names: "
            + ", ".join(cellwise_names()) + ")",
        )
    for name, owners in family_params().items():
        decl = _declaration("distribution", owners[0], name)
        takes = ", ".join(owners)
        g.add_argument(flag(name), type=float, default=None, metavar=name.upper(),
                       help=param_help(decl, f"{decl.doc} ({takes})").replace("%", "%%"))
    add_param_option(g, "mechanism", "saturated", "alpha", text="pseudocount: the mean of random zeros")
    add_param_option(g, "mechanism", "saturated", "zeros_to_ones", metavar="P",
                     text="instead of --alpha: each random zero becomes 1 with probability P")


def _family_options_given(args: argparse.Namespace) -> list[str]:
    return [flag(k) for k in (*family_params(), *_SATURATED_OWN) if getattr(args, k, None) is not None]


def mechanism_from_args(args: argparse.Namespace) -> Any:
    """The mechanism of --mechanism SPEC, or the saturated synthesizer of --distribution and its options."""
    spec = getattr(args, "mechanism", None)
    if spec is None:
        if args.distribution is None:
            raise InvalidArgumentError("give --distribution NAME (with --sigma ...) or --mechanism SPEC.")
        return synthesizer_from_args(args)
    given = (["--distribution"] if args.distribution is not None else []) + _family_options_given(args)
    if given:
        raise InvalidArgumentError(
            f"--mechanism carries all the parameters; drop {', '.join(given)} (write e.g. 'nbi:sigma=1,alpha=0.01')."
        )
    from ..mechanisms import CellwiseMechanism, make_mechanism

    mech = make_mechanism(spec)
    if not isinstance(mech, CellwiseMechanism):
        raise InvalidArgumentError(
            f"--mechanism {spec!r} is not a cell-wise mechanism; a priori assessment and tuning need transition "
            "probabilities P(k | j)."
        )
    return mech


def distribution_from_args(args: argparse.Namespace) -> Any:
    """The count distribution named by --distribution and its parameters' options."""
    name = args.distribution
    entry = _catalog.entry("distribution", name)
    own = {p.name: p for p in entry.params or ()}
    given = given_params(args, list(family_params()))
    for key in given:
        if key not in own:
            takers = [n for n, e in _catalog.entries("distribution").items() if key in {p.name for p in e.params or ()}]
            raise InvalidArgumentError(
                f"{flag(key)} does not apply to --distribution {name}; drop it or choose {' or '.join(takers)}."
            )
    for key, p in own.items():
        if p.default is REQUIRED and key not in given:
            raise InvalidArgumentError(
                f"--distribution {name} needs {flag(key)} ({p.doc}), for example {flag(key)} 1."
            )
    from ..distributions import make_distribution

    return make_distribution(name, **given)


def synthesizer_from_args(args: argparse.Namespace) -> Any:
    """A SaturatedSynthesizer from the mechanism options (the library's defaults for what is not given)."""
    from ..mechanisms.saturated import SaturatedSynthesizer

    return SaturatedSynthesizer(distribution_from_args(args), **given_params(args, _SATURATED_OWN))

"""Protection mechanisms: synthesizers and perturbations, one module per algorithm.

- saturated synthesis (003, 000): :class:`SaturatedSynthesizer`
- smoothed synthesis from a log-linear fit: :class:`LogLinearSynthesizer`
- differentially private synthesizers (004): :class:`MultinomialDirichletSynthesizer`,
  :class:`PoissonGammaSynthesizer` (and the shortcut :class:`PoissonGammaMultinomialSynthesizer`,
  which carries no epsilon)
- published tables (001): :class:`PTable`, :class:`CellKeyMethod`, :class:`SmallCountRounding`,
  :class:`CellSuppression` (primary rules, secondary suppression by Gaussian elimination),
  linked tables and earlier releases protected together: :func:`protect_linked`
- magnitude tables: :class:`CellKeyMagnitude` with a :class:`MagnitudePTable` (cellKey's flex function)
- differentially private noise per cell: :class:`GeometricNoise`, :class:`DiscreteGaussianNoise`;
  consistent DP counts at every level of a hierarchy: :class:`TopDownNoise`
"""

from typing import Any

# Every module loads on first use (PEP 562): a command that needs the cell key method does not
# import the synthesizers.  The registry (cellsafe._catalog) knows where each registered class lives.
_MODULES = {
    "_base": ("Block", "CellwiseMechanism", "Mechanism", "table_blocks"),
    "_dp": ("DPMechanism",),
    "cellkey": ("CellKeyMethod",),
    "cellkey_magnitude": ("CellKeyMagnitude", "flex_multiplier"),
    "dirichlet": ("MultinomialDirichletSynthesizer",),
    "loglinear": ("LogLinearSynthesizer",),
    "marginal": ("AIMSynthesizer", "MarginalRelease", "MarginalSource", "MarginalSynthesizer", "MSTSynthesizer", "marginal_source"),
    "magnitude_ptable": ("MagnitudePTable",),
    "noise": ("DiscreteGaussianNoise", "GeometricNoise"),
    "poisson_gamma": ("PoissonGammaMultinomialSynthesizer", "PoissonGammaSynthesizer"),
    "ptable": ("PTable",),
    "rounding": ("SmallCountRounding", "round_small_counts"),
    "saturated": ("SaturatedSynthesizer",),
    "suppression": ("CellSuppression", "suppress_cells"),
    "topdown": ("TopDownNoise",),
    "linked": ("LinkedTable", "EarlierRelease", "LinkedRelease", "protect_linked", "read_earlier_release"),
    "_gauss": ("in_published_span",),
    "_intervals": (
        "cell_intervals", "protect_intervals", "protection_met", "requirement_targets", "neighbourhood", "WHOLE_SYSTEM_ROWS",
    ),
    "_intruder": ("Intruder", "touching"),
    "_sole_intervals": ("singleton_shortfalls",),
    "_listing": ("LISTINGS", "listed_publication", "frame_magnitude"),
    "_primary": ("Rule", "Requirements", "parse_rule", "primary_cells", "protection_requirements"),
    "_singleton": ("sole_contributors_of_counts",),
    "_spec": ("make_mechanism", "mechanism_family", "mechanism_names", "mechanism_record", "mechanism_spec", "parse_spec"),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    import importlib
    import importlib.util

    module = _HOME.get(name)
    if module is None:
        if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
            return importlib.import_module(f"{__name__}.{name}")  # a submodule, e.g. cellsafe.mechanisms.saturated
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "DPMechanism",
    "make_mechanism",
    "mechanism_family",
    "mechanism_names",
    "mechanism_spec",
    "mechanism_record",
    "parse_spec",
    "Block",
    "table_blocks",
    "CellKeyMethod",
    "CellKeyMagnitude",
    "MagnitudePTable",
    "flex_multiplier",
    "CellwiseMechanism",
    "DiscreteGaussianNoise",
    "GeometricNoise",
    "LogLinearSynthesizer",
    "MarginalSynthesizer",
    "MSTSynthesizer",
    "AIMSynthesizer",
    "MarginalRelease",
    "MarginalSource",
    "marginal_source",
    "Mechanism",
    "MultinomialDirichletSynthesizer",
    "PTable",
    "PoissonGammaMultinomialSynthesizer",
    "PoissonGammaSynthesizer",
    "SaturatedSynthesizer",
    "SmallCountRounding",
    "CellSuppression",
    "TopDownNoise",
    "suppress_cells",
    "LinkedTable",
    "EarlierRelease",
    "LinkedRelease",
    "protect_linked",
    "read_earlier_release",
    "Rule",
    "parse_rule",
    "primary_cells",
    "in_published_span",
    "cell_intervals",
    "protect_intervals",
    "protection_met",
    "requirement_targets",
    "singleton_shortfalls",
    "neighbourhood",
    "touching",
    "WHOLE_SYSTEM_ROWS",
    "Intruder",
    "LISTINGS",
    "listed_publication",
    "frame_magnitude",
    "Requirements",
    "protection_requirements",
    "sole_contributors_of_counts",
    "round_small_counts",
]

"""Microdata synthesizers: records, not tables.

:class:`SequentialSynthesizer` synthesizes mixed records (categories and numbers) one variable
after another (fully conditional specification, course 002 chapters 2 and 4), with one method per
variable: ``"sample"`` and ``"keep"`` (:mod:`~cellsafe.synthesis.sampling`), ``"normal"``,
``"logistic"`` and ``"multinomial"`` (:mod:`~cellsafe.synthesis.regression`), ``"polr"``
(:mod:`~cellsafe.synthesis.ordinal`), ``"pmm"`` and ``"normrank"``
(:mod:`~cellsafe.synthesis.numeric`) and ``"cart"``
(:mod:`~cellsafe.synthesis.cart`, needs scikit-learn: ``pip install 'cellsafe[ml]'``).
Missing values are modelled, rules (:func:`parse_rule`, :func:`read_rules`, :func:`check_rules`)
and category pairs never seen in the original hold in every record, and strata are synthesized
one at a time.  Its implicates go straight into :mod:`cellsafe.metrics.microdata`.
"""

from ._columns import Column
from ._rules import Rule, check_rules, parse_rule, read_rules
from ._sequential import METHODS, SequentialSynthesizer
from .cart import CartModel
from .numeric import NormRankModel, PmmModel
from .ordinal import PolrModel, fit_polr
from .regression import LogisticModel, MultinomialModel, NormalModel, fit_multinomial
from .sampling import KeptColumn, MarginalModel

__all__ = [
    "METHODS",
    "CartModel",
    "Column",
    "KeptColumn",
    "LogisticModel",
    "MarginalModel",
    "MultinomialModel",
    "NormRankModel",
    "NormalModel",
    "PmmModel",
    "PolrModel",
    "Rule",
    "SequentialSynthesizer",
    "check_rules",
    "fit_multinomial",
    "fit_polr",
    "parse_rule",
    "read_rules",
]

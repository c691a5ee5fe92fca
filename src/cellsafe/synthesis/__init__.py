"""Microdata synthesizers: records, not tables.

:class:`SequentialSynthesizer` synthesizes mixed records (categories and numbers) one variable
after another (fully conditional specification, course 002 chapters 2 and 4), with one method per
variable: ``"sample"`` and ``"keep"`` (:mod:`~cellsafe.synthesis.sampling`), ``"normal"``,
``"logistic"`` and ``"multinomial"`` (:mod:`~cellsafe.synthesis.regression`) and ``"cart"``
(:mod:`~cellsafe.synthesis.cart`, needs scikit-learn: ``pip install 'cellsafe[ml]'``).
Its implicates go straight into :mod:`cellsafe.metrics.microdata`.
"""

from ._columns import Column
from ._sequential import METHODS, SequentialSynthesizer
from .cart import CartModel
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
    "NormalModel",
    "SequentialSynthesizer",
    "fit_multinomial",
]

"""What every differentially private mechanism adds to the mechanism protocol.

* **One privacy-loss method**, :meth:`DPMechanism.privacy_loss`, returning the budget value
  (:class:`cellsafe.dp.PrivacyLoss`: epsilon, delta, and rho where zCDP applies) of one release
  (one implicate) under a stated neighbour relation, which a ledger composes.  The public method
  checks its arguments; subclasses implement ``_privacy_loss(relation, table, delta)``.
* **A public domain.**  ``sample`` and ``implicates`` take ``domain=``: the table is recoded onto
  the domain's public categories, and a table whose categories were read from the records is
  refused (:func:`cellsafe.table.public_table`).
"""

from __future__ import annotations

from typing import Any, Iterator

from .._privacy import REPLACE_ONE, PrivacyLoss, check_relation
from .._validation import check_real
from ..table import CountTable, public_table

__all__ = ["DPMechanism"]


class DPMechanism:
    """Mixin for mechanisms with a differential privacy guarantee (put it first among the bases)."""

    def privacy_loss(
        self, relation: str = REPLACE_ONE, *, table: CountTable | None = None, delta: float | None = None
    ) -> PrivacyLoss:
        """The privacy loss of one release (one implicate) under ``relation``.

        Parameters
        ----------
        relation : {"replace-one", "add-remove"}, default "replace-one"
            The neighbour relation of the ledger the release is charged to.
        table : CountTable, optional
            The table released, where the loss depends on its public total.
        delta : float, optional
            For a zCDP mechanism: also state (epsilon, delta)-DP at this delta (Canonne, Kamath
            and Steinke's conversion); epsilon is inf without it.

        Returns
        -------
        PrivacyLoss
            Under ``relation``; epsilon is inf where the mechanism gives no guarantee under it.
        """
        owner = f"{type(self).__name__}.privacy_loss"
        relation = check_relation(relation, owner)
        if delta is not None:
            delta = check_real(delta, "delta", owner, low=0.0, high=1.0, high_open=True)
        return self._privacy_loss(relation, table, delta)

    def _privacy_loss(self, relation: str, table: CountTable | None, delta: float | None) -> PrivacyLoss:
        raise NotImplementedError

    # ------------------------------------------------------------------ sampling on a public domain
    def sample(self, table: CountTable, m: int = 1, rng: Any = None, *, domain: Any = None, **kwargs: Any) -> list[Any]:
        """Draw ``m`` releases of ``table`` on its public domain (``domain=``, or the table's own public variables)."""
        return list(self.implicates(table, m, rng, domain=domain, **kwargs))

    def implicates(self, table: CountTable, m: int = 1, rng: Any = None, *, domain: Any = None,
                   **kwargs: Any) -> Iterator[Any]:
        """Implicates one at a time, on the public domain (see :meth:`sample`)."""
        table = public_table(table, domain, type(self).__name__)
        return super().implicates(table, m, rng, **kwargs)  # type: ignore[misc]

"""Protection mechanisms: synthesizers and perturbations, one module per algorithm."""

from ._base import CellwiseMechanism, Mechanism

__all__ = ["Mechanism", "CellwiseMechanism"]

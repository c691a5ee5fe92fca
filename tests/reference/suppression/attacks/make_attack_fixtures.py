"""The suppression patterns cellsafe published before the attacker was its audit (kept as fixtures).

Run from this folder with the cellsafe of this repository: ``python make_attack_fixtures.py``.  The
patterns are the ones the old defaults made (non-empty cells listed, no protection intervals for
counts, no singleton protection): ``list="nonzero", intervals=False, singletons=False``.

- ``us307_old.csv``: sdcTools UserSupport #307, A = 15, B = 5, C = 3 and their total 23 under
  ``freq<=10``: B and C withheld alone, so their sum 23 - 15 = 8 is published implicitly.
- ``two_singletons_old.csv``: a 3 x 2 table with two cells of 1 in one column under ``freq<=3``:
  the rectangle of four cells, in which each of the two persons computes the other's cell.
"""

from pathlib import Path

import numpy as np

from cellsafe import CountTable, Variable
from cellsafe.mechanisms import CellSuppression

HERE = Path(__file__).resolve().parent
OLD = dict(list="nonzero", intervals=False, singletons=False)

US307 = CountTable.from_dense(np.array([15, 5, 3]), [Variable("g", ["A", "B", "C"])])
TWO_SINGLETONS = CountTable.from_dense(
    np.array([[1, 5], [1, 6], [5, 7]]), [Variable("row", ["x", "y", "z"]), Variable("col", ["u", "v"])]
)

if __name__ == "__main__":
    [a] = CellSuppression("g", rules=["freq<=10"], **OLD).sample(US307)
    a.to_frame().to_csv(HERE / "us307_old.csv", index=False)
    [b] = CellSuppression("row*col", rules=["freq<=3"], **OLD).sample(TWO_SINGLETONS)
    b.to_frame().to_csv(HERE / "two_singletons_old.csv", index=False)

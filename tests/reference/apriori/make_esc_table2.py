"""Write esc_table2_cell_sizes.csv: the cell-size distribution of 003 Table 2 with a stand-in tail.

003 Table 2 gives the number of cells with each count 0..10 of the ESC substitute and only the
number of cells with 11 or more pupils (67,512 cells holding the remaining 7,468,867 pupils, a
mean of about 110.6).  The stand-in spreads those cells over 11, 12, ... as a geometric
distribution with that mean, rounded to whole cells, then moves a share of the cells of every
count up by one so that the number of cells and the grand total (8,190,870) are exact.

Metrics that do not depend on the stand-in: every tau3(k); tau2(k) for k <= 10; Poisson
tau1(k), tau4(k) for k <= 3 (cells >= 11 reach 0..3 with probability below 2e-4).  Metrics
that do: tau1 and tau4 under NBI/PIG with large sigma, squared error, total variance, Hellinger.

Run: python make_esc_table2.py  (writes the CSV beside this script)
"""

from pathlib import Path

import numpy as np

SMALL = [3_134_980, 119_917, 51_412, 25_952, 19_450, 13_076, 10_345, 7_947, 7_077, 5_809, 5_163]
N_LARGE, TOTAL = 67_512, 8_190_870


def main() -> None:
    large_total = TOTAL - sum(j * c for j, c in enumerate(SMALL))
    mean = large_total / N_LARGE
    r = (mean - 11) / (mean - 10)  # geometric on 11, 12, ... with this mean
    j = np.arange(11, 11 + 5000)
    cells = np.round(N_LARGE * (1 - r) * r ** (j - 11)).astype(np.int64)
    keep = cells > 0
    j, cells = j[keep], cells[keep]
    cells[0] += N_LARGE - cells.sum()
    gap = large_total - int(j @ cells)
    # close the rounding gap by moving a share of every group up (or down) by one
    step = 1 if gap > 0 else -1
    moved = np.floor(cells * abs(gap) / cells.sum()).astype(np.int64)
    rest = abs(gap) - int(moved.sum())
    moved[np.argsort(-cells, kind="stable")[:rest]] += 1
    values: dict[int, int] = {}
    for v, c, mv in zip(j.tolist(), cells.tolist(), moved.tolist()):
        values[v] = values.get(v, 0) + c - mv
        values[v + step] = values.get(v + step, 0) + mv
    rows = list(enumerate(SMALL)) + sorted((v, c) for v, c in values.items() if c > 0)
    assert sum(c for _, c in rows) == sum(SMALL) + N_LARGE == 3_468_640
    assert sum(v * c for v, c in rows) == TOTAL
    out = Path(__file__).with_name("esc_table2_cell_sizes.csv")
    out.write_text("count,cells\n" + "".join(f"{v},{c}\n" for v, c in rows))


if __name__ == "__main__":
    main()

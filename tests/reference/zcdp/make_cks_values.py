"""Reference values of the zCDP <-> (epsilon, delta) conversion, from the authors' own code.

Canonne, Kamath and Steinke (2020) published `cdp2adp.py` with their paper, in the repository
github.com/IBM/discrete-gaussian-differential-privacy (Apache-2.0).  This script imports that file
from a checkout (never copied here) and writes `cks_values.json`: `cdp_delta(rho, eps)`,
`cdp_eps(rho, delta)` and `cdp_rho(eps, delta)` on a grid, and the classical Bun-Steinke bound for
comparison.  Run: `CKS_SRC=/path/to/checkout python make_cks_values.py` (its cdp2adp.py imports
discretegauss.py, which imports matplotlib: have both importable).
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

sys.path.insert(0, os.environ["CKS_SRC"])
import cdp2adp  # noqa: E402

grid_delta = [(rho, eps) for rho in (1e-4, 0.001, 0.01, 0.1, 0.5, 1.0, 2.63, 10.0) for eps in (0.1, 0.5, 1.0, 3.0, 10.0, 20.0)]
grid_eps = [(rho, d) for rho in (1e-4, 0.001, 0.014973, 0.05, 0.5, 2.63, 15.29) for d in (1e-3, 1e-6, 1e-9, 1e-10)]
grid_rho = [(e, d) for e in (0.1, 0.3, 1.0, 3.0, 10.0, 17.14) for d in (1e-5, 1e-6, 1e-9, 1e-10)]
out = {
    "source": "cdp2adp.py of github.com/IBM/discrete-gaussian-differential-privacy (Canonne, Kamath, Steinke 2020)",
    "cdp_delta": [{"rho": r, "epsilon": e, "delta": cdp2adp.cdp_delta(r, e)} for r, e in grid_delta],
    "cdp_eps": [{"rho": r, "delta": d, "epsilon": cdp2adp.cdp_eps(r, d)} for r, d in grid_eps],
    "cdp_rho": [{"epsilon": e, "delta": d, "rho": cdp2adp.cdp_rho(e, d)} for e, d in grid_rho],
    "bun_steinke_rho": [
        {"epsilon": e, "delta": d, "rho": (math.sqrt(math.log(1 / d) + e) - math.sqrt(math.log(1 / d))) ** 2}
        for e, d in grid_rho
    ],
}
Path(__file__).with_name("cks_values.json").write_text(json.dumps(out, indent=1) + "\n")
print("wrote", len(grid_delta) + len(grid_eps) + len(grid_rho), "values")

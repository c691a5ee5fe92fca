"""Reference suppressions from pytauargus (tau-Argus on HiGHS) for the optimal-method test: a small hierarchical count
table (2 regions > 6 districts x sex x 4 age groups, 126 published cells), FREQ(4,100), OPT and MOD.

Run with pytauargus's Python (its own venv, e.g. /work/peers/tauargus/bin/python make_tauargus_opt.py); writes
tauargus_small_table.csv (the inner counts), tauargus_small.hrc and tauargus_small_{opt,mod}.csv (every cell with
tau-Argus's status: U primary, M secondary, S safe, E empty) and tauargus_versions.txt.
"""

import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytauargus
from pytauargus import protect

here = Path(__file__).resolve().parent
os.chdir(tempfile.mkdtemp())  # the engine writes its logs into the working folder
rng = np.random.default_rng(7)
districts = [f"R{r}D{d}" for r in (1, 2) for d in range(1, 4)]
ages = ["A0", "A1", "A2", "A3"]
n = 400
d = rng.choice(len(districts), n, p=[0.3, 0.2, 0.05, 0.25, 0.15, 0.05])
a = rng.choice(len(ages), n, p=rng.dirichlet(np.full(len(ages), 2.0)))
s = rng.choice(2, n)
rec = pd.DataFrame({"district": np.array(districts)[d], "sex": np.array(["F", "M"])[s], "age": np.array(ages)[a]})
rec.groupby(["district", "sex", "age"]).size().rename("n").reset_index().to_csv(here / "tauargus_small_table.csv", index=False)
hrc = here / "tauargus_small.hrc"
hrc.write_text("".join(f"R{r}\n" + "".join(f"@{x}\n" for x in districts if x.startswith(f"R{r}")) for r in (1, 2)))
rec["one"] = 1.0
for method, spec in (("opt", "OPT(1,600)"), ("mod", "MOD(1)")):
    res = protect(rec, ["district", "sex", "age"], response="one", safety_rules="FREQ(4,100)", suppress=spec,
                  hrc={"district": str(hrc)}, hierleadstring="@", workdir=tempfile.mkdtemp())
    df = res.tables[0].dataframe()
    df.rename(columns={"one": "count"})[["district", "sex", "age", "count", "status", "lower", "upper"]].to_csv(
        here / f"tauargus_small_{method}.csv", index=False)
(here / "tauargus_versions.txt").write_text(f"pytauargus {getattr(pytauargus, '__version__', '0.6.0')}\n")

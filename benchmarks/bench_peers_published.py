"""Benchmark: the published-table methods side by side with what statistics offices run instead.

1. Cell key method against the ONS ``cell_key_perturbation`` package (3.1.0, its 10-5 ptable, in its
   own venv: ``CELLSAFE_ONS_PYTHON`` or /work/peers/ons): 5e6 records with an integer record key
   0..255 over variables of 300 x 20 x 4 x 19 categories; a 2-way (area x eth) and a 4-way
   publication; on three inputs: text columns in Parquet (dictionary-encoded), the same records with
   integer-coded categories in Parquet, and a pandas frame handed to the library in the call (text
   columns, as pandas reads the first file); and a row added beside them: the same records saved from
   pandas categoricals, which pandas reads back as a frame of categorical columns.  Whole processes:
   ``cellsafe publish`` from the file, or a script reading the frame with pandas and calling
   ``CellKeyMethod.perturb`` (``ckm_frame.py``), against the ONS script (``peer_ons_ckm.py``:
   pandas reads the file, then the package's call); CPU seconds (the figure to compare on a shared
   machine), wall seconds and peak memory, with the in-call CPU seconds for the frame; outputs
   compared cell by cell.  cellsafe's modules are byte-compiled first, as an installed package's
   are (the ONS package's are, by pip), so that neither side pays for compiling its sources.
   Beside each row, its floor (``ckm_floor.py``): a process that only starts Python and reads the
   records, pyarrow reading the columns the publication needs for the Parquet rows, pandas reading the
   frame for the frame rows (both scripts do that before their call); each tool's CPU above it.
2. Small count rounding against R's SmallCountRounding (``PLSrounding``, base 3): 1e6 records over
   6 variables of 50 x 2 x 21 x 8 x 10 x 15 categories (chosen so that the publication
   ``(geo+sex+age+edu+occ+cob)^3`` has 71,052 non-empty cells, near the 70,825 of the reference run),
   from the same CSV, whole process; the numbers of published cells are compared.

A peer that is not installed is skipped with a message (``pip install cell_key_perturbation==3.1.0``;
R with SSBtools and SmallCountRounding, see the project's peers notes).  The data are generated
(seeded) in a temporary folder.

Run: ``python benchmarks/bench_peers_published.py [ckm] [scr]`` (both by default)
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import measure_process, run_process

HERE = Path(__file__).resolve().parent
PTABLE = HERE.parent / "tests" / "reference" / "ons_ptable" / "ptable_10_5_rule.csv"
CLI = [sys.executable, "-m", "cellsafe.cli.main"]


def _skewed(rng: np.random.Generator, prefix: str, k: int, n: int, shape: float) -> np.ndarray:
    """n codes of k categories with gamma-distributed weights (some categories rare), as strings."""
    w = rng.gamma(shape, 1.0, k)
    cats = np.array([f"{prefix}{i:03d}" for i in range(k)], dtype=object)
    return cats[rng.choice(k, n, p=w / w.sum())]


def _ckm_records(path: Path, n: int = 5_000_000) -> None:
    rng = np.random.default_rng(2024)
    df = pd.DataFrame(
        {
            "area": _skewed(rng, "E", 300, n, 2.0),
            "eth": _skewed(rng, "G", 20, n, 1.0),
            "sex": _skewed(rng, "S", 4, n, 5.0),
            "age": _skewed(rng, "A", 19, n, 3.0),
            "record_key": rng.integers(0, 256, n, dtype=np.int64),
        }
    )
    df.to_parquet(path, index=False)


def _same_release(ours: Path, theirs: Path, names: list[str]) -> bool:
    a = pd.read_csv(ours, dtype={v: str for v in names})
    b = pd.read_csv(theirs, dtype={v: str for v in names})[names + ["count"]]
    m = a.merge(b, on=names, how="outer", suffixes=("", "_ons"), indicator=True)
    if not (m["_merge"] == "both").all() or len(m) != len(a):
        return False
    x, y = m["count"].to_numpy(float), m["count_ons"].to_numpy(float)
    return bool(np.array_equal(np.isnan(x), np.isnan(y)) and np.array_equal(x[~np.isnan(x)], y[~np.isnan(y)]))


def _byte_compile_cellsafe() -> None:
    """Write cellsafe's .pyc files, as installing the package does (PYTHONDONTWRITEBYTECODE may be set)."""
    import compileall

    import cellsafe

    compileall.compile_dir(Path(cellsafe.__file__).parent, quiet=1)


def _ons_python() -> str | None:
    """The interpreter with the ONS package: $CELLSAFE_ONS_PYTHON, /work/peers/ons (its own venv), or this one."""
    import os
    import subprocess

    for py in (os.environ.get("CELLSAFE_ONS_PYTHON"), "/work/peers/ons/bin/python", sys.executable):
        if py and Path(py).exists():
            ok = subprocess.run([py, "-c", "import cell_key_perturbation"], capture_output=True).returncode == 0
            if ok:
                return py
    return None


def _integer_coded(text: Path, path: Path) -> None:
    """The same records with each category stored as its integer code (E017 -> 17), as many offices store them."""
    df = pd.read_parquet(text)
    pd.DataFrame({c: (df[c].str[1:].astype(np.int64) if c != "record_key" else df[c]) for c in df.columns}).to_parquet(
        path, index=False)


def _categorical(text: Path, path: Path) -> None:
    """The same records with pandas categorical columns, as a user who converts text to categories saves them
    (pandas reads them back as categoricals: both scripts receive categorical columns)."""
    df = pd.read_parquet(text)
    df.astype({c: "category" for c in df.columns if c != "record_key"}).to_parquet(path, index=False)


def cell_key_method(folder: Path, repeat: int = 3) -> None:
    """The cell key method on three inputs: text Parquet, integer-coded Parquet, a pandas frame in the call."""
    print("cell key method vs ONS cell_key_perturbation (5e6 records, 10-5 ptable)")
    ons = _ons_python()
    if ons is None:
        print("  skipped: the ONS package is not installed (pip install cell_key_perturbation==3.1.0 in a venv; "
              "point CELLSAFE_ONS_PYTHON at its python)")
        return
    import subprocess

    version = subprocess.run([ons, "-c", "from importlib.metadata import version; print(version('cell_key_perturbation'))"],
                             capture_output=True, text=True).stdout.strip()
    text, ints, cats = folder / "records.parquet", folder / "records_int.parquet", folder / "records_cat.parquet"
    _ckm_records(text)
    _integer_coded(text, ints)
    _categorical(text, cats)
    _byte_compile_cellsafe()
    print(f"  cell_key_perturbation {version} ({ons}); figures: best CPU seconds of {repeat} whole processes "
          "(user + system, getrusage of the children), wall seconds, peak resident memory")
    blas = [measure_process([*env, sys.executable, "-c", "import numpy"], repeat) for env in ([], ["env", "OPENBLAS_NUM_THREADS=1"])]
    print(f"  importing numpy: {blas[0].cpu:.3f} s CPU with its BLAS's default threads, {blas[1].cpu:.3f} s with one "
          "(cellsafe publish --method ckm starts it with one; the floors and the ONS scripts use the default)")
    floor = HERE / "ckm_floor.py"
    for names in (["area", "eth"], ["area", "eth", "sex", "age"]):
        formula = ":".join(names) + " - 1"
        for label, records, ours_argv in (
            ("text Parquet", text, None),
            ("integer Parquet", ints, None),
            ("pandas frame in the call", text, [sys.executable, HERE / "ckm_frame.py"]),
            ("pandas frame of categorical columns in the call (an added row)", cats, [sys.executable, HERE / "ckm_frame.py"]),
        ):
            ours, theirs = folder / "cellsafe.csv", folder / "ons.csv"
            m_ons = measure_process([ons, HERE / "peer_ons_ckm.py", records, PTABLE, ",".join(names), theirs], repeat)
            if ours_argv is None:
                argv = [*CLI, "publish", records, "--variables", ",".join(names), "--formula", formula, "--method", "ckm",
                        "--ptable", PTABLE, "--record-key", "record_key", "--output", ours, "--overwrite", "--quiet"]
            else:
                argv = [*ours_argv, records, PTABLE, ",".join(names), ours]
            m_cs = measure_process(argv, repeat)
            if ours_argv is None:
                m_floor = measure_process([sys.executable, floor, "parquet", records, ",".join(names + ["record_key"])], repeat)
            else:
                m_floor = measure_process([sys.executable, floor, "pandas", records], repeat)
            same = _same_release(ours, theirs, names)
            call = ""
            if ours_argv is not None:
                call_cs = float(m_cs.stderr.split("call")[-1].split()[0])
                call_ons = float(m_ons.stderr.split("call")[-1].split()[0])
                call = f"; in the call {call_cs:.3f} s vs {call_ons:.3f} s CPU/wall: {call_ons / call_cs:.1f}x"
            above = (f"; floor {m_floor.cpu:.2f} s CPU ({m_floor.peak_mb:.0f} MB), above it cellsafe "
                     f"{m_cs.cpu - m_floor.cpu:.2f} s, ONS {m_ons.cpu - m_floor.cpu:.2f} s")
            print(f"  {len(names)}-way, {label}: cellsafe {m_cs}, ONS {m_ons}: ONS / cellsafe = "
                  f"{m_ons.cpu / m_cs.cpu:.2f}x CPU, {m_ons.wall / m_cs.wall:.2f}x wall{call}{above}; identical: {same}; "
                  f"load {m_cs.load:.1f}", flush=True)


# (geo+sex+age+edu+occ+cob)^3 over these sizes: 72,244 possible published cells, 71,052 non-empty in the data
SCR_SIZES = {"geo": 50, "sex": 2, "age": 21, "edu": 8, "occ": 10, "cob": 15}
SCR_FORMULA = "(geo+sex+age+edu+occ+cob)^3"


def small_count_rounding(folder: Path) -> None:
    print("small count rounding vs R SmallCountRounding::PLSrounding (1e6 records, base 3)")
    rscript = shutil.which("Rscript")
    if rscript is None:
        print("  skipped: R is not installed (apt-get install r-base-core r-cran-data.table r-cran-matrix)")
        return
    import subprocess

    check = subprocess.run(
        [rscript, "-e", 'cat(R.version$major, R.version$minor, as.character(packageVersion("SSBtools")), '
         'as.character(packageVersion("SmallCountRounding")))'], capture_output=True, text=True)
    if check.returncode != 0:
        print("  skipped: R lacks SSBtools / SmallCountRounding (build them from Statistics Norway's GitHub repositories)")
        return
    major, minor, ssbtools, scr = check.stdout.split()
    print(f"  R {major}.{minor}, SSBtools {ssbtools}, SmallCountRounding {scr}")
    rng = np.random.default_rng(7)
    n = 1_000_000
    records = folder / "scr_records.csv"
    pd.DataFrame({v: _skewed(rng, v[0].upper(), k, n, 1.5) for v, k in SCR_SIZES.items()}).to_csv(records, index=False)
    t_r, m_r, err = run_process([rscript, HERE / "peer_plsrounding.R", records, folder / "r.csv"])
    n_r = len(pd.read_csv(folder / "r.csv"))
    ours = folder / "scr.csv"
    t_cs, m_cs, _ = run_process(
        [*CLI, "publish", records, "--variables", ",".join(SCR_SIZES), "--formula", SCR_FORMULA, "--method", "scr",
         "--base", 3, "--seed", 1, "--output", ours, "--overwrite", "--quiet"], 2)
    n_cs = len(pd.read_csv(ours))
    call_r = err.strip().splitlines()[-1] if err.strip() else "?"
    print(f"  whole process cellsafe {t_cs:.1f} s ({m_cs:.0f} MB, {n_cs:,} published cells), R {t_r:.1f} s "
          f"({m_r:.0f} MB, {n_r:,} published cells; {call_r}): ratio R / cellsafe = {t_r / t_cs:.1f}")


def main() -> None:
    which = sys.argv[1:] or ["ckm", "scr"]
    with tempfile.TemporaryDirectory() as tmp:
        if "ckm" in which:
            cell_key_method(Path(tmp))
        if "scr" in which:
            small_count_rounding(Path(tmp))


if __name__ == "__main__":
    main()

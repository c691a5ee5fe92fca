"""numpy's BLAS starts with one thread for commands that do no linear algebra, unless the user chose a count."""

import os
import subprocess
import sys

import pytest

_PROBE = (
    "from cellsafe._blas import one_blas_thread_from_start as f; import os; first = f(); import numpy; "
    "print(first, f(), os.environ.get('OPENBLAS_NUM_THREADS'))"
)


def _probe(**env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", _PROBE], env={**clean, **env}, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_one_thread_before_numpy_and_never_after():
    assert _probe() == ["True", "False", "1"]  # set before numpy's import; once numpy is loaded, nothing changes


@pytest.mark.parametrize("var", ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"])
def test_a_thread_count_the_user_chose_is_kept(var):
    got = _probe(**{var: "2"})
    assert got[:2] == ["False", "False"]
    assert got[2] == ("2" if var == "OPENBLAS_NUM_THREADS" else "None")

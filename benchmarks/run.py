"""Run every benchmark in this folder and print its ratios.

Each ``bench_*.py`` module has a ``main()`` that times cellsafe against a baseline measured in the
same process and prints the ratios; absolute times depend on the machine, ratios much less.
Usage: ``python benchmarks/run.py [name ...]`` (names without the ``bench_`` prefix).
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    wanted = set(argv)
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem.removeprefix("bench_")
        if wanted and name not in wanted:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        print(f"== {name} ==", flush=True)
        t0 = time.perf_counter()
        module.main()
        print(f"   ({time.perf_counter() - t0:.1f} s)\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Wall-clock timing shared by the benchmarks (``time.perf_counter``)."""

from __future__ import annotations

import time
from typing import Any, Callable


def best_time(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """The best wall time of ``repeat`` calls of ``fn``, and the last call's result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float]:
    """One call of ``fn(*args, **kwargs)``: its result and its wall time."""
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


_WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t0 = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
    "dt = time.perf_counter() - t0\n"
    "sys.stderr.write(r.stderr)\n"
    "print(dt, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)\n"
)


def run_process(argv: list[str], repeat: int = 1) -> tuple[float, float, str]:
    """Whole-process wall time (best of ``repeat``), peak resident memory in MB and the last stderr.

    Each run goes through a small wrapper process so that ``ru_maxrss`` of its children is the peak
    of that one command (what ``/usr/bin/time -v`` reports as maximum resident set size).
    """
    import subprocess
    import sys

    best, peak, err = float("inf"), 0.0, ""
    for _ in range(repeat):
        r = subprocess.run([sys.executable, "-c", _WRAPPER, *map(str, argv)], capture_output=True, text=True)
        dt, rss_kb, code = r.stdout.split()
        if int(code) != 0:
            raise RuntimeError(f"{argv[0]} failed: {r.stderr[-2000:]}")
        best, peak, err = min(best, float(dt)), max(peak, int(rss_kb) / 1024), r.stderr
    return best, peak, err


_USAGE_WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t0 = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
    "dt = time.perf_counter() - t0\n"
    "sys.stderr.write(r.stderr)\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(dt, u.ru_utime + u.ru_stime, u.ru_maxrss, r.returncode)\n"
)


def run_usage(argv: list[str]) -> dict:
    """One whole process: wall seconds, CPU seconds (user + system of it and its children), peak resident MB, stderr
    and return code.  Bound a run by putting ``timeout SECONDS`` in front of ``argv`` (it then ends with code 124)."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _USAGE_WRAPPER, *map(str, argv)], capture_output=True, text=True)
    dt, cpu, rss_kb, code = r.stdout.split()
    return {"wall": float(dt), "cpu": float(cpu), "peak_mb": int(rss_kb) / 1024, "stderr": r.stderr, "returncode": int(code)}


_MEASURE = (
    "import os, resource, subprocess, sys, time\n"
    "t0 = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
    "dt = time.perf_counter() - t0\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "sys.stderr.write(r.stderr)\n"
    "print(dt, u.ru_utime + u.ru_stime, u.ru_maxrss, r.returncode)\n"
)


class Measured:
    """Whole-process figures of a command: best wall and CPU seconds over the runs, peak memory, load."""

    def __init__(self, wall: float, cpu: float, peak_mb: float, load: float, stderr: str, runs: list) -> None:
        self.wall, self.cpu, self.peak_mb, self.load, self.stderr, self.runs = wall, cpu, peak_mb, load, stderr, runs

    def __str__(self) -> str:
        return f"{self.cpu:.2f} s CPU ({self.wall:.2f} s wall, {self.peak_mb:.0f} MB)"


def measure_process(argv: list, repeat: int = 3) -> Measured:
    """Best CPU seconds (user + system of the process and its children: getrusage of the waited-for
    children), best wall seconds and peak resident memory of ``repeat`` runs of a command, each in its
    own wrapper process, with the 1-minute load average after the runs.

    CPU seconds are the figure to compare on a shared machine: other processes slow the wall clock
    but not the CPU time a command needs (beyond cache effects).
    """
    import os
    import subprocess
    import sys

    runs = []
    err = ""
    for _ in range(repeat):
        r = subprocess.run([sys.executable, "-c", _MEASURE, *map(str, argv)], capture_output=True, text=True)
        dt, cpu, rss_kb, code = r.stdout.split()
        if int(code) != 0:
            raise RuntimeError(f"{argv[0]} failed: {r.stderr[-2000:]}")
        runs.append((float(dt), float(cpu), int(rss_kb) / 1024))
        err = r.stderr
    return Measured(min(x[0] for x in runs), min(x[1] for x in runs), max(x[2] for x in runs), os.getloadavg()[0],
                    err, runs)

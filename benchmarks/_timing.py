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


def _tree_cpu(root: int, seen: dict) -> int:
    """Add to ``seen`` ((pid, start time) -> CPU seconds) the processes below ``root`` and their own CPU so far;
    return their resident memory in bytes now."""
    import os

    tick = os.sysconf("SC_CLK_TCK")
    children: dict = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append((int(pid), fields))
    todo, rss = [root], 0
    while todo:
        for pid, fields in children.get(todo.pop(), []):
            # fields[11], [12]: utime, stime; [19]: start time (a pid reused later is another process); [21]: rss pages
            seen[(pid, fields[19])] = (int(fields[11]) + int(fields[12])) / tick
            rss += int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
            todo.append(pid)
    return rss


def measure_tree(argv: list, interval: float = 0.1) -> Measured:
    """One run of a command whose work is done by processes nobody waits for (Spark's JVM): CPU seconds are the
    larger of getrusage of the waited-for children and the sum of every descendant's own CPU time as last sampled
    (every ``interval`` seconds from /proc; what a process spends after its last sample is missed), with wall
    seconds, peak resident memory (the larger of the waited-for processes' peak and the sampled sum of the whole
    tree's resident sets) and the load average after the run."""
    import os
    import resource
    import subprocess
    import time

    seen: dict = {}
    peak = 0
    t0 = time.perf_counter()
    p = subprocess.Popen([str(a) for a in argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    import threading

    err: list = []
    reader = threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True)
    reader.start()
    while p.poll() is None:
        rss = _tree_cpu(p.pid, seen)
        try:
            with open(f"/proc/{p.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            seen[(p.pid, fields[19])] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            peak = max(peak, rss + int(fields[21]) * os.sysconf("SC_PAGE_SIZE"))
        except OSError:
            pass
        time.sleep(interval)
    wall = time.perf_counter() - t0
    reader.join()
    if p.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed: {''.join(err)[-2000:]}")
    u = resource.getrusage(resource.RUSAGE_CHILDREN)  # this process's waited-for children so far: call once per process
    cpu = max(u.ru_utime + u.ru_stime, sum(seen.values()))
    mb = max(u.ru_maxrss / 1024, peak / 2**20)
    return Measured(wall, cpu, mb, os.getloadavg()[0], "".join(err), [(wall, cpu, mb)])

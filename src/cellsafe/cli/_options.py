"""Option declarations shared by the commands, built without numpy, pandas, scipy or DuckDB.

``--help`` and argument errors must come at once: everything here reads only argparse and the
parameter declarations (:mod:`cellsafe._params`), never the modules that compute.
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence

__all__ = ["Renamed"]


class Renamed(argparse.Action):
    """A former option name: refused with an error naming the option that replaces it.

    ``p.add_argument("--epsilon", action=Renamed, new="--flex-weights", help=argparse.SUPPRESS)``.
    """

    def __init__(self, option_strings: Sequence[str], dest: str, new: str, why: str = "", **kwargs: Any) -> None:
        kwargs.setdefault("help", argparse.SUPPRESS)
        kwargs.setdefault("nargs", "?")
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, **kwargs)
        self.new = new
        self.why = why or ("epsilon means a privacy loss everywhere in cellsafe" if "epsilon" in dest else "")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        why = f" ({self.why})" if self.why else ""
        raise argparse.ArgumentError(self, f"{option_string} is now called {self.new}{why}.")

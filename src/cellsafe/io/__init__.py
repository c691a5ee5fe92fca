"""Reading microdata and frequency tables (DuckDB for files) and writing results atomically."""

from ._atomic import atomic_path, ensure_writable_dir, write_frame
from ._duckdb import aggregate_file, read_frame, read_records
from ._contributions import Contributions, aggregate_contributions
from ._hrc import read_hrc, write_hrc
from ._keyed import FLOAT_KEY_BITS, KeyedCells, aggregate_with_keys

__all__ = ["aggregate_contributions", "Contributions", "read_hrc", "write_hrc", "aggregate_file", "aggregate_with_keys", "KeyedCells", "FLOAT_KEY_BITS", "read_frame", "read_records", "atomic_path", "ensure_writable_dir", "write_frame"]

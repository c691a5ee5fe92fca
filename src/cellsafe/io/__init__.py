"""Reading microdata and frequency tables (DuckDB for files) and writing results atomically."""

from ._atomic import atomic_path, write_frame
from ._duckdb import aggregate_file, read_frame

__all__ = ["aggregate_file", "read_frame", "atomic_path", "write_frame"]

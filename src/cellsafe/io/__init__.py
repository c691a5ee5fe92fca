"""Reading microdata and frequency tables (DuckDB for files) and writing results atomically."""

from ._atomic import atomic_path, ensure_writable_dir, write_frame
from ._duckdb import aggregate_file, read_frame, read_records

__all__ = ["aggregate_file", "read_frame", "read_records", "atomic_path", "ensure_writable_dir", "write_frame"]

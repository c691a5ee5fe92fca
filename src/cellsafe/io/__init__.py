"""Reading microdata and frequency tables (DuckDB for files); writing results atomically, never over an input, with their manifest."""

from ._atomic import OutputLock, atomic_path, ensure_writable_dir, work_folder, write_frame
from ._duckdb import MAX_COUNT, aggregate_file, aggregate_file_codes, glob_files, value_scale, count_column_for, duckdb_error, file_columns, read_frame, read_records
from ._manifest import MANIFEST_NAME, Manifest, custodian_path_for, find_manifest, manifest_path_for, provenance_notes, sha256_file
from ._outputs import DATA_FORMATS, FORMATS, OutputSet, dumps_strict, neutralise_formulas, output_format
from ._contributions import Contributions, aggregate_contributions
from ._hrc import read_hrc, write_hrc
from ._keyed import FLOAT_KEY_BITS, KeyedCells, aggregate_keyed_codes, aggregate_with_keys
from ._coded import CodedCells, aggregate_parquet_codes, coded_rows
from ._coded_frames import aggregate_frame_codes
from ._csv import CodedColumn, write_coded_csv
from ._frequency import count_column_hint, likely_count_columns
from ._marginals import ColumnCoding, MarginalCounts, aggregate_marginals

__all__ = ["aggregate_contributions", "Contributions", "read_hrc", "write_hrc", "aggregate_file", "aggregate_file_codes", "glob_files", "value_scale", "aggregate_with_keys", "aggregate_keyed_codes", "aggregate_parquet_codes", "aggregate_frame_codes", "coded_rows", "CodedCells", "CodedColumn", "write_coded_csv", "KeyedCells", "FLOAT_KEY_BITS", "read_frame", "read_records", "atomic_path", "ensure_writable_dir", "write_frame", "OutputLock", "work_folder", "custodian_path_for", "DATA_FORMATS", "dumps_strict", "MAX_COUNT", "count_column_for", "likely_count_columns", "count_column_hint", "duckdb_error", "file_columns", "MANIFEST_NAME", "Manifest", "find_manifest", "manifest_path_for", "provenance_notes", "sha256_file", "FORMATS", "OutputSet", "neutralise_formulas", "output_format"]
__all__ += ["aggregate_marginals", "ColumnCoding", "MarginalCounts"]

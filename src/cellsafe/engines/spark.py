"""The Spark engine: the same releases as the local engine, computed on a Spark cluster.

Records are aggregated with Spark SQL to one row per non-zero cell (its flat index, count and,
for the cell key method, exact key sum); the cells are repartitioned by block of flat indices
(``flat >> block_bits``, the one block scheme of :mod:`cellsafe._random`), so every partition
holds whole blocks, and each partition runs the mechanisms' per-block kernels
(:meth:`~cellsafe.mechanisms.CellwiseMechanism.sample_block`, :meth:`CellKeyMethod.cell_keys
<cellsafe.mechanisms.CellKeyMethod.cell_keys>`) through ``mapInArrow``.  Block b of implicate i
draws from the stream keyed by (purpose, i, b) under the same root seed on any executor, so the
output equals the local engine's cell for cell whatever the number of partitions.

The driver holds only small things: the categories, the root seed, the cell-size distribution
and the distribution of (original, released) pairs.  Records and cells stay in Spark; outputs
are Parquet datasets written by the executors.

PySpark (4 or later) is imported when a function here is first called: ``pip install
'cellsafe[spark]'``.  Spark needs Java 17.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from .._random import RNGLike, as_seed_sequence, block_bits, n_blocks
from ..exceptions import DataError, InvalidArgumentError
from ..io import FLOAT_KEY_BITS
from ..mechanisms import CellKeyMethod, CellwiseMechanism
from ..published import DEFAULT_MAX_INNER, Publication
from ..table import CountTable, TableDescription, Variable, encode_cells, strides, unravel
from ._pairs import CellPairs, pair_counts
from ._short_run import is_short_run
from ._spark_kernels import COUNT, FLAT, KEY, decoder, partition_table, sampler
from ._spark_marginals import SparkMarginals

__all__ = [
    "SparkTable",
    "spark_session",
    "is_short_run",
    "read_records",
    "aggregate",
    "from_table",
    "sample_cells",
    "synthesize",
    "cell_key_publication",
    "cell_pairs",
    "SparkMarginals",
]

_FLAT, _COUNT, _KEY = FLAT, COUNT, KEY
# Variables with at most this many categories are coded by a map literal in the plan, more by a broadcast join.
_MAP_LITERAL = 1000


def _pyspark() -> Any:
    try:
        import pyspark  # noqa: F401
        from pyspark.sql import functions as F
    except ImportError:
        raise InvalidArgumentError(
            "the Spark engine needs PySpark 4 or later (and Java 17): pip install 'cellsafe[spark]'."
        ) from None
    return F


def spark_session(
    master: str = "local[*]", app_name: str = "cellsafe", config: Mapping[str, str] | None = None, *,
    short_run: bool = False,
) -> Any:
    """The active SparkSession, or a new one on ``master`` (``local[*]``, ``spark://host:7077``, ``yarn``...).

    Arrow transfers are switched on and the web UI off; on a local master shuffles have two
    partitions per core (Spark's default of 200 tiny tasks per shuffle cost more than the work on
    a table of cells).  ``config`` adds or overrides Spark settings (e.g. executor memory).  One
    session serves a whole command: later calls return the active one.  ``short_run`` (a local
    master only) starts the JVM with the client compiler alone and the serial collector
    (:mod:`cellsafe.engines._short_run`: half the CPU of a command on 3e5 records, a loss above some
    7e6), unless ``config`` sets the driver's Java options itself.
    """
    _pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.master(master).appName(app_name)
    builder = builder.config("spark.sql.execution.arrow.pyspark.enabled", "true")
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    builder = builder.config("spark.ui.enabled", "false")  # the UI's server costs seconds at start-up
    if master.startswith("local"):
        cores = _local_cores(master)
        builder = builder.config("spark.sql.shuffle.partitions", str(2 * cores))
        builder = builder.config("spark.default.parallelism", str(cores))
        if short_run and "spark.driver.extraJavaOptions" not in (config or {}):
            from ._short_run import SHORT_RUN_JAVA_OPTIONS

            builder = builder.config("spark.driver.extraJavaOptions", SHORT_RUN_JAVA_OPTIONS)
    if master.startswith("local") and "PYSPARK_PYTHON" not in os.environ:
        # local workers run this interpreter, which has cellsafe; on a cluster the nodes' Python needs it installed
        os.environ["PYSPARK_PYTHON"] = sys.executable  # read when the SparkContext starts its workers
    for k, v in (config or {}).items():
        builder = builder.config(k, v)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # Java missing or the master unreachable
        raise InvalidArgumentError(
            f"cannot start Spark on {master!r}: {exc}. Spark needs Java 17 (Debian: apt-get install -y "
            "openjdk-17-jre-headless) and a reachable master."
        ) from None
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _local_cores(master: str) -> int:
    """The cores of a local master: local -> 1, local[4] -> 4, local[*] -> this machine's."""
    inside = master[len("local"):].strip("[]").split(",")[0]
    if not inside:
        return 1
    if inside == "*":
        return os.cpu_count() or 1
    try:
        return max(1, int(inside))
    except ValueError:
        return os.cpu_count() or 1


def _spark_of(spark: Any) -> Any:
    return spark if spark is not None else spark_session()


def read_records(source: Any, spark: Any = None) -> Any:
    """A Spark DataFrame of records: ``source`` itself, or Parquet/CSV paths read by Spark.

    CSV columns are read as text exactly as written (as :func:`cellsafe.io.read_records`), with a
    header line; a folder is read as a Parquet dataset.
    """
    _pyspark()
    from pyspark.sql import DataFrame

    if isinstance(source, DataFrame):
        return source
    paths = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    if not paths or not all(isinstance(p, (str, os.PathLike)) for p in paths):
        raise InvalidArgumentError(
            f"source must be a Spark DataFrame or Parquet/CSV paths. Got {type(source).__name__} instead."
        )
    spark = _spark_of(spark)
    names = [str(p) for p in paths]
    for p in names:
        if "://" not in p and not any(ch in p for ch in "*?[") and not Path(p).exists():
            raise DataError(f"input {p!r} does not exist.")
    lower = [p.lower().rstrip("/") for p in names]
    if all(p.endswith((".csv", ".csv.gz", ".tsv")) for p in lower):
        sep = "\t" if all(p.endswith(".tsv") for p in lower) else ","
        return spark.read.csv(names, header=True, inferSchema=False, sep=sep)
    if all(p.endswith(".parquet") or Path(p).is_dir() for p in lower):
        return spark.read.parquet(*names)
    raise DataError(f"cannot tell the format of {names}; use .csv, .csv.gz, .tsv or .parquet paths (or a Parquet folder).")


# ---------------------------------------------------------------------- the table
@dataclass(frozen=True, eq=False)
class SparkTable:
    """A table whose non-zero cells live in Spark: the local engine's CountTable, distributed.

    Attributes
    ----------
    variables : tuple of Variable
        The variables and their categories (on the driver; flat indices are row-major over them).
    cells : pyspark.sql.DataFrame
        One row per non-zero cell: ``flat`` (int64 flat index), ``count`` (int64) and, with record
        keys, ``key_sum`` (the exact sum of the cell's keys modulo the key range).
    structural_zeros : ndarray of int64
        Sorted flat indices of impossible cells.
    integer_keys : bool or None
        True for integer record keys, False for uniform keys, None without keys.
    labels : dict of str to (list, str)
        Per variable, the categories as Spark values in code order and their Spark SQL type (for
        writing released cells with the input's column types).
    """

    variables: tuple[Variable, ...]
    cells: Any
    structural_zeros: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    integer_keys: bool | None = None
    labels: dict = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variables]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(v.size for v in self.variables)

    @property
    def n_cells(self) -> int:
        """K, the number of possible cells."""
        return math.prod(self.shape)

    @property
    def spark(self) -> Any:
        return self.cells.sparkSession

    def cell_sizes(self) -> pd.Series:
        """Number of non-structural cells with each count, zeros included (``GROUP BY count`` in Spark)."""
        F = _pyspark()
        rows = self.cells.groupBy(_COUNT).agg(F.count(F.lit(1)).alias("cells")).toPandas()
        values = rows[_COUNT].to_numpy(dtype=np.int64)
        cells = rows["cells"].to_numpy(dtype=np.int64)
        order = np.argsort(values)
        values, cells = values[order], cells[order]
        zeros = self.n_cells - int(cells.sum()) - int(self.structural_zeros.size)
        if zeros > 0:
            values, cells = np.r_[0, values], np.r_[zeros, cells]
        return pd.Series(cells, index=pd.Index(values, name="count"), name="cells")

    def describe(self) -> TableDescription:
        """:func:`cellsafe.table.describe` of this table, from the cell-size distribution computed in Spark."""
        return TableDescription.from_cell_sizes(self.variables, self.cell_sizes(), int(self.structural_zeros.size))

    def to_table(self) -> CountTable:
        """The table on the driver (for what stays local, such as small count rounding).

        Brings the non-zero cells (never the records) to the driver through Arrow.
        """
        arrow = self.cells.select(_FLAT, _COUNT).toArrow()
        idx = arrow.column(_FLAT).to_numpy().astype(np.int64)
        cnt = arrow.column(_COUNT).to_numpy().astype(np.int64)
        sz = self.structural_zeros if self.structural_zeros.size else None
        return CountTable(self.variables, idx, cnt, sz)


def from_table(table: CountTable, spark: Any = None, *, partitions: int | None = None) -> SparkTable:
    """A local CountTable as a SparkTable (its non-zero cells shipped to Spark)."""
    import pyarrow as pa

    if not isinstance(table, CountTable):
        raise InvalidArgumentError(f"from_table needs a cellsafe.CountTable. Got {type(table).__name__} instead.")
    if not table.is_integer:
        raise DataError("the Spark engine works on integer counts; this table holds fractional counts.")
    spark = _spark_of(spark)
    arrow = pa.table({_FLAT: pa.array(table.index, pa.int64()), _COUNT: pa.array(table.counts, pa.int64())})
    cells = spark.createDataFrame(arrow)
    if partitions:
        cells = cells.repartition(int(partitions))
    cells = cells.persist()
    from pyspark.sql import types as T

    labels = {v.name: ([str(c) for c in v.categories], T.StringType()) for v in table.variables}
    return SparkTable(tuple(table.variables), cells, np.asarray(table.structural_zeros, dtype=np.int64), None, labels)


def _variable_specs(variables: Any) -> list[tuple[str, Variable | None]]:
    if isinstance(variables, Mapping):
        return [(str(k), Variable(str(k), list(v))) for k, v in variables.items()]
    if isinstance(variables, str) or not len(variables):
        raise InvalidArgumentError(f"variables must be a non-empty list of column names. Got {variables!r}.")
    out: list[tuple[str, Variable | None]] = []
    for v in variables:
        out.append((v.name, v) if isinstance(v, Variable) else (str(v), None))
    return out


def aggregate(
    source: Any,
    variables: Any,
    *,
    count: str | None = None,
    record_key: str | None = None,
    n_keys: int | None = None,
    structural_zeros: pd.DataFrame | None = None,
    spark: Any = None,
) -> SparkTable:
    """Aggregate records (or a frequency table) to a :class:`SparkTable` with Spark SQL.

    Parameters
    ----------
    source : Spark DataFrame, or Parquet/CSV path(s)
        One row per record, or per cell with ``count``.
    variables : sequence of str or Variable, or mapping of name to categories
        The columns to cross.  A name takes its categories from the data (a distinct-values pass
        over the aggregated cells, sorted as :meth:`CountTable.from_frame` sorts them); a
        :class:`Variable` gives a public domain (values outside it are an error).
    count : str, optional
        A frequency column to sum instead of counting rows.
    record_key : str, optional
        A column of record keys summed exactly per cell: integers modulo ``n_keys``, or uniform
        numbers in [0, 1) as 53-bit fixed point modulo 2^53 (as :func:`cellsafe.io.aggregate_with_keys`).
    n_keys : int, optional
        Number of integer cell keys (required for integer keys).
    structural_zeros : DataFrame, optional
        Impossible combinations, one column per variable (small: kept on the driver).
    spark : SparkSession, optional

    Returns
    -------
    SparkTable

    Notes
    -----
    One pass over the records groups them by the variables (counts, key sums and the number of
    bad keys or counts per group); everything after that touches the distinct cells only.
    """
    F = _pyspark()
    from pyspark.sql import types as T

    df = read_records(source, spark)
    spark = df.sparkSession
    where = repr(source) if isinstance(source, (str, os.PathLike)) else "the data"
    specs = _variable_specs(variables)
    names = [n for n, _ in specs]
    public = {v.name for v in (() if isinstance(variables, (str, dict)) else variables)
              if isinstance(v, Variable) and v.public}  # a Domain's variables stay public
    if len(set(names)) != len(names):
        raise InvalidArgumentError(f"variables must be distinct. Got {names}.")
    cols = list(df.columns)
    for n in names + ([count] if count else []) + ([record_key] if record_key else []):
        if n not in cols:
            raise DataError(f"unknown column {n!r}: {where} has columns {cols}. Check the spelling of the variables.")
    if count and record_key:
        raise InvalidArgumentError("record keys belong to records; a frequency table (count=...) has none.")
    types = dict(df.dtypes)
    aggs = []
    if count is None:
        aggs.append(F.count(F.lit(1)).alias(_COUNT))
    else:
        c = F.col(count).cast("double")
        bad = c.isNull() | (c < 0) | (c != F.floor(c))
        aggs += [F.sum(F.when(~bad, c.cast("long"))).alias(_COUNT), F.count(F.when(bad, 1)).alias("__bad_count")]
    integer_keys = None
    if record_key is not None:
        kt = types[record_key]
        k = F.col(record_key)
        if kt in ("tinyint", "smallint", "int", "bigint"):
            integer_keys = True
            if n_keys is None:
                raise InvalidArgumentError(
                    f"record key column {record_key!r} holds integers, which are summed modulo the number of cell keys: "
                    "pass n_keys (an ONS-layout ptable's max ckey + 1), or use uniform keys in [0, 1)."
                )
            modulus = int(n_keys)
            bad_key = k.isNull() | (k < 0) | (k > modulus - 1)
            fixed = k.cast("decimal(38,0)")
        elif kt in ("float", "double") or kt.startswith("decimal"):
            integer_keys = False
            modulus = 2**FLOAT_KEY_BITS
            kd = k.cast("double")
            bad_key = kd.isNull() | F.isnan(kd) | (kd < 0) | (kd >= 1)
            # floor(u * 2^53) is exact for a double u in [0, 1): the product only shifts the exponent
            fixed = F.floor(kd * float(2**FLOAT_KEY_BITS)).cast("decimal(38,0)")
        else:
            raise DataError(
                f"record key column {record_key!r} of {where} must hold numbers (integers 0..n_keys - 1 or uniform "
                f"numbers in [0, 1)). Got type {kt}."
            )
        good = F.when(~bad_key, fixed)
        # decimal(38,0) sums exactly (2^53 keys times 10^20 records still fit); then reduce modulo the key range
        aggs += [
            F.pmod(F.coalesce(F.sum(good), F.lit(0).cast("decimal(38,0)")), F.lit(modulus).cast("decimal(38,0)"))
            .cast("long").alias(_KEY),
            F.count(F.when(bad_key, 1)).alias("__bad_key"),
        ]
    grouped = df.groupBy(*[F.col(n) for n in names]).agg(*aggs).persist()
    # one job answers every check and brings the distinct values of every variable to the driver
    checks = [F.sum(F.when(F.col(n).isNull(), F.col(_COUNT)).otherwise(0)).alias(f"__null_{i}") for i, n in enumerate(names)]
    checks.append(F.count(F.lit(1)).alias("__groups"))
    if count is not None:
        checks.append(F.sum("__bad_count").alias("__bad_count"))
    if record_key is not None:
        checks.append(F.sum("__bad_key").alias("__bad_key"))
    checks += [F.collect_set(n).alias(f"__values_{i}") for i, n in enumerate(names)]
    row = grouped.agg(*checks).collect()[0].asDict()
    if not row["__groups"]:
        raise DataError(f"{where} has no rows; a table needs at least one record.")
    for i, n in enumerate(names):
        if row[f"__null_{i}"]:
            raise DataError(
                f"variable {n!r} has {row[f'__null_{i}']} missing value(s) in {where}; recode missing values as a "
                "category (for example 'Unknown') or drop those rows."
            )
    if count is not None and row["__bad_count"]:
        example = df.filter(F.col(count).cast("double").isNull() | (F.col(count).cast("double") < 0)
                            | (F.col(count).cast("double") != F.floor(F.col(count).cast("double")))).first()
        raise DataError(
            f"count column {count!r} of {where} has {row['__bad_count']} value(s) that are not non-negative whole "
            f"numbers (for example {example[count]!r}); counts must be non-negative whole numbers."
        )
    if record_key is not None and row["__bad_key"]:
        example = df.filter(bad_key).first()[record_key]
        want = f"integers in 0..{int(n_keys) - 1}" if integer_keys else "uniform numbers in [0, 1)"  # type: ignore[arg-type]
        raise DataError(
            f"record key column {record_key!r} of {where} must hold {want}. Got {example!r} "
            f"({row['__bad_key']} bad key(s)); every record needs a valid key."
        )
    out_vars, labels, code_of, lookups = [], {}, [], []
    for i, (name, given) in enumerate(specs):
        values = list(row[f"__values_{i}"])
        frame = pd.DataFrame({name: pd.Series(values)})
        # the same categories, in the same order, as the local engine: CountTable.from_frame's encoding
        (var,), codes = encode_cells(frame, [given if given is not None else name])
        if name in public:
            var = Variable(var.name, var.categories, public=True)
        out_vars.append(var)
        spark_type = df.schema[name].dataType
        by_code: list[Any] = [None] * var.size
        for value, code in zip(values, codes.tolist()):
            by_code[code] = value
        if given is not None and any(b is None for b in by_code):  # a public domain wider than the data
            by_code, spark_type = [str(c) for c in var.categories], T.StringType()
        labels[name] = (by_code, spark_type)
        if len(values) <= _MAP_LITERAL:  # each value's code as a map literal in the plan: no table, no join
            pairs = [x for v, c in zip(values, codes.tolist())
                     for x in (F.lit(v).cast(df.schema[name].dataType), F.lit(int(c)))]
            code_of.append(F.create_map(*pairs)[F.col(name)])
        else:  # many categories: a lookup table, broadcast to the executors
            schema = T.StructType([T.StructField(name, df.schema[name].dataType), T.StructField(f"__c_{name}", T.LongType())])
            lookups.append(spark.createDataFrame([(v, int(c)) for v, c in zip(values, codes.tolist())], schema))
            code_of.append(F.col(f"__c_{name}"))
    st = strides([v.size for v in out_vars])
    groups = grouped
    for lookup in lookups:
        groups = groups.join(F.broadcast(lookup), on=lookup.columns[0], how="inner")
    flat = sum((code.cast("long") * F.lit(int(s)) for code, s in zip(code_of, st.tolist())), F.lit(0).cast("long"))
    keep = [flat.cast("long").alias(_FLAT), F.col(_COUNT).cast("long").alias(_COUNT)]
    if record_key is not None:
        keep.append(F.col(_KEY))
    # computed from the cached groups when first used: no job here
    cells = groups.select(*keep).filter(F.col(_COUNT) > 0)
    sz = np.zeros(0, dtype=np.int64)
    if structural_zeros is not None:
        missing = [n for n in names if n not in structural_zeros.columns]
        if missing:
            raise DataError(f"structural zeros must have a column for every variable; {missing[0]!r} is missing.")
        _, flat_sz = encode_cells(structural_zeros[names], out_vars)
        sz = np.unique(flat_sz.astype(np.int64))
        clash = cells.filter(F.col(_FLAT).isin([int(x) for x in sz])).select(_FLAT).first() if sz.size else None
        if clash is not None:
            desc = CountTable(out_vars, [], []).describe_cells([clash[0]])[0]
            raise DataError(f"cell ({desc}) is declared a structural zero but has records; remove it from the structural zeros or correct the data.")
    return SparkTable(tuple(out_vars), cells, sz, integer_keys, labels)


# ---------------------------------------------------------------------- per-block kernels
def _seed_parts(rng: RNGLike) -> tuple[Any, tuple[int, ...]]:
    """The root SeedSequence as plain Python ints (its entropy exactly, and its spawn key)."""
    root = as_seed_sequence(rng)
    entropy: Any = root.entropy
    if not isinstance(entropy, int):  # a sequence of words: numpy accepts it back as given
        entropy = [int(x) for x in entropy]
    return entropy, tuple(int(x) for x in root.spawn_key)


def _blocked(table: SparkTable, with_empty: bool, partitions: int | None) -> Any:
    """The cells repartitioned by block number, so each partition holds whole blocks.

    With ``with_empty``, a marker row (count 0) for every block makes blocks without non-zero cells
    reach a partition too (their random zeros may be released as positive).  Without ``partitions``, one
    partition per core but never more than there are blocks: a partition without a block would still start a
    Python worker that has nothing to draw (a table of fewer than 2^20 cells is one block).
    """
    F = _pyspark()
    bits = block_bits(table.n_cells)
    cells = table.cells.select(_FLAT, _COUNT)
    if with_empty:
        markers = table.spark.range(n_blocks(table.n_cells)).select(
            F.shiftleft(F.col("id"), bits).cast("long").alias(_FLAT), F.lit(0).cast("long").alias(_COUNT)
        )
        cells = cells.unionByName(markers)
    n = int(partitions) if partitions else min(table.spark.sparkContext.defaultParallelism, n_blocks(table.n_cells))
    return cells.repartition(n, F.shiftright(F.col(_FLAT), bits))


def sample_cells(
    table: SparkTable, mechanism: CellwiseMechanism, implicate: int, rng: RNGLike, *, partitions: int | None = None
) -> Any:
    """Implicate ``implicate`` of a cell-wise mechanism as a Spark DataFrame of (flat, count), non-zero cells.

    ``rng`` is the root seed of all implicates (as in ``mechanism.sample(table, m, rng)``): the
    local engine's implicate ``implicate`` equals this, cell for cell.
    """
    from pyspark.sql import types as T

    kernel, with_empty = _sampler(table, mechanism, implicate, rng)
    schema = T.StructType([T.StructField(_FLAT, T.LongType()), T.StructField(_COUNT, T.LongType())])
    return _blocked(table, with_empty, partitions).mapInArrow(kernel, schema)


def _sampler(table: SparkTable, mechanism: CellwiseMechanism, implicate: int, rng: RNGLike) -> tuple[Any, bool]:
    """The per-partition kernel drawing implicate ``implicate`` (batches of (flat, count), non-zero cells), and
    whether the cells it reads need the empty blocks' markers."""
    if not isinstance(mechanism, CellwiseMechanism):
        raise InvalidArgumentError(f"the Spark engine samples cell-wise mechanisms. Got {type(mechanism).__name__}.")
    from ..mechanisms import DPMechanism

    private = [v.name for v in table.variables if not v.public]
    if isinstance(mechanism, DPMechanism) and private:
        raise DataError(
            f"{type(mechanism).__name__} releases with differential privacy, and the categories of {private} were read "
            "from the records (a category only one record has would appear in the release); aggregate on a public "
            "cellsafe.Domain first."
        )
    entropy, spawn_key = _seed_parts(rng)
    n_random_zeros = table.n_cells - int(table.structural_zeros.size)  # an upper bound suffices for the test below
    with_empty = mechanism.zero_release_probability() > 0 and n_random_zeros > 0
    kernel = sampler(mechanism, int(implicate), entropy, spawn_key, table.variables, table.structural_zeros, with_empty)
    return kernel, with_empty


def _label_schema(table: SparkTable, value_type: Any) -> Any:
    from pyspark.sql import types as T

    fields = [T.StructField(n, table.labels[n][1]) for n in table.names]
    return T.StructType(fields + [T.StructField(_COUNT, value_type)])


def to_frame(table: SparkTable, cells: Any) -> Any:
    """Cells (flat, count) as the local engine's long format: one column per variable and ``count``."""
    decode, schema = _decoder(table)
    return cells.select(_FLAT, _COUNT).mapInArrow(lambda batches: map(decode, batches), schema)


def _decoder(table: SparkTable) -> tuple[Any, Any]:
    """A function turning a batch of (flat, count) into the variables' labels and ``count``, and its schema."""
    from pyspark.sql import types as T
    from pyspark.sql.pandas.types import to_arrow_type

    schema = _label_schema(table, T.LongType())
    arrow_types = [to_arrow_type(f.dataType) for f in schema.fields[:-1]]
    return decoder([table.labels[n][0] for n in table.names], arrow_types, table.shape, table.names), schema


def synthesize(
    table: SparkTable,
    mechanism: CellwiseMechanism,
    m: int,
    rng: RNGLike,
    output: str | os.PathLike[str],
    *,
    partitions: int | None = None,
) -> list[str]:
    """Write ``m`` implicates as Parquet datasets ``output/synthetic_1.parquet`` ... (one folder each).

    Columns as the local engine's ``synthesize --format parquet``: the variables and ``count``,
    non-zero cells only.  Implicate i (1-based in the names) is ``mechanism.sample(table, m, rng)[i - 1]``.
    """
    if not isinstance(m, (int, np.integer)) or m < 1:
        raise InvalidArgumentError(f"The 'm' parameter must be a positive integer. Got {m!r}.")
    root = as_seed_sequence(rng)  # one root for every implicate, fixed before any is drawn
    out = Path(output)
    decode, schema = _decoder(table)
    paths = []
    for i in range(int(m)):
        path = str(out / f"synthetic_{i + 1}.parquet")
        # one pass through Python per partition: the draws and their labels in the same task
        kernel, with_empty = _sampler(table, mechanism, i, root)
        released = _blocked(table, with_empty, partitions).mapInArrow(
            lambda batches, kernel=kernel: map(decode, kernel(batches)), schema)
        released.write.mode("overwrite").parquet(path)
        paths.append(path)
    return paths


# ---------------------------------------------------------------------- the cell key method
def _with_generated_keys(table: SparkTable, ckm: CellKeyMethod, rng: RNGLike, partitions: int | None) -> Any:
    """(flat, count, key_sum) with one key per non-zero cell from the blocks' streams (implicate 0)."""
    from pyspark.sql import types as T

    entropy, spawn_key = _seed_parts(rng)
    variables, sz = table.variables, table.structural_zeros

    def kernel(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        got = partition_table(batches, variables, sz)
        if got is None:
            return
        local, _ = got
        keys = ckm.cell_keys(local, np.random.SeedSequence(entropy, spawn_key=spawn_key), 0)
        if np.issubdtype(keys.dtype, np.floating):
            keys = np.floor(keys * float(2**FLOAT_KEY_BITS))
        yield pa.RecordBatch.from_arrays(
            [pa.array(np.asarray(local.index)), pa.array(np.asarray(local.counts)), pa.array(keys.astype(np.int64))],
            names=[_FLAT, _COUNT, _KEY],
        )

    schema = T.StructType([T.StructField(c, T.LongType()) for c in (_FLAT, _COUNT, _KEY)])
    return _blocked(table, False, partitions).mapInArrow(kernel, schema)


def cell_key_publication(
    source: Any,
    variables: Any,
    ckm: CellKeyMethod,
    *,
    record_key: str | None = None,
    rng: RNGLike = None,
    spark: Any = None,
    partitions: int | None = None,
    table_column: str | None = None,
) -> Any:
    """The cell key method's published cells as a Spark DataFrame, equal to ``ckm.perturb(...).to_frame()``.

    Records are counted and their keys summed per inner cell in Spark (or, without ``record_key``,
    one key is drawn per non-zero inner cell from the per-block streams of ``rng``); each crossing
    of the publication sums counts and keys over its cells in Spark, and the ptable, broadcast to
    the executors, releases them.

    Returns
    -------
    pyspark.sql.DataFrame
        One column per variable (its category, or ``'Total'`` where aggregated, as text) and
        ``count`` (double; NaN where suppressed below the threshold); with ``table_column``, first
        a column of that name naming each cell's crossing (``'a:b'``, ``'Total'`` for the grand total).
    """
    F = _pyspark()
    from pyspark.sql import types as T

    if not isinstance(ckm, CellKeyMethod):
        raise InvalidArgumentError(f"cell_key_publication needs a CellKeyMethod. Got {type(ckm).__name__}.")
    if ckm.publication is not None and not isinstance(ckm.publication, (str, list, tuple)):
        raise InvalidArgumentError("on Spark the publication is a formula or a list of crossings (not a Publication).")
    n_keys = ckm.ptable.n_keys if ckm.ptable.layout == "ons" else None
    table = aggregate(source, variables, record_key=record_key, n_keys=n_keys, spark=spark)
    integer = bool(table.integer_keys) if record_key is not None else ckm.ptable.layout == "ons"
    if integer and ckm.ptable.layout != "ons":
        raise InvalidArgumentError(
            "integer record keys need an ONS-layout ptable (pcv, ckey, pvalue); use uniform keys in [0, 1) with this "
            "ptable, or read an ONS ptable."
        )
    modulus = int(ckm.ptable.n_keys) if integer else 2**FLOAT_KEY_BITS  # type: ignore[arg-type]
    cells = table.cells if record_key is not None else _with_generated_keys(table, ckm, rng, partitions)
    spec = ckm.publication if ckm.publication is not None else [tuple(table.names)]
    crossings = Publication.from_formula(table.variables, spec, inner_index=[0]).crossings
    zeros = table.n_cells - int(table.structural_zeros.size) <= DEFAULT_MAX_INNER
    shape, names = table.shape, table.names
    st = strides(shape).tolist()
    ptable = table.spark.sparkContext.broadcast(ckm.ptable)
    threshold = ckm.threshold_
    out_schema = T.StructType([T.StructField(n, T.StringType()) for n in names] + [T.StructField(_COUNT, T.DoubleType())])
    frames = []
    for crossing in crossings:
        pos = [names.index(v) for v in crossing]
        sub_shape = [shape[p] for p in pos]
        sub_strides = strides(sub_shape).tolist() if pos else []
        margin = F.lit(0).cast("long")
        for p, s in zip(pos, sub_strides):
            code = F.pmod(F.expr(f"{_FLAT} div {int(st[p])}"), F.lit(int(shape[p])))
            margin = margin + code * F.lit(int(s))
        agg = cells.groupBy(margin.alias("margin")).agg(
            F.sum(_COUNT).cast("long").alias("original"),
            F.pmod(F.sum(F.col(_KEY).cast("decimal(38,0)")), F.lit(modulus).cast("decimal(38,0)")).cast("long").alias("key"),
        )
        if zeros:  # the ONS convention: the empty cells of the crossing are published too (released 0)
            full = table.spark.range(math.prod(sub_shape)).withColumnRenamed("id", "margin")
            agg = full.join(agg, on="margin", how="left").fillna(0, subset=["original", "key"])
        cat_labels = [[str(c) for c in table.variables[p].categories] for p in pos]

        def release(batches: Iterator[Any], pos: list[int] = pos, sub_shape: list[int] = sub_shape,
                    cat_labels: list[list[str]] = cat_labels) -> Iterator[Any]:
            import pyarrow as pa

            pt = ptable.value
            for b in batches:
                mi = b.column(0).to_numpy().astype(np.int64)
                original = b.column(1).to_numpy().astype(np.int64)
                key = b.column(2).to_numpy().astype(np.int64)
                ckeys = key if integer else key.astype(np.float64) / float(2**FLOAT_KEY_BITS)
                released = pt.released(original, ckeys).astype(np.float64)
                if threshold > 0:
                    released[released < threshold] = np.nan
                codes = unravel(mi, sub_shape) if pos else np.zeros((mi.size, 0), dtype=np.int64)
                cols = []
                for j in range(len(names)):
                    if j in pos:
                        k = pos.index(j)
                        cols.append(pa.array(cat_labels[k], pa.string()).take(pa.array(codes[:, k])))
                    else:
                        cols.append(pa.array(["Total"] * mi.size, pa.string()))
                yield pa.RecordBatch.from_arrays(cols + [pa.array(released)], names=names + [_COUNT])

        frame = agg.select("margin", "original", "key").mapInArrow(release, out_schema)
        if table_column:
            frame = frame.select(F.lit(":".join(crossing) if crossing else "Total").alias(table_column), *frame.columns)
        frames.append(frame)
    out = frames[0]
    for fr in frames[1:]:
        out = out.unionByName(fr)
    return out


# ---------------------------------------------------------------------- the pairing for empirical metrics
def cell_pairs(original: SparkTable, released: Sequence[SparkTable] | SparkTable) -> CellPairs:
    """The (original, released) pairs of tables in Spark, as :func:`cellsafe.engines.cell_pairs` pairs local tables.

    Each released table is joined to the original on the flat index (a full outer join of the
    non-zero cells); Spark counts the cells of each distinct (original, released) pair, and the
    exact sum of (m f - sum of the released counts)^2 over the cells for the squared error of the
    implicates' mean.  Only these small distributions reach the driver;
    :func:`cellsafe.metrics.table_metrics_from_pairs` computes every metric from them, the same
    numbers as the local engine's.
    """
    F = _pyspark()
    rel = [released] if isinstance(released, SparkTable) else list(released)
    if not rel:
        raise InvalidArgumentError("cell_pairs needs at least one released table.")
    for i, r in enumerate(rel):
        if [(v.name, tuple(v.categories)) for v in r.variables] != [(v.name, tuple(v.categories)) for v in original.variables]:
            raise DataError(f"released table {i} is not on the original's variables and categories {original.names}.")
    fs, gs, ws = [], [], []
    f = original.cells.select(F.col(_FLAT), F.col(_COUNT).alias("f"))
    for r in rel:
        g = r.cells.select(F.col(_FLAT), F.col(_COUNT).alias("g"))
        joined = f.join(g, on=_FLAT, how="full_outer").fillna(0, subset=["f", "g"])
        arrow = joined.groupBy("f", "g").agg(F.count(F.lit(1)).alias("cells")).toArrow()
        a, b, c = (np.asarray(arrow.column(x).to_numpy(), dtype=np.int64) for x in ("f", "g", "cells"))
        a, b, c = pair_counts(a, b, c)  # sorted by (f, g), as the local pairing gives them
        fs.append(a)
        gs.append(b)
        ws.append(c)
    m = len(rel)
    summed = rel[0].cells.select(_FLAT, F.col(_COUNT).cast("decimal(38,0)").alias("g"))
    for r in rel[1:]:
        summed = summed.unionByName(r.cells.select(_FLAT, F.col(_COUNT).cast("decimal(38,0)").alias("g")))
    summed = summed.groupBy(_FLAT).agg(F.sum("g").alias("s"))
    d = (original.cells.select(_FLAT, (F.col(_COUNT).cast("decimal(38,0)") * F.lit(m)).alias("mf"))
         .join(summed, on=_FLAT, how="full_outer").fillna(0, subset=["mf", "s"]))
    se = int(d.agg(F.sum((F.col("mf") - F.col("s")) * (F.col("mf") - F.col("s")))).collect()[0][0] or 0)
    total = int(np.dot(ws[0], fs[0]))  # every non-zero original cell is among the pairs
    return CellPairs(fs, gs, ws, original.n_cells - int(original.structural_zeros.size), float(total), float(se) / (m * m))

"""``cellsafe publish``: published cells of a formula (with hierarchies), protected by the cell key method, small
count rounding or cell suppression."""

from __future__ import annotations

import argparse
from typing import Any

from typing import TYPE_CHECKING

from ..exceptions import DataError, InvalidArgumentError
from ._engine import add_engine_options, spark_from_args, spark_master, uses_spark
from ._options import add_param_option, given_params
from ._publish_linked import add_linked_options, publish_linked
from ._publish_magnitude import add_magnitude_ckm_options, publish_magnitude_ckm

if TYPE_CHECKING:  # the computing modules load when a command runs, never for --help
    from ..mechanisms import CellKeyMethod
    from ..table import CountTable, Hierarchy
from ._common import (
    add_allow_long_option,
    EXAMPLES_FORMATTER,
    add_input_options,
    add_output_options,
    add_seed_option,
    hierarchy_path,
    load_table,
    outputs_from_args,
    parse_list,
    progress_from_args,
    resolve_count,
    seed_from_args,
)

_EXAMPLES = """\
examples:
  # cell key method with the ptable of 001 (D=5, V=3, js=2), keys drawn from a seed
  cellsafe publish people.csv --variables party,age,sex --formula "party*age + party*sex" \\
      --method ckm --D 5 --V 3 --js 2 --seed 1 --output published.csv

  # the ONS convention: integer record keys in a column, their 10-5 ptable, threshold 10
  cellsafe publish people.parquet --variables region,age,sex --formula "region:age:sex - 1" \\
      --method ckm --ptable ptable_10_5_rule.csv --record-key record_key --output ons.csv

  # small count rounding to base 3 of a frequency table
  cellsafe publish table.csv --variables party,age,sex --count n --formula "party*age + party*sex" \\
      --method scr --base 3 --seed 1 --output rounded.csv

  # cell suppression over a three-level geography (tau-Argus hierarchy file), frequency rule
  cellsafe publish people.csv --variables geo,sex,age --hierarchy geo=geo.hrc:region,district \\
      --formula "region*sex + district*age" --method suppress --rule 'freq<=3' --output suppressed.csv

  # a magnitude table of turnover, p% and frequency rules on enterprises (holdings)
  cellsafe publish firms.parquet --variables nace,region --formula "nace*region" --method suppress \\
      --value turnover --contributor firm_id --rule 'p%=15' --rule 'freq<=2' --output turnover.csv

  # counts and turnover by nace x region and counts by region x size, protected together, with a table
  # published before kept as it was (--output is a folder: firms.csv, turnover.csv, sizes.csv)
  cellsafe publish firms.parquet --variables nace,region,size --method suppress --rule 'freq<=3' --rule 'p%=15' \\
      --contributor firm_id --table 'firms:nace*region' --table 'turnover:nace*region:turnover' \\
      --table 'sizes:region*size' --earlier last/regions.csv --output linked

  # the cell key method on the same magnitude table: noise scaled to the 3 largest contributions
  cellsafe publish firms.parquet --variables nace,region --formula "nace*region" --method ckm \\
      --value turnover --contributor firm_id --record-key rkey --D 10 --V 3 --fp 5000 --top-k 3 --flex-weights 1,0.5,0.2 \\
      --output turnover_ckm.csv

Writes the published cells in long format: the variables ('Total' where a cell aggregates) and 'count'
(empty where the cell key method suppressed a cell), or the summed value; cell suppression adds a 'suppression'
column (primary, secondary or empty).  --hierarchy VAR=FILE[:LEVEL,...] reads a tau-Argus .hrc file (a leading '@'
per level of depth) or a CSV of code,parent (a root row 'Total' is the grand total); its aggregate levels are named
LEVEL,... from the top (default VAR1, VAR2, ...) and the formula names them like variables: a level publishes that
level, VAR itself every level of its hierarchy (tau-Argus's meaning).
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "publish",
        help="protect the published cells of a formula (cell key method, small count rounding, cell suppression)",
        description="Build the published cells of a formula (totals, subtotals, crossings, hierarchy levels) of counts "
        "or, with --value, of sums, and protect them with the cell key method, small count rounding (001 section 2) "
        "or primary and secondary cell suppression.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("input", metavar="INPUT", help="CSV or Parquet file: microdata, or a frequency table with --count")
    add_input_options(p)
    p.add_argument("--formula", metavar="F", help="published crossings in R notation, e.g. 'a*b + a*c' (or --table)")
    p.add_argument("--method", required=True, choices=("ckm", "scr", "suppress"),
                   help="cell key method, small count rounding or cell suppression")
    p.add_argument("--hierarchy", action="append", default=[], metavar="VAR=FILE[:LEVELS]",
                   help="hierarchy of a variable: a tau-Argus .hrc file or a CSV of code,parent (repeatable)")
    g = p.add_argument_group("cell key method", "  the ptable is --ptable FILE, or generated from --D and --V (and --js):\n"
                             "  001's ptable is --D 5 --V 3 --js 2, the ptable --mechanism 'ckm:D=5,V=3,js=2' means\n"
                             "  in assess, tune, frontier and report")
    add_param_option(g, "part", "ptable", "D", text="ptable: largest deviation")
    add_param_option(g, "part", "ptable", "V", text="ptable: noise variance")
    add_param_option(g, "part", "ptable", "js", text="ptable: released 1..JS forbidden")
    g.add_argument("--ptable", metavar="FILE", help="read the ptable (sdcTools or ONS layout) instead of generating it")
    g.add_argument("--record-key", metavar="COL", help="column of record keys in INPUT (otherwise drawn from --seed)")
    add_param_option(g, "mechanism", "ckm", "threshold", metavar="T",
                     text="suppress released counts below T (default 10 for an ONS ptable, else 0)")
    r = p.add_argument_group("small count rounding")
    add_param_option(r, "mechanism", "scr", "base", text="rounding base")
    r.add_argument("--zeros", action="store_true",
                   help="round the empty combinations of the variables too (R's extend0): what --list frame, the default, does")
    c = p.add_argument_group("cell suppression")
    c.add_argument("--rule", action="append", default=[], metavar="RULE",
                   help="primary rule: 'freq<=3', 'p%%=15', 'nk(1,85)' (repeatable; default "
                   f"{_declared_default('suppress', 'rules')})")
    c.add_argument("--value", metavar="COL", help="magnitude table: the numeric column summed (microdata; also --method ckm)")
    c.add_argument("--contributor", metavar="COL", help="magnitude table: contributor id (holdings)")
    add_param_option(c, "mechanism", "suppress", "protect_zeros", text="the frequency rule also suppresses empty cells")
    add_param_option(c, "mechanism", "suppress", "min_width", metavar="W",
                     text="frequency tables: the least width of each primary's interval, in counts (the rule's own "
                     "requirement is an upper bound above its threshold)")
    c.add_argument("--no-singletons", dest="singletons", action="store_const", const=False, default=None,
                   help="no protection against a contributor (the record of a count of 1) alone in a withheld cell")
    add_param_option(p, "mechanism", "suppress", "list",
                     text="suppress and scr: which cells the release lists: every cell of every crossing, empty ones "
                     "included (frame: the listing reveals nothing), or the non-empty ones only (a reader then knows "
                     "each listed cell holds at least 1)")
    c.add_argument("--forced", metavar="FILE", help="CSV/Parquet of cells always published: one column per variable "
                   "named, a category or aggregate code (a variable left out is Total)")
    c.add_argument("--hidden", metavar="FILE", help="CSV/Parquet of cells always withheld, as --forced")
    add_linked_options(c)
    add_param_option(c, "mechanism", "suppress", "secondary",
                     text="secondary cells by Gaussian elimination or the least costly pattern (a HiGHS mixed integer "
                     "program for small tables; the Gaussian pattern with a note when --time-limit runs out)")
    add_param_option(c, "mechanism", "suppress", "cost", choices=("value", "cells"),
                     text="what --secondary optimal minimises: the withheld cells' values or their number")
    add_param_option(c, "mechanism", "suppress", "time_limit", metavar="S", text="seconds for --secondary optimal")
    add_magnitude_ckm_options(p)
    add_seed_option(p)
    p.add_argument("--output", required=True, metavar="FILE", help="output file (.csv, .parquet or .json)")
    add_output_options(p)
    add_allow_long_option(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary line")
    add_engine_options(p)
    p.set_defaults(func=run)


def _declared_default(name: str, param: str) -> str:
    from .. import _catalog

    value = {p.name: p for p in _catalog.declared("mechanism", name)}[param].default
    return ",".join(map(str, value)) if isinstance(value, (tuple, list)) else str(value)


def _cell_key_method(args: argparse.Namespace, publication: Any) -> CellKeyMethod:
    """The cell key method of --ptable FILE, or of the spec --D, --V, --js make: the library's defaults, as
    ``assess --mechanism 'ckm:D=..,V=..'`` builds it (one code path, the same ptable)."""
    from ..mechanisms import CellKeyMethod, PTable, make_mechanism

    given = {k: getattr(args, k) for k in ("D", "V", "js") if getattr(args, k) is not None}
    if args.ptable:
        if given:
            raise InvalidArgumentError("give either --ptable FILE or --D/--V/--js, not both.")
        return CellKeyMethod(PTable.read(args.ptable), publication, threshold=args.threshold)
    if "D" not in given or "V" not in given:
        raise InvalidArgumentError(
            "the cell key method needs its ptable: --D and --V (and --js; 001's ptable is --D 5 --V 3 --js 2), "
            "or --ptable FILE."
        )
    mech = make_mechanism({"mechanism": "ckm", **given, "publication": publication, "threshold": args.threshold})
    assert isinstance(mech, CellKeyMethod)
    return mech


def read_hierarchy(spec: str) -> tuple[str, Hierarchy]:
    """``VAR=FILE[:LEVEL,...]``: a variable's hierarchy from a .hrc file or a CSV of code,parent."""
    var, path, levels = hierarchy_path(spec)
    names = parse_list(levels, "--hierarchy levels") if levels else None
    from ..table import Hierarchy

    if path.lower().endswith(".hrc"):
        h = Hierarchy.read_hrc(path, level_names=names)
    else:
        from ..io import read_records

        frame = read_records(path)
        if not {"code", "parent"} <= set(frame.columns):  # a file without its header would lose its first row
            raise DataError(
                f"the hierarchy file {path!r} must be a CSV whose header names the columns 'code' and 'parent' "
                f"(one row per code; an empty parent for a top-level code). Its header is {','.join(map(str, frame.columns))!r}."
            )
        h = Hierarchy.from_parent_child(frame, level_names=names)
    if names is None:
        h = Hierarchy(h.leaves, {f"{var}{i + 1}": codes for i, codes in enumerate(h.levels.values())}, h.groups)
    return var, h


def hierarchies_from_args(args: argparse.Namespace) -> dict[str, Hierarchy]:
    from ..table import Hierarchy

    out: dict[str, Hierarchy] = {}
    for spec in args.hierarchy:
        var, h = read_hierarchy(spec)
        if var in out:
            out[var] = Hierarchy.combine(out[var], h)
        else:
            out[var] = h
    return out


def publication_from_args(args: argparse.Namespace, table: CountTable, hierarchies: dict[str, Hierarchy], zeros: Any = None) -> Any:
    from ..published import Publication

    if not hierarchies:
        return Publication.from_formula(table, args.formula, zeros=True) if zeros else args.formula
    return Publication.from_formula(table, args.formula, hierarchies=hierarchies, zeros=zeros)


def run(args: argparse.Namespace) -> int:
    if args.method == "ckm" and not uses_spark(args):
        from .._blas import one_blas_thread_from_start

        one_blas_thread_from_start()  # counts, sums and lookups: no linear algebra for BLAS threads to share
    names = parse_list(args.variables)
    rng = seed_from_args(args)
    if uses_spark(args) and args.method != "ckm":
        raise InvalidArgumentError(
            f"--engine spark runs the cell key method only (--method ckm from microdata); --method {args.method} runs "
            "locally: drop --engine spark."
        )
    outputs = outputs_from_args(args, seed=rng if args.method == "ckm" and not args.record_key or args.method == "scr" else "unused")
    with outputs:
        if args.tables or args.earlier:
            if not args.tables:
                raise InvalidArgumentError("--earlier joins the protection of linked tables: give the new ones with --table.")
            return publish_linked(args, names, outputs, _secondary(args))
        if not args.formula:
            raise InvalidArgumentError("publish needs --formula F (or --table NAME:FORMULA, repeated, for linked tables).")
        target = outputs.file(args.output)  # refused before any work: an input, an existing file, an unknown format
        if not args.count and not args.value:  # a magnitude table (--value) is read from records
            args.count = resolve_count(args.input, names, None)
        return _publish(args, names, rng, outputs, target)


def _user_cells(args: argparse.Namespace) -> dict[str, Any]:
    """--forced and --hidden: frames of cell labels for CellSuppression."""
    from ..io import read_records

    return {k: read_records(getattr(args, k)) for k in ("forced", "hidden") if getattr(args, k)}


def _secondary(args: argparse.Namespace) -> dict[str, Any]:
    """--secondary, --cost, --time-limit, --list, --min-width and --no-singletons as CellSuppression's parameters
    (those given: the library's defaults else)."""
    return given_params(args, ("secondary", "cost", "time_limit", "list", "min_width", "singletons"))


def _publish(args: argparse.Namespace, names: list[str], rng: Any, outputs: Any, target: Any) -> int:
    hierarchies = hierarchies_from_args(args)
    if args.method != "suppress" and (args.forced or args.hidden or args.secondary is not None):
        raise InvalidArgumentError("--forced, --hidden and --secondary apply to --method suppress only.")
    magnitude_ckm = args.method == "ckm" and bool(args.value)
    if not magnitude_ckm and (args.fp is not None or args.flex_weights or args.step is not None or args.icat or args.use_zero_rkeys
                              or args.mu_c is not None):
        raise InvalidArgumentError("--fp, --flex-weights, --step, --icat, --use-zero-rkeys and --mu-c apply to --method ckm --value only.")
    if args.method == "ckm" and args.list is not None:
        raise InvalidArgumentError("--list applies to --method suppress and scr; the cell key method publishes every cell.")
    if args.method != "suppress" and (args.min_width is not None or args.singletons is not None):
        raise InvalidArgumentError("--min-width and --no-singletons apply to --method suppress only.")
    if args.method != "suppress" and not magnitude_ckm and (args.rule or args.value or args.contributor or args.protect_zeros):
        raise InvalidArgumentError(
            "--rule, --value, --contributor and --protect-zeros apply to --method suppress only (--value and "
            "--contributor also to --method ckm, for a magnitude table)."
        )
    if magnitude_ckm:
        res, mech = publish_magnitude_ckm(args, names, rng, hierarchies)
    elif args.method == "suppress":
        from ..mechanisms.suppression import CellSuppression  # each method imports only its own mechanism

        if any(x is not None for x in (args.D, args.V, args.js, args.ptable, args.record_key, args.threshold)):
            raise InvalidArgumentError("--D, --V, --js, --ptable, --record-key and --threshold apply to --method ckm only.")
        rules = {"rules": args.rule} if args.rule else {}  # the library's default rule otherwise
        if args.value:
            if args.count:
                raise InvalidArgumentError("--value needs microdata (one row per record); drop --count.")
            if args.min_width is not None:
                raise InvalidArgumentError("--min-width applies to frequency tables; a magnitude table's rules say its protection.")
            mech = CellSuppression(args.formula, **rules, protect_zeros=bool(args.protect_zeros), priority="value",
                                   **_secondary(args), **_user_cells(args))
            res = mech.suppress_magnitude(
                args.input, variables=names, value=args.value, contributor=args.contributor, hierarchies=hierarchies or None,
                progress=progress_from_args(args),
            )
        else:
            if args.contributor:
                raise DataError("--contributor needs --value (a magnitude table).")
            table = load_table(args.input, args.variables, args.count)
            pub = publication_from_args(args, table, hierarchies)  # the mechanism lists its frame (--list)
            mech = CellSuppression(pub, **rules, protect_zeros=bool(args.protect_zeros), **_secondary(args),
                                   **_user_cells(args))
            [res] = mech.sample(table, progress=progress_from_args(args))
    elif args.method == "ckm":
        if args.zeros:
            raise InvalidArgumentError("--zeros applies to --method scr; the cell key method publishes empty cells already.")
        if args.record_key and args.count:
            raise InvalidArgumentError("--record-key needs microdata (one row per record); drop --count.")
        formula: Any = None if hierarchies else args.formula  # with hierarchies: built below from the table
        ckm = mech = _cell_key_method(args, formula)
        if uses_spark(args):
            return _publish_spark(args, names, rng, ckm, outputs, target)
        if hierarchies:
            from ..mechanisms import CellKeyMethod
            from ..published import Publication

            table = load_table(args.input, args.variables, args.count)
            pub = Publication.from_formula(table, args.formula, hierarchies=hierarchies, zeros=True)
            mech = CellKeyMethod(ckm.ptable, pub, threshold=args.threshold)
            # with record keys, every aggregate's cell key is the sum of its records' keys (the records read again)
            res = mech.perturb(args.input if args.record_key else table, variables=names if args.record_key else None,
                               record_key=args.record_key, rng=rng)
        elif args.count:
            res = ckm.perturb(load_table(args.input, args.variables, args.count), rng=rng)
        else:
            # counts and key sums straight from the file (Parquet dictionary codes, or DuckDB), never loaded whole
            res = ckm.perturb(args.input, variables=names, record_key=args.record_key, rng=rng)
    else:
        from ..mechanisms.rounding import SmallCountRounding

        if any(x is not None for x in (args.D, args.V, args.js, args.ptable, args.record_key, args.threshold)):
            raise InvalidArgumentError("--D, --V, --js, --ptable, --record-key and --threshold apply to --method ckm only.")
        table = load_table(args.input, args.variables, args.count)
        if args.zeros and args.list == "nonzero":
            raise InvalidArgumentError("--zeros rounds the empty combinations, which --list nonzero leaves out: give one.")
        publication = publication_from_args(args, table, hierarchies)  # the mechanism lists its frame (--list)
        mech = SmallCountRounding(publication, **({"base": args.base} if args.base is not None else {}),
                                  **given_params(args, ("list",)))
        [res] = mech.sample(table, rng=rng, progress=progress_from_args(args))
    summary = f"{res!r}" + (f"; {res.note}" if getattr(res, "note", "") else "")
    totals = res.totals
    if totals is not None:  # the released total beside the original one, as a reader of the file will see them
        shown = "suppressed" if totals[1] != totals[1] else f"{totals[1]:,.10g}"
        summary += f"; total {totals[0]:,.10g}, released {shown}"
    _record_mechanism(outputs.manifest, mech, args)
    outputs.manifest.extra["method"] = args.method
    outputs.manifest.extra["formula"] = args.formula
    n_written = _write_release(res, outputs, target, _decimals(args))
    if not args.quiet:
        print(f"{summary}; wrote {n_written:,} published cells to {args.output} (and its manifest)")
    return 0


def _record_mechanism(manifest: Any, mech: Any, args: argparse.Namespace) -> None:
    """The manifest's mechanism: its parameters as JSON (a ptable's generation parameters, the formula) and spec.

    A publication built with hierarchies is recorded by its formula (the hierarchy files are inputs, with their
    sha256); a ptable read from a file by where it was read from (also an input).
    """
    from ..mechanisms import mechanism_record

    params = mech.get_params()
    if "publication" in params and not isinstance(params["publication"], (str, type(None))):
        params["publication"] = args.formula
    ptable = params.get("ptable")
    record = mechanism_record(mech)  # a read ptable has no spec: its file is an input, with its sha256
    manifest.set_mechanism(mech, record["spec"])
    assert manifest.mechanism is not None  # just set
    manifest.mechanism.update({k: v for k, v in record.items() if k in ("spec_note", "ptable_sha256")})
    manifest.mechanism["method"] = args.method
    entry = manifest.mechanism["parameters"]
    entry["publication"] = params.get("publication", args.formula)
    if ptable is not None:
        if ptable.generated:
            entry["ptable"] = {"class": type(ptable).__name__, "parameters": ptable.get_params()}
        else:  # the file is among the inputs, with its sha256
            entry["ptable"] = {"class": type(ptable).__name__, "file": args.ptable, **{str(k): v if isinstance(v, (str, int, float, bool, type(None))) else str(v) for k, v in ptable.params.items()}}
        if hasattr(mech, "threshold_"):  # the magnitude method suppresses nothing
            entry["threshold_in_use"] = mech.threshold_


def _decimals(args: argparse.Namespace) -> int | None:
    """The decimal places of --value as written in INPUT: published sums are written with them (exact decimal sums).

    The cell key method's values are perturbed, not sums: written as computed.
    """
    if not args.value or args.method != "suppress":
        return None
    from ..io import value_scale

    return value_scale(args.input, args.value)


def _write_release(res: Any, outputs: Any, target: Any, decimals: int | None = None) -> int:
    """Write the release (:meth:`~cellsafe.published.PublishedTable.release_frame`); returns the number of cells.

    A table of counts written to CSV goes straight from the publication's coded labels to the file
    (:meth:`~cellsafe.io.OutputSet.write_coded_csv`, the same bytes as the frame's ``to_csv``);
    anything else through the frame.
    """
    coded = res.coded_release()
    if coded is not None and outputs.write_coded_csv(*coded, target):
        return int(res.publication.n_published)
    out = res.release_frame()
    col = getattr(res, "measure", "count")
    if decimals is not None and col != "count" and col in out.columns:
        out[col] = out[col].round(decimals)  # the input's scale: 6148191.84, never 6148191.839999999
    outputs.write_frame(out, target)
    return len(out)


def _publish_spark(args: argparse.Namespace, names: list[str], rng: Any, ckm: CellKeyMethod, outputs: Any, target: Any) -> int:
    """The cell key method on Spark: counts, key sums, crossings and the ptable lookup in Spark; a Parquet dataset."""
    from ..engines.spark import cell_key_publication

    if args.count or args.hierarchy:
        raise InvalidArgumentError("--engine spark publishes from microdata without hierarchies; drop --count / --hierarchy.")
    if not str(args.output).lower().endswith(".parquet"):
        raise InvalidArgumentError("--engine spark writes a Parquet dataset (a folder): give --output a name ending in .parquet.")
    from pyspark.sql import functions as F

    table_id = next(n for n in ("table", "table_id", "table_id_") if n not in names)
    out = cell_key_publication(args.input, names, ckm, record_key=args.record_key, rng=rng, spark=spark_from_args(args),
                               table_column=table_id)
    # counts as nullable integers, empty where suppressed (as the local engine writes them)
    out = out.withColumn("count", F.when(F.isnan("count"), F.lit(None)).otherwise(F.col("count").cast("long")))
    out.write.mode("overwrite").parquet(str(target))
    _record_mechanism(outputs.manifest, ckm, args)
    outputs.manifest.extra.update({"method": "ckm", "formula": args.formula, "engine": "spark"})
    if not args.quiet:
        print(f"{ckm!r} (engine spark, {spark_master(args)}): wrote the published cells to {args.output} (and its manifest)")
    return 0

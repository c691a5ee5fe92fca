"""The release report: one document a disclosure-review panel can sign off.

:class:`Report` gathers, for one original table, what the panel needs: the data (from
:func:`cellsafe.table.describe`), the candidate and released mechanisms with every parameter, a
priori risk and utility (:func:`cellsafe.apriori.assess`), empirical values with standard errors
across implicates (:func:`cellsafe.metrics.table_metrics`), the risk-utility frontier
(:func:`cellsafe.tuning.frontier`), transition probabilities, the microdata measures
(:func:`cellsafe.metrics.microdata.evaluate_microdata`), the privacy budget
(:class:`cellsafe.dp.PrivacyAccountant`) and the provenance of every input.  The report computes
no statistic of its own: each number is the value a public function returns, stored as its
``to_dict()`` gives it, so the report and ``cellsafe assess/evaluate --json`` agree by
construction (and a test checks it).  :meth:`Report.to_html` writes one self-contained file
(figures as inline SVG, CSS inline, nothing fetched); :meth:`Report.to_dict` the same content
as JSON.
"""

from __future__ import annotations

import datetime as _dt
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .. import __version__
from ..exceptions import CellsafeError, InvalidArgumentError
from ..table import CountTable
from ._inputs import Released, Requirement, frame_records, load_release, parse_requirement, requirement_counts

__all__ = ["Report", "SECTIONS"]

#: Section ids and headings, in the order of the document.
SECTIONS = (
    ("summary", "Summary and verdicts"),
    ("data", "The data"),
    ("mechanisms", "Mechanisms and parameters"),
    ("apriori", "A priori risk and utility"),
    ("empirical", "Empirical risk and utility"),
    ("published", "Published tables"),
    ("frontier", "Risk-utility frontier"),
    ("transitions", "Transition probabilities"),
    ("microdata", "Synthetic microdata"),
    ("budget", "Privacy budget"),
    ("provenance", "Provenance"),
    ("glossary", "Glossary"),
)

# Factors applied to a candidate's main parameter to draw its neighbourhood on the frontier.
_NEIGHBOURS = (0.1, 0.25, 0.5, 2.0, 4.0, 10.0)
_MAIN_PARAMETER = ("sigma", "epsilon", "V", "rho")


def _spec(mech: Any) -> str:
    from ..mechanisms import mechanism_spec

    try:
        return mechanism_spec(mech)
    except Exception:  # a mechanism without a spec (e.g. a ptable read from a file): its repr names it
        return repr(mech)


def _plain(value: Any) -> Any:
    """A parameter as JSON: numbers and text as they are, objects by their repr."""
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return repr(value)


def _neighbourhood(spec: str) -> list[str]:
    """Settings around a candidate: its main tunable parameter (sigma, a privacy loss epsilon or rho, the cell key
    method's noise variance V) scaled by a few factors; none for a family whose moments need slow numerical sums
    (GAF: its catalog entry says ``costly``)."""
    from .._catalog import entries
    from ..mechanisms import make_mechanism, mechanism_family, mechanism_spec

    mech = make_mechanism(spec)
    family = entries("distribution").get(mechanism_family(mech))
    if family is not None and family.costly:  # the candidate alone is drawn
        return []
    tunable = mech.tunable_params()
    current = mech.flat_params()
    numeric = [p for p in tunable if isinstance(current.get(p), (int, float)) and p not in ("alpha", "zeros_to_ones")]
    main = next((p for p in _MAIN_PARAMETER if p in numeric), numeric[0] if numeric else None)  # a new family's own
    if main is None:
        return []
    out = []
    for f in _NEIGHBOURS:
        try:
            out.append(mechanism_spec(mech.with_params(**{main: current[main] * f})))
        except CellsafeError:  # outside the mechanism's range (e.g. V beyond what D allows): not drawn
            continue
    return out


class Report:
    """A release report on one original table: candidates a priori, releases empirically.

    Parameters
    ----------
    table : CountTable
        The original table.
    mechanisms : sequence of str or CellwiseMechanism
        Candidate mechanisms, assessed a priori: specs such as ``'nbi:sigma=1,alpha=0.01'``,
        ``'ckm:D=5,V=3'``, ``'geometric:epsilon=1'``, or mechanisms.
    releases : sequence of Released or path
        Released outputs (folders with their manifests, see :func:`load_release`): empirical
        values beside the a priori values of the mechanism each manifest names.
    name : str
        The data's name, in the title and in every figure's title.
    targets : sequence of str or Requirement
        ``'tau4(1)<=0.4'``, ``'hellinger>=0.9'``...: one verdict per mechanism.
    budget_log : path, optional
        A privacy budget log (:class:`cellsafe.dp.PrivacyAccountant`): spent and left.
    records : pandas.DataFrame, optional
        The original records, for microdata releases.
    keys, sensitive : optional
        Key variables and the sensitive variable for DiSCO/TCAP of microdata releases.
    formula, family : optional
        A regression for the CI overlap of microdata releases.
    published : mapping of str to DataFrame or path, optional
        Protected published tables by name (long format, 'Total' where a cell aggregates, as
        ``cellsafe publish`` writes them): Hellinger utility and F-beta risk after 001's common
        post-processing (:func:`cellsafe.metrics.compare_published`, as ``cellsafe compare``), with
        ``keys`` and ``sensitive``.
    publication_formula : str, optional
        The published crossings, e.g. ``'a*b + a*c'`` (needed with ``published``); with
        ``hierarchies``, levels may be named (``'region*sex + district'``).
    hierarchies : mapping of str to Hierarchy, optional
        Hierarchies of the published variables.  A published table with a ``suppression`` column
        (cell suppression) is also audited (:func:`cellsafe.metrics.audit_suppression`): the
        attacker's interval of every withheld cell.
    beta : float
        F-beta weight of recall.
    k : sequence of int
        Counts for the tau metrics (default 1, 2; those the targets need are added).
    p : sequence of float
        Percentages for 'within p%'.
    hellinger : bool
        Compute the expected Hellinger utility (the slowest a priori sum).
    frontier : bool
        Draw the frontier of the candidates and their neighbourhoods.
    inputs : mapping of str to str, optional
        Input files and their sha256, for the provenance section.
    rng : int
        Seed of the microdata measures that draw (propensity folds, samples).

    Examples
    --------
    >>> from cellsafe import CountTable, Variable
    >>> t = CountTable([Variable("a", tuple(range(20)))], list(range(12)), [1, 1, 2, 3, 5, 8, 13, 1, 2, 1, 40, 7])
    >>> r = Report(t, ["nbi:sigma=1", "geometric:epsilon=1"], name="toy", targets=["tau4(1)<=0.5"], frontier=False)
    >>> [v["passed"] for v in r.to_dict()["sections"]["summary"]["verdicts"]]
    [True, False]
    """

    def __init__(
        self,
        table: CountTable,
        mechanisms: Sequence[Any] = (),
        releases: Sequence[Any] = (),
        *,
        name: str = "the table",
        targets: Sequence[Any] = (),
        budget_log: "str | Path | None" = None,
        records: Any = None,
        keys: Sequence[str] | None = None,
        sensitive: str | None = None,
        formula: str | None = None,
        family: str = "gaussian",
        published: Mapping[str, Any] | None = None,
        publication_formula: str | None = None,
        hierarchies: Mapping[str, Any] | None = None,
        beta: float = 0.5,
        k: Sequence[int] = (1, 2),
        p: Sequence[float] = (1, 5, 10, 50),
        hellinger: bool = True,
        frontier: bool = True,
        inputs: Mapping[str, str] | None = None,
        rng: int = 0,
    ) -> None:
        from ..apriori import cell_sizes
        from ..mechanisms import CellwiseMechanism, make_mechanism

        if not isinstance(table, CountTable):
            raise InvalidArgumentError(f"Report needs the original CountTable. Got {type(table).__name__} instead.")
        self.name = str(name)
        self.table = table
        self.requirements = [t if isinstance(t, Requirement) else parse_requirement(t) for t in targets]
        ks, ps = requirement_counts(self.requirements)
        self.k = sorted({int(x) for x in k} | set(ks))
        self.p = sorted({float(x) for x in p} | set(ps))
        self.releases: list[Released] = [r if isinstance(r, Released) else load_release(r, table) for r in releases]
        candidates: list[tuple[str, Any, str | None]] = []
        for m in mechanisms:
            mech = make_mechanism(m) if not isinstance(m, CellwiseMechanism) else m
            if not isinstance(mech, CellwiseMechanism):
                raise InvalidArgumentError(
                    f"{m!r} is not a cell-wise mechanism; the report's a priori metrics need transition probabilities."
                )
            candidates.append(("candidate", mech, None))  # role, mechanism, release name
        for rel in self.releases:
            if rel.kind == "table" and rel.mechanism is not None:
                candidates.append(("released", rel.mechanism, rel.name))
        self._cs = cell_sizes(table)
        self.created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        self.inputs = dict(inputs or {})
        self._figures: dict[str, list[tuple[str, str]]] = {}
        self.sections: dict[str, Any] = {}
        self._build_data()
        self._build_mechanisms(candidates, hellinger)
        self._build_empirical()
        self._build_frontier(frontier)
        self._build_transitions()
        self._build_published(published or {}, publication_formula, hierarchies, sensitive, keys, beta)
        self._build_microdata(records, keys, sensitive, formula, family, rng)
        self._build_budget(budget_log)
        self._build_provenance()
        self._build_summary()

    # ------------------------------------------------------------------ sections
    def _build_data(self) -> None:
        from ..table import describe

        d = describe(self.table)
        frame = d.to_frame()
        shown = frame[frame["count"] <= 10]
        above = frame[frame["count"] > 10]
        rows = frame_records(shown)
        if len(above):
            rows.append({"count": "> 10", "cells": int(above["cells"].sum()), "records": int(above["records"].sum()),
                         "cumulative_share_of_records": 1.0})
        self.sections["data"] = {"name": self.name, "description": d.to_dict(), "cell_size_table": rows}

    def _build_mechanisms(self, candidates: list[tuple[str, Any, str | None]], hellinger: bool) -> None:
        from ..apriori import assess

        out: list[dict[str, Any]] = []
        seen: dict[str, int] = {}
        for role, mech, release in candidates:
            spec = _spec(mech)
            if spec in seen:  # a candidate that was also released: one assessment, both roles
                entry = out[seen[spec]]
                entry["roles"].append(role)
                if release:
                    entry["releases"].append(release)
                continue
            a = assess(self._cs, mech, k=self.k, p=self.p, hellinger=hellinger)
            seen[spec] = len(out)
            out.append({
                "spec": spec,
                "class": type(mech).__name__,
                "label": repr(mech),
                "parameters": _plain(mech.get_params()),
                **({"ptable_sha256": a.ptable_sha256} if a.ptable_sha256 else {}),
                "roles": [role],
                "releases": [release] if release else [],
                "a_priori": a.to_dict(),
            })
        self._mechanisms: dict[str, Any] = {}
        for _, mech, _ in candidates:
            self._mechanisms.setdefault(_spec(mech), mech)
        self.sections["mechanisms"] = out

    def _build_empirical(self) -> None:
        from ..metrics import table_metrics

        out = []
        self._table_metrics: dict[str, Any] = {}
        for rel in self.releases:
            if rel.kind != "table":
                continue
            tm = table_metrics(self.table, list(rel.tables), k=self.k, p=self.p)
            self._table_metrics[rel.name] = tm
            names = [c for c in tm.per_implicate.columns if c != "total"]
            spread = {c: {"mean": tm.mean(c), "sd": tm.sd(c), "se": tm.se(c)} for c in names}
            out.append({
                "release": rel.name,
                "spec": _spec(rel.mechanism) if rel.mechanism is not None else None,
                "m": rel.m,
                "files": list(rel.files),
                "empirical": tm.to_dict(),
                "across_implicates": _plain(spread),
            })
        self.sections["empirical"] = out

    def _build_frontier(self, draw: bool) -> None:
        from ..tuning import frontier

        specs = list(self._mechanisms)
        if not draw or not specs:
            self.sections["frontier"] = None
            return
        grid = list(dict.fromkeys(specs + [s for spec in specs for s in _neighbourhood(spec)]))
        f = frontier(self._cs, grid, risk="tau4(1)", utility="mse")
        pts = f.points.copy()
        pts["chosen"] = pts["spec"].isin(specs)
        cols = ["spec", "risk", "mse_per_cell", "efficient", "chosen", "undefined"]
        self.sections["frontier"] = {
            "risk": f.risk,
            "utility": "expected squared error per cell (lower is better)",
            "points": frame_records(pts[cols]),
        }
        self._frontier = f

    def _build_transitions(self) -> None:
        from ..apriori import transition_table

        j = [1, 2, 3, 5, 10]
        out = []
        for spec, mech in self._mechanisms.items():
            k_max = int(max(12, np.max(mech.transition_support(np.array(j), 1e-3))))
            k_max = min(k_max, 40)
            t = transition_table(mech, j, k_max)
            out.append({"spec": spec, "j": j, "k_max": k_max,
                        "p": {str(jj): [float(v) for v in t.loc[jj].to_numpy()] for jj in j}})
        self.sections["transitions"] = out

    def _build_published(
        self, published: Mapping[str, Any], formula: Any, hierarchies: Any, sensitive: Any, keys: Any, beta: float
    ) -> None:
        from ..io import read_records
        from ..metrics import compare_published

        out = []
        if published:
            if not formula or not sensitive or not keys:
                raise InvalidArgumentError(
                    "published tables are compared with the publication's formula, the sensitive variable and the "
                    "keys: give publication_formula=, sensitive= and keys= (--formula, --sensitive, --keys)."
                )
        for name, frame in published.items():
            if not hasattr(frame, "columns"):
                frame = read_records(str(frame))  # as written: the values become numbers when aligned
            # as cellsafe compare: the publication the file holds
            r = compare_published(self.table, frame, sensitive, list(keys), formula=formula,
                                  hierarchies=hierarchies or None, beta=beta)
            d = r.to_dict()
            # the restored and expected inner cells are as many as the table's: the report keeps the measures
            entry = {"name": name, "formula": formula, "sensitive": sensitive, "keys": list(keys), "beta": beta,
                     **{k: d[k] for k in ("additive", "hellinger_utility", "risk")}}
            if "suppression" in frame.columns:
                entry["suppression"] = self._audit(frame, formula, hierarchies)
            out.append(entry)
        self.sections["published"] = out

    def _audit(self, frame: Any, formula: Any, hierarchies: Any) -> dict[str, Any]:
        """Suppressed cells of a published frame and the verdict of :func:`cellsafe.metrics.audit_suppression` (as cellsafe audit).

        A file listing every cell of the publication's frame is read on the frame; one listing fewer cells
        is taken as a listing of non-empty cells (each listed cell at least 1 to the reader).
        """
        import dataclasses

        from ..metrics import audit_suppression
        from ..published import Publication, PublishedTable

        pub = Publication.from_formula(self.table, formula, hierarchies=hierarchies or None, zeros=True)
        listing = "frame" if len(frame) == pub.n_published else "nonzero"
        if listing == "nonzero":
            pub = Publication.from_formula(self.table, formula, hierarchies=hierarchies or None, zeros=False)
        release = dataclasses.replace(PublishedTable.from_frame(frame, pub, self.table), listing=listing)
        audit = audit_suppression(release, inner=pub.inner_counts(self.table))
        status: Any = audit.release.suppression
        return {"primary": int((status == "primary").sum()), "secondary": int((status == "secondary").sum()),
                "audited": int(audit.cells.shape[0]), "unsafe": audit.n_unsafe, "passed": audit.passed,
                "listing": listing, "problems": audit.problems()}

    def _build_microdata(self, records: Any, keys: Any, sensitive: Any, formula: Any, family: str, rng: int) -> None:
        from ..metrics.microdata import evaluate_microdata

        out = []
        self._microdata_inputs = []
        for rel in self.releases:
            if rel.kind != "microdata":
                continue
            if records is None:
                raise InvalidArgumentError(
                    f"release {rel.name!r} holds synthetic records; give the original records (records=, or the "
                    "ORIGINAL file of cellsafe report) to evaluate them."
                )
            cols = [c for c in rel.frames[0].columns if c in records.columns]
            ev = evaluate_microdata(records[cols], list(rel.frames), keys=keys, target=sensitive, formula=formula,
                                    family=family, tables=(1, 2), rng=rng)
            d = ev.to_dict()
            out.append({"release": rel.name, "m": rel.m, "files": list(rel.files), "evaluation": d})
            self._microdata_inputs.append((rel, ev, records[cols]))
        self.sections["microdata"] = out

    def _build_budget(self, budget_log: Any) -> None:
        if budget_log is None:
            self.sections["budget"] = None
            return
        from ..dp import PrivacyAccountant
        from ..io import sha256_file

        acc = PrivacyAccountant.load(budget_log, attach=False)
        self.sections["budget"] = {
            "log": str(budget_log),
            "sha256": sha256_file(budget_log),
            "summary": acc.budget().to_dict(),
            "releases": [r.to_dict() for r in acc.releases],
        }

    def _build_provenance(self) -> None:
        import platform

        self.sections["provenance"] = {
            "publication": "the custodian's and the panel's document, not for publication: it reads the original "
            "data and names and hashes the confidential inputs (publish the release folders themselves)",
            "cellsafe_version": __version__,
            "python": platform.python_version(),
            "created": self.created,
            "inputs": [{"path": k, "sha256": v} for k, v in self.inputs.items()],
            "manifests": [{"release": r.name, "manifest": r.manifest} for r in self.releases],
        }

    def _build_summary(self) -> None:
        verdicts = []
        empirical = {e["release"]: e for e in self.sections["empirical"]}
        for entry in self.sections["mechanisms"]:
            checks = []
            for req in self.requirements:
                value = req.value_in(entry["a_priori"])
                check = {"target": req.text, "basis": "a priori", "value": value, "met": req.check(value)}
                if check["met"] is None:  # said, never dropped: why the metric has no value for this mechanism
                    check["undefined"] = self._undefined(req, entry["spec"], value)
                checks.append(check)
                for rel in entry["releases"]:
                    if rel in empirical:
                        ev = req.value_in(empirical[rel]["empirical"])
                        checks.append({"target": req.text, "basis": f"empirical ({rel})", "value": ev,
                                       "met": req.check(ev)})
            # a failed target fails; an undefined one leaves the verdict open (None, with the reason), never a pass
            met = [c["met"] for c in checks]
            passed = None if not checks else False if False in met else None if None in met else True
            verdicts.append({"spec": entry["spec"], "passed": passed, "checks": checks})
        self.sections["summary"] = {
            "name": self.name,
            "targets": [r.text for r in self.requirements],
            "verdicts": verdicts,
            "n_candidates": sum("candidate" in e["roles"] for e in self.sections["mechanisms"]),
            "n_releases": len(self.releases),
            "n_published": len(self.sections["published"]),
        }

    def _undefined(self, req: Requirement, spec: str, value: float) -> str:
        """Why a requirement's metric has no value for a candidate (the metric's own reason where it has one)."""
        from ..tuning import parse_metric

        mech = self._mechanisms.get(spec)
        try:
            metric = parse_metric(req.metric)
        except InvalidArgumentError:
            metric = None
        why = metric.undefined(self._cs, mech, value) if metric is not None and mech is not None else ""
        return why or f"{req.metric} was not computed for this mechanism"

    # ------------------------------------------------------------------ outputs
    @property
    def title(self) -> str:
        return f"Release report: {self.name}"

    def to_dict(self) -> dict[str, Any]:
        """The report's content as JSON-ready data (every number the HTML shows, no figures)."""
        from .._results import json_ready

        return json_ready({
            "title": self.title,
            "cellsafe_version": __version__,
            "created": self.created,
            "sections": {key: self.sections.get(key) for key, _ in SECTIONS if key != "glossary"},
        }, finite=True)

    def figures(self) -> dict[str, list[tuple[str, str]]]:
        """Inline SVG figures by section: (title, svg) pairs (drawn on first use)."""
        if not self._figures:
            from ._html import draw_figures

            self._figures = draw_figures(self)
        return self._figures

    def to_html(self, path: "str | Path | None" = None) -> str:
        """The report as one self-contained HTML document; written to ``path`` when given (whole, or not at all)."""
        from ._html import render

        text = render(self)
        if path is not None:
            from ..io import atomic_path

            with atomic_path(path, "report") as tmp:
                tmp.write_text(text, encoding="utf-8")
        return text

    def _repr_html_(self) -> str:
        from ._html import render_body

        return render_body(self)

    def __repr__(self) -> str:
        return (f"Report({self.name!r}, mechanisms={len(self.sections['mechanisms'])}, "
                f"releases={len(self.releases)}, targets={len(self.requirements)})")

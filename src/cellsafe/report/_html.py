"""The report as one self-contained HTML document: inline CSS (with A4 print rules), figures as
inline SVG with a title and an ``aria-label``, and beside each figure a table of the numbers it
plots.  Nothing is fetched when the file is opened: no scripts, fonts, images or style sheets
from elsewhere.  Every number comes from the report's sections (see :mod:`._report`).
"""

from __future__ import annotations

import html
import math
from typing import Any, Sequence

import numpy as np

from ._style import MARKERS, PALETTE, figure_svg, new_figure, styled, wrap

__all__ = ["render", "render_body", "draw_figures", "GLOSSARY"]

#: One-sentence meanings (the longer entries are in docs/glossary.md of the cellsafe repository).
GLOSSARY = {
    "tau3": "tau3(k): the share of original cells of count k released as k, how often a real small count survives.",
    "tau4": "tau4(k): the share of released cells of count k that were k in the original, the intruder's "
    "precision; for k = 1, the chance that a released unique is a real unique (lower is safer).",
    "hellinger": "Hellinger utility: 1 - HD / sqrt(n) between the original and released counts, 1 for "
    "identical tables (001 eqs. 3-4; higher is better).",
    "squared_error": "Expected squared error: the sum over cells of (released - original)^2 for one "
    "implicate; per cell, the frontier's utility on its natural scale (lower is better).",
    "within_p": "Within p%: the share of all cells whose released count lies within p% of the original "
    "(a random zero only when it stays zero; higher is better).",
    "f_beta": "F-beta risk: (1 + beta^2) c / (beta^2 a + b), precision and recall of the exact disclosures "
    "a published table allows (001 eq. 5; beta = 0.5).",
    "pmse_ratio": "pMSE ratio: the propensity mean squared error over its expectation when original and "
    "synthetic records come from one distribution; 1 is as good as a fresh draw.",
    "ci_overlap": "CI overlap: how much a coefficient's interval from the synthetic data overlaps the "
    "original's, 1 for identical intervals, 0.5 for a far wider one containing it.",
    "disco": "DiSCO: the share of original records whose synthetic key group has one target value, and "
    "it is theirs; compare with DiSCO_chance, what a release keeping no key-target relation gives.",
    "tcap": "TCAP: among records whose synthetic key group has one target value, the share whose target "
    "matches; compare with baseCAPd, the chance of guessing from the target's margin.",
    "epsilon": "epsilon: the privacy loss of a differentially private release; releases on the same "
    "records add up, and the budget is what may be spent in all.",
}

_CSS = """
:root { --ink: #1b1b1b; --muted: #555; --rule: #c8c8c8; --pass: #1a7f37; --fail: #b3261e; }
* { box-sizing: border-box; }
body { font: 10.5pt/1.45 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; color: var(--ink);
       max-width: 190mm; margin: 0 auto; padding: 8mm 6mm; }
h1 { font-size: 18pt; margin: 0 0 2mm; }
h2 { font-size: 13.5pt; border-bottom: 1.5px solid var(--ink); padding-bottom: 1mm; margin-top: 9mm; }
h3 { font-size: 11pt; margin: 5mm 0 2mm; }
p.meta, p.note, figcaption { color: var(--muted); font-size: 9pt; }
table { border-collapse: collapse; margin: 2mm 0 4mm; font-size: 8.8pt; }
th, td { border-bottom: 1px solid var(--rule); padding: 1mm 2mm; text-align: right; vertical-align: top; }
th:first-child, td:first-child, table.text td, table.text th { text-align: left; }
caption { text-align: left; font-weight: bold; padding-bottom: 1mm; }
thead th { border-bottom: 1.5px solid var(--ink); }
code { font-size: 8.8pt; }
.verdict { font-weight: bold; padding: 0.5mm 2mm; border-radius: 1mm; color: white; white-space: nowrap; }
.pass { background: var(--pass); } .fail { background: var(--fail); } .none { background: #777; }
figure { margin: 3mm 0 5mm; break-inside: avoid; }
figure svg { max-width: 100%; height: auto; display: block; }
.scroll { max-height: 80mm; overflow: auto; }
nav ol { columns: 2; font-size: 9pt; }
a { color: #0b5cad; }
dl dt { font-weight: bold; margin-top: 2mm; }
@page { size: A4; margin: 14mm 12mm; }
@media print {
  body { max-width: none; padding: 0; }
  nav { display: none; }
  section { break-before: page; }
  section#summary { break-before: auto; }
  .scroll { max-height: none; overflow: visible; }
  a { color: inherit; text-decoration: none; }
}
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _num(x: Any, digits: int = 4) -> str:
    if x is None:
        return "&ndash;"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    try:
        v = float(x)
    except (TypeError, ValueError):
        return _e(x)
    if math.isnan(v):
        return "&ndash;"
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
        return f"{v:.{digits - 1}e}"
    return f"{v:,.{digits}g}" if abs(v) >= 1 else f"{v:.{digits}f}"


def _g(term: str, text: str) -> str:
    """A link to the report's glossary entry."""
    return f'<a href="#g-{term}">{text}</a>'


def _table(
    head: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "", scroll: bool = False, text: bool = False
) -> str:
    cap = f"<caption>{caption}</caption>" if caption else ""
    th = "".join(f"<th scope='col'>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    t = f"<table{' class=text' if text else ''}>{cap}<thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"
    return f"<div class='scroll'>{t}</div>" if scroll else t


def _figure(svg: str, caption: str, numbers: str = "") -> str:
    return f"<figure>{svg}<figcaption>{caption}</figcaption>{numbers}</figure>"


# ---------------------------------------------------------------------- figures
def _empirical_figure(report: Any, entry: dict[str, Any], a_priori: dict[str, Any] | None) -> tuple[str, str]:
    """Every implicate's value (dots), their mean and 2 standard errors, and the a priori value (diamond)."""
    tm = report._table_metrics[entry["release"]]  # the section's own result: its per-implicate values
    names = [f"tau{w}({k})" for k in report.k for w in (3, 4)] + ["hellinger_utility"]
    fig, axes = new_figure(1, 1, (7.0, 0.45 * len(names) + 1.6))
    ax = axes[0, 0]
    with styled():
        for i, n in enumerate(names):
            vals = tm.per_implicate[n].to_numpy(float)
            ax.scatter(vals, np.full(vals.size, i), s=14, color=PALETTE[0], marker=MARKERS[0], alpha=0.7,
                       label="each implicate" if i == 0 else None, zorder=3)
            mean, se = tm.mean(n), tm.se(n)
            if math.isfinite(se):
                ax.errorbar([mean], [i + 0.22], xerr=[[2 * se], [2 * se]], fmt="|", color="black", capsize=2,
                            label="mean, 2 SE" if i == 0 else None)
            if a_priori is not None:
                ap = _a_priori_value(a_priori, n)
                if ap is not None:
                    ax.scatter([ap], [i - 0.22], marker="D", facecolor="none", edgecolor=PALETTE[1], s=36, lw=1.3,
                               label="a priori (expected)" if i == 0 else None, zorder=4)
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels([n.replace("_", " ") for n in names])
        ax.invert_yaxis()
        ax.set_xlim(-0.02, 1.02)  # every metric drawn is a proportion: one scale for all rows
        ax.set_xlabel("value (proportion)")
        ax.grid(False, axis="y")
        ax.legend(loc="best")
        title = f"Empirical against a priori, {report.name}: {entry['release']} ({entry['spec'] or 'mechanism unknown'}, m = {entry['m']})"
        ax.set_title(wrap(title, 7.0))
    return title, figure_svg(fig, title, "Dots: implicates; bars: mean and two standard errors; diamonds: a priori values.")


def _a_priori_value(a: dict[str, Any], name: str) -> float | None:
    if name == "hellinger_utility":
        return a.get("expected_hellinger_utility")
    k = name[name.index("(") + 1 : -1]
    return a["tau"].get(k, {}).get(name[:4])


def draw_figures(report: Any) -> dict[str, list[tuple[str, str]]]:
    """Every figure of the report as (title, inline SVG), by section."""
    from ._figures import plot_frontier, plot_transitions
    from ._microdata_plots import plot_propensity, plot_univariate
    from ._overlap_plot import plot_overlap

    out: dict[str, list[tuple[str, str]]] = {}
    if report.sections.get("frontier"):
        specs = list(report._mechanisms)
        title = f"Risk-utility frontier, {report.name}: " + ", ".join(specs) + " and neighbours"
        fig = plot_frontier(report._frontier, title=title, chosen=specs, data_name=report.name)
        out["frontier"] = [(title, figure_svg(fig, title, "Each point is labelled with its parameters; rings mark the chosen settings."))]
    if report._mechanisms:
        title = f"Released count given the original count ({report.name}): " + "; ".join(report._mechanisms)
        fig = plot_transitions(report._mechanisms, j=(1, 2, 5, 10), title=title)
        out["transitions"] = [(title, figure_svg(fig, title, "Bars: P(released k | original j) for each mechanism."))]
    by_spec = {e["spec"]: e["a_priori"] for e in report.sections["mechanisms"]}
    out["empirical"] = [_empirical_figure(report, e, by_spec.get(e["spec"])) for e in report.sections["empirical"]]
    micro = []
    for rel, ev, records in report._microdata_inputs:
        t1 = f"One-way distributions, {report.name}: {rel.name} (all {rel.m} implicates)"
        micro.append((t1, figure_svg(plot_univariate(records, list(rel.frames), data_name=f"{report.name}, {rel.name}"), t1)))
        t2 = f"Propensity scores, {report.name}: {rel.name}"
        micro.append((t2, figure_svg(plot_propensity(list(ev.propensity), title=t2), t2)))
        if ev.regression is not None:
            t3 = f"CI overlap of {ev.regression.formula}, {report.name}: {rel.name}"
            ov = ev.regression.coefficients["overlap"].to_numpy(float)
            micro.append((t3, figure_svg(plot_overlap({"coefficients": ov}, title=t3, xlabel="regression"), t3)))
    out["microdata"] = micro
    return out


# ---------------------------------------------------------------------- sections
def _verdict(passed: Any, judged: bool = False) -> str:
    if passed is None:
        if judged:
            return "<span class='verdict none'>? UNDECIDED</span>"
        return "<span class='verdict none'>&ndash; no target</span>"
    return "<span class='verdict pass'>&#10003; PASS</span>" if passed else "<span class='verdict fail'>&#10007; FAIL</span>"


def _summary(r: Any) -> str:
    s = r.sections["summary"]
    targets = ", ".join(f"<code>{_e(t)}</code>" for t in s["targets"]) or "none given"
    rows = []
    for v in s["verdicts"]:
        detail = "; ".join(
            f"{_e(c['target'])} ({_e(c['basis'])}: "
            + (f"{_num(c['value'])}) {'met' if c['met'] else 'not met'}" if c["met"] is not None
               else f"undefined) {_e(c.get('undefined', 'not computed'))}")
            for c in v["checks"]
        ) or "no targets"
        rows.append([f"<code>{_e(v['spec'])}</code>", _verdict(v["passed"], bool(v["checks"])), detail])
    return (
        f"<p>Data: <strong>{_e(r.name)}</strong>. {s['n_candidates']} candidate mechanism(s) assessed a priori, "
        f"{s['n_releases']} release(s) measured. Targets: {targets}.</p>"
        + _table(["mechanism", "verdict", "targets (value)"], rows, text=True)
        + "<p class='note'>A verdict passes when every target holds, a priori and, for a released mechanism, on "
        "the mean over its implicates.</p>"
    )


def _data(r: Any) -> str:
    d = r.sections["data"]["description"]
    cats = ", ".join(f"{_e(k)} ({v})" for k, v in d["categories"].items())
    facts = [
        ["possible cells", _num(d["n_cells"])], ["structural zeros", _num(d["n_structural_zeros"])],
        ["non-zero cells", _num(d["nnz"])], ["sparsity (share of zero cells)", _num(d["sparsity"])],
        ["records", _num(d["total"])], ["uniques (cells of count 1)", _num(d["uniques"])],
        ["records in cells of 1 / 2 / at most 5",
         f"{_num(d['records_in_cells_of_1'])} / {_num(d['records_in_cells_of_2'])} / {_num(d['records_in_cells_of_at_most_5'])}"],
    ]
    rows = [[_e(x["count"]), _num(x["cells"]), _num(x["records"]), _num(x["cumulative_share_of_records"])]
            for x in r.sections["data"]["cell_size_table"]]
    return (
        f"<p>Variables and their categories: {cats}.</p>"
        + _table(["", "value"], facts)
        + _table(["cell count", "cells", "records", "cumulative share of records"], rows, "The cell-size distribution")
    )


def _mechanisms(r: Any) -> str:
    rows = []
    for e in r.sections["mechanisms"]:
        params = ", ".join(f"{_e(k)} = {_e(v)}" for k, v in e["parameters"].items())
        roles = ", ".join(e["roles"]) + (f" ({', '.join(map(_e, e['releases']))})" if e["releases"] else "")
        rows.append([f"<code>{_e(e['spec'])}</code>", _e(e["class"]), params, _e(roles)])
    return (
        "<p>Each mechanism by its spec (the form every cellsafe command takes), its class and every parameter.</p>"
        + _table(["spec", "class", "parameters", "role"], rows, text=True)
    )


def _apriori(r: Any) -> str:
    head = ["mechanism"] + [_g(f"tau{w}", f"tau{w}({k})") for k in r.k for w in (3, 4)]
    head += [_g("hellinger", "Hellinger utility"), _g("squared_error", "squared error"), "MSE per cell"]
    head += [_g("within_p", f"within {p:g}%") for p in r.p]
    rows = []
    for e in r.sections["mechanisms"]:
        a = e["a_priori"]
        row = [f"<code>{_e(e['spec'])}</code>"] + [_num(a["tau"][str(k)][f"tau{w}"]) for k in r.k for w in (3, 4)]
        row += [_num(a.get("expected_hellinger_utility")), _num(a["expected_squared_error"]), _num(a["mse_per_cell"])]
        row += [_num(a["within_p"]["all"][f"{p:g}"]) for p in r.p]
        rows.append(row)
    meanings = "".join(f"<li>{_e(GLOSSARY[t])}</li>" for t in ("tau3", "tau4", "hellinger", "squared_error", "within_p"))
    return (
        "<p>Expected values before anything is drawn, exact sums over the table's cell-size distribution "
        "(<code>cellsafe.apriori.assess</code>).</p>" + _table(head, rows) + f"<ul class='note'>{meanings}</ul>"
        + "<p class='note'>F-beta risk (" + _g("f_beta", "glossary") + ") is measured on published tables: see "
        "<a href='#published'>Published tables</a>.</p>"
    )


def _empirical(r: Any, figs: list[tuple[str, str]]) -> str:
    if not r.sections["empirical"]:
        return "<p>No released tables were given: the values above are expectations only.</p>"
    parts = []
    by_spec = {e["spec"]: e["a_priori"] for e in r.sections["mechanisms"]}
    for e, (title, svg) in zip(r.sections["empirical"], figs):
        a = by_spec.get(e["spec"])
        names = [f"tau{w}({k})" for k in r.k for w in (3, 4)] + ["hellinger_utility", "squared_error"]
        names += [f"within_all({p:g})" for p in r.p]
        rows = []
        for n in names:
            s = e["across_implicates"].get(n)
            if s is None:
                continue
            ap = None
            if a is not None:
                ap = a["expected_squared_error"] if n == "squared_error" else (
                    a["within_p"]["all"].get(n[11:-1]) if n.startswith("within") else _a_priori_value(a, n))
            rows.append([_e(n), _num(ap), _num(s["mean"]), _num(s["se"]), _num(s["sd"])])
        parts.append(
            f"<h3>{_e(e['release'])}: <code>{_e(e['spec'] or 'mechanism not recorded')}</code>, m = {e['m']}</h3>"
            + _table(["metric", "a priori", "empirical mean", "standard error", "sd across implicates"], rows)
            + _figure(svg, _e(title))
        )
    return "<p>Measured on the released implicates (<code>cellsafe.metrics.table_metrics</code>); the standard " \
           "error is the sd across implicates over sqrt(m).</p>" + "".join(parts)


def _published(r: Any) -> str:
    if not r.sections["published"]:
        return "<p>No published tables were given (<code>--published NAME=FILE</code>).</p>"
    rows = []
    for e in r.sections["published"]:
        h, k = e["hellinger_utility"], e["risk"]
        rows.append([_e(e["name"]), "yes" if e["additive"] else "no", _num(h["published"]), _num(h["restored"]),
                     _num(k["plain"]["f_beta"]), _num(k["know_yourself"]["f_beta"]),
                     f"{_num(k['plain']['a'])} / {_num(k['plain']['b'])} / {_num(k['plain']['c'])}"])
    e0 = r.sections["published"][0]
    audited = [e for e in r.sections["published"] if e.get("suppression")]
    audit = ""
    if audited:
        arows = [[_e(e["name"]), _num(e["suppression"]["primary"]), _num(e["suppression"]["secondary"]),
                  _num(e["suppression"]["unsafe"]), "passed" if e["suppression"]["passed"] else "FAILED"] for e in audited]
        audit = (
            "<p>Cell suppression: every withheld cell's interval, computed by an attacker from everything published "
            "with counts known to be non-negative (linear programs, <code>cellsafe audit</code>), must not pin the "
            "cell down.</p>"
            + _table(["table", "primary", "secondary", "cells pinned down", "audit"], arows)
        )
    return (
        f"<p>Each published table after the same post-processing (001: additivity restored, expected inner "
        f"frequencies), as <code>cellsafe compare</code>: formula <code>{_e(e0['formula'])}</code>, sensitive "
        f"variable {_e(e0['sensitive'])}, keys {_e(', '.join(e0['keys']))}, beta = {_num(e0['beta'])}. "
        f"{_e(GLOSSARY['f_beta'])}</p>"
        + _table(["table", "additive", _g("hellinger", "Hellinger, published"), "Hellinger, restored",
                  _g("f_beta", "F-beta, plain"), "F-beta, know yourself", "a / b / c (plain)"], rows)
        + audit
    )


def _frontier(r: Any, figs: list[tuple[str, str]]) -> str:
    f = r.sections.get("frontier")
    if not f or not figs:
        return "<p>No frontier was drawn (no mechanism, or switched off).</p>"
    rows = [[f"<code>{_e(p['spec'])}</code>",
             _num(p["risk"]) if not p.get("undefined") else "undefined: " + _e(p["undefined"]),
             _num(p["mse_per_cell"]), "yes" if p["efficient"] else ("no" if not p.get("undefined") else "cannot say"),
             "chosen" if p["chosen"] else ""] for p in f["points"]]
    lost = [p for p in f["points"] if p.get("undefined")]
    missing = (
        "<p>" + str(len(lost)) + " setting(s) have no " + _e(f["risk"]) + ": "
        + "; ".join(f"<code>{_e(p['spec'])}</code> ({_e(p['undefined'])})" for p in lost)
        + ". They are drawn in the right margin at their utility, and listed below as undefined.</p>"
        if lost else ""
    )
    return (
        "<p>Each candidate and settings around it (its main parameter scaled by 0.1 to 10), a priori "
        "(<code>cellsafe.tuning.frontier</code>): risk " + _g("tau4", _e(f["risk"])) + " against the expected "
        "squared error per cell. The non-dominated settings are joined; rings mark the chosen ones.</p>"
        + missing
        + _figure(figs[0][1], _e(figs[0][0]),
                  _table(["setting", f"risk {_e(f['risk'])}", "squared error per cell", "non-dominated", ""], rows,
                         "The plotted numbers", scroll=True))
    )


def _transitions(r: Any, figs: list[tuple[str, str]]) -> str:
    if not r.sections["transitions"]:
        return "<p>No cell-wise mechanism was given.</p>"
    parts = ["<p>P(released k | original j): how each mechanism moves a cell of count j.</p>"]
    if figs:
        tables = []
        for t in r.sections["transitions"]:
            ks = list(range(t["k_max"] + 1))
            rows = [[f"j = {j}"] + [f"{v:.3f}" for v in t["p"][str(j)]] for j in t["j"]]
            tables.append(_table(["original"] + [f"k={k}" for k in ks], rows, f"<code>{_e(t['spec'])}</code>", scroll=True))
        parts.append(_figure(figs[0][1], _e(figs[0][0]), "".join(tables)))
    return "".join(parts)


def _microdata(r: Any, figs: list[tuple[str, str]]) -> str:
    if not r.sections["microdata"]:
        return "<p>No synthetic microdata were given.</p>"
    parts = ["<ul class='note'>" + "".join(f"<li>{_e(GLOSSARY[t])}</li>" for t in ("pmse_ratio", "ci_overlap", "disco", "tcap")) + "</ul>"]
    for e in r.sections["microdata"]:
        u, k = e["evaluation"]["utility"], e["evaluation"]["risk"]
        rows = [[_g("pmse_ratio", "pMSE ratio"), _num(u["pmse_ratio"]), "1 (a fresh draw)"],
                ["AUC of the propensity model", _num(u["auc"]), "0.5"]]
        if "regression" in u:
            rows.append([_g("ci_overlap", "mean CI overlap") + f" ({_e(u['regression']['formula'])})",
                         _num(u["regression"]["mean_overlap"]), "1 (identical intervals)"])
        if "DiSCO" in k:
            rows += [[_g("disco", "DiSCO"), _num(k["DiSCO"]), f"{_num(k['DiSCO_chance'])} (chance); DiO {_num(k['DiO'])}"],
                     [_g("tcap", "TCAP"), _num(k["TCAP"]), f"{_num(k.get('baseCAPd'))} (baseCAPd)"],
                     ["repU", _num(k["repU"]), "0"]]
        parts.append(f"<h3>{_e(e['release'])}, m = {e['m']}</h3>" + _table(["measure", "value (mean over implicates)", "baseline"], rows))
    parts += [_figure(svg, _e(t)) for t, svg in figs]
    return "".join(parts)


def _budget(r: Any) -> str:
    b = r.sections.get("budget")
    if not b:
        return "<p>No privacy budget log was given (<code>--budget-log</code>); none of the mechanisms above " \
               "was charged to a budget here.</p>"
    s = b["summary"]
    rows = [["epsilon", _num(s["epsilon_budget"]), _num(s["epsilon_spent"]), _num(s["epsilon_remaining"])],
            ["delta", _num(s["delta_budget"]), _num(s["delta_spent"]), _num(s["delta_remaining"])]]
    rel = [[_e(x.get("label")), _num(x.get("epsilon")), _num(x.get("delta")), _e(x.get("partition") or "all records"),
            _e(x.get("mechanism") or ""), _e(x.get("time") or "")] for x in b["releases"]]
    return (
        f"<p>{_e(GLOSSARY['epsilon'])} Log <code>{_e(b['log'])}</code> (sha256 <code>{_e(b['sha256'][:16])}&hellip;</code>).</p>"
        + _table(["", "budget", "spent", "left"], rows)
        + _table(["release", "epsilon", "delta", "records", "mechanism", "time"], rel, "Recorded releases", scroll=True)
    )


def _provenance(r: Any) -> str:
    p = r.sections["provenance"]
    rows = [[_e(i["path"]), f"<code>{_e(i['sha256'])}</code>"] for i in p["inputs"]]
    parts = [f"<p>cellsafe {_e(p['cellsafe_version'])}, Python {_e(p['python'])}; report created {_e(p['created'])}.</p>"]
    if p.get("publication"):
        parts.insert(0, f"<p class='note'><strong>Not for publication.</strong> This report is {_e(p['publication'])}.</p>")
    parts.append(_table(["input", "sha256"], rows) if rows else "<p>Inputs given in memory (no files).</p>")
    for m in p["manifests"]:
        man = m["manifest"] or {}
        outs = [[_e(o.get("file")), f"<code>{_e(str(o.get('sha256', ''))[:16])}&hellip;</code>"] for o in man.get("outputs", [])]
        cmd = man.get("command_line") or man.get("command")
        cmd = " ".join(cmd) if isinstance(cmd, list) else cmd
        ins = man.get("inputs") or ([man["input"]] if "input" in man else [])
        parts.append(
            f"<h3>Manifest of {_e(m['release'])}</h3><p>command: <code>{_e(cmd)}</code>; version "
            f"{_e(man.get('cellsafe_version'))}; seed {_e(man.get('seed'))}; inputs: "
            + ", ".join(f"{_e(i.get('path', i.get('file')))} (<code>{_e(str(i.get('sha256'))[:16])}&hellip;</code>)" for i in ins)
            + "</p>" + _table(["output", "sha256"], outs, scroll=True)
        )
    return "".join(parts)


def _glossary() -> str:
    items = "".join(f"<dt id='g-{k}'>{_e(v.split(':')[0])}</dt><dd>{_e(v.split(':', 1)[1].strip())}</dd>" for k, v in GLOSSARY.items())
    return f"<dl>{items}</dl><p class='note'>The full glossary, with formulas and sources, is docs/glossary.md in the cellsafe repository.</p>"


def render_body(report: Any) -> str:
    """The report's sections as an HTML fragment (also the notebook view)."""
    from ._report import SECTIONS

    figs = report.figures()
    bodies = {
        "summary": _summary(report), "data": _data(report), "mechanisms": _mechanisms(report),
        "apriori": _apriori(report), "empirical": _empirical(report, figs.get("empirical", [])),
        "published": _published(report),
        "frontier": _frontier(report, figs.get("frontier", [])),
        "transitions": _transitions(report, figs.get("transitions", [])),
        "microdata": _microdata(report, figs.get("microdata", [])), "budget": _budget(report),
        "provenance": _provenance(report), "glossary": _glossary(),
    }
    toc = "".join(f"<li><a href='#{key}'>{_e(title)}</a></li>" for key, title in SECTIONS)
    sections = "".join(
        f"<section id='{key}' aria-labelledby='h-{key}'><h2 id='h-{key}'>{_e(title)}</h2>{bodies[key]}</section>"
        for key, title in SECTIONS
    )
    return (
        f"<header><h1>{_e(report.title)}</h1><p class='meta'>cellsafe {_e(report.sections['provenance']['cellsafe_version'])}"
        f" &middot; {_e(report.created)}</p><nav aria-label='Contents'><ol>{toc}</ol></nav></header><main>{sections}</main>"
    )


def render(report: Any) -> str:
    """The whole self-contained HTML document."""
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(report.title)}</title><style>{_CSS}</style></head><body>{render_body(report)}</body></html>\n"
    )

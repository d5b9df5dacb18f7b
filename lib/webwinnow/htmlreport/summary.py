"""The report's run summary: the known statistics in cards (input, fingerprints, hash
frequencies, pairs and clusters), every stage's own statistics, and whatever else the stats hold."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .highlight import esc
from .model import unit_noun
from .pages import DASH, _is_num, fit_sentence, fmt_float, fmt_int, fmt_value, shares_sentence

_RECORD_PARTS = ("parsed", "skipped", "failed", "flagged")


class _Rows:
    """The summary's rows, made from ``stats``; remembers which keys it showed, so the rest can
    be listed after them."""

    def __init__(self, stats: Mapping[str, Any]) -> None:
        self.stats = stats
        self.used: set[str] = set()

    def get(self, key: str) -> Any:
        self.used.add(key)
        return self.stats.get(key)

    @staticmethod
    def row(label: str, value_html: str | None, title: str = "") -> str:
        if value_html is None:
            return ""
        t = f' title="{esc(title)}"' if title else ""
        return f"<dt{t}>{esc(label)}</dt><dd>{value_html}</dd>"

    def num(self, label: str, key: str, title: str = "") -> str:
        v = self.get(key)
        return self.row(label, fmt_value(v), title) if key in self.stats else ""


def _card(title: str, rows: list[str]) -> str:
    rows = [r for r in rows if r]
    if not rows:
        return ""
    return f'<section><h2>{esc(title)}</h2><dl class="summary">{"".join(rows)}</dl></section>'


def _input_rows(r: _Rows) -> list[str]:
    out = []
    inputs = r.get("inputs")
    if inputs is not None:
        out.append(r.row("input files", fmt_int(len(inputs)) if isinstance(inputs, (list, tuple)) else fmt_value(inputs)))
    out.append(r.num("input bytes", "input_bytes"))
    seen = r.get("records_seen")
    parts = {p: r.get(p) for p in _RECORD_PARTS}
    if seen is not None or any(v is not None for v in parts.values()):
        terms = " + ".join(f"{fmt_int(parts[p])} {p}" for p in _RECORD_PARTS if parts[p] is not None)
        line = f"{fmt_int(seen)}" + (f" = {terms}" if terms else "")
        if seen is not None and all(_is_num(parts[p]) for p in _RECORD_PARTS) and _is_num(seen):
            total = sum(parts[p] for p in _RECORD_PARTS)
            if total != seen:
                line += f' <span class="warn">does not add up: the parts sum to {fmt_int(total)}</span>'
        out.append(r.row("records", line, "records seen = parsed + skipped + failed + flagged"))
    out.append(r.num("documents", "documents", "HTML responses that became text (status ok)"))
    return out


def _fingerprint_rows(r: _Rows) -> list[str]:
    out = []
    unit = r.get("unit")
    lexer = r.get("lexer")
    if unit is not None:
        out.append(
            r.row(
                "unit", esc(f"{unit}: k, w and lengths count {unit_noun(unit)}" + (f" (Pygments lexer {lexer})" if lexer else ""))
            )
        )
    out += [
        r.num("k (noise threshold)", "k"),
        r.num("w (window)", "w"),
        r.num("t = w + k − 1 (guarantee)", "t"),
        r.num("robust winnowing", "robust"),
    ]
    if r.get("mod_p"):
        out.append(r.num("mod p (baseline)", "mod_p"))
    out += [
        r.num(unit_noun(unit), "norm_chars", "in the documents' texts: what k-grams are made of"),
        r.num("k-grams", "kgrams"),
        r.num("fingerprints", "fingerprints"),
    ]
    density, expected = r.get("density"), r.get("expected_density")
    if density is not None or expected is not None:
        d = fmt_float(density, 5) if density is not None else DASH
        e = fmt_float(expected, 5) if expected is not None else DASH
        ratio = ""
        if _is_num(density) and _is_num(expected) and expected:
            ratio = f' <span class="muted">({density / expected:.2f}× expected)</span>'
        out.append(
            r.row(
                "density",
                f'{d} <span class="muted">vs expected</span> {e}{ratio}',
                "fingerprints per k-gram; expected on random text: 2/(w+1) for winnowing, 1/p for 0 mod p",
            )
        )
    return out


def _hash_rows(
    r: _Rows, fit: Mapping[str, Any] | None, shares: Mapping[str, Any] | None, derived: Mapping[str, Any]
) -> list[str]:
    hashes = r.get("hashes")
    bp = r.get("boilerplate_hashes")
    max_df = r.get("max_df")
    hashes = derived.get("hashes") if hashes is None else hashes
    bp = derived.get("boilerplate_hashes") if bp is None else bp
    return [
        r.row("distinct hashes", fmt_value(hashes)) if hashes is not None else "",
        r.row("max_df", fmt_value(max_df), "hashes in more documents are boilerplate: reported, never paired")
        if max_df is not None
        else "",
        r.row("boilerplate hashes", fmt_value(bp), "hashes in more than max_df documents") if bp is not None else "",
        r.row("power law", fit_sentence(fit), "least-squares fit of log documents against log rank"),
        r.row(
            "seen in",
            shares_sentence(shares),
            "share of distinct hashes found in exactly 1, 2, 3 and more "
            "documents; the paper reports 82% / 14% / 2% for web pages",
        ),
    ]


def _pair_rows(r: _Rows) -> list[str]:
    unit = r.stats.get("unit")
    noun = unit_noun(unit)
    return [
        r.num(label, key, title)
        for label, key, title in (
            ("min shared fingerprints", "min_shared", ""),
            ("candidate pairs", "candidate_pairs", "document pairs sharing a fingerprint below the cap"),
            ("pairs sharing content", "pairs", f"candidate pairs with a passage of at least k {noun} outside template"),
            ("pairs sharing only template", "template_pairs", "kept apart in the template_pairs table"),
            ("cross-host pairs", "cross_host_pairs", "content pairs whose pages are on different hosts"),
            ("passages", "passages", "copied passages of the content pairs"),
            ("content " + ("characters" if unit in (None, "char") else noun), "content_chars", f"{noun} copied outside template"),
            ("cluster resemblance", "cluster_resemblance", "pairs at least this resemblant join clusters"),
            ("clusters", "clusters", ""),
            ("documents in clusters", "clustered_documents", ""),
            ("largest cluster", "largest_cluster", ""),
        )
    ]


def _stage_table(stages: Any) -> str:
    """Each stage's own statistics, a row each."""
    rows = []
    for name, entry in (stages or {}).items():
        if not isinstance(entry, Mapping):
            continue
        for kk, vv in sorted(entry.items(), key=lambda kv: str(kv[0])):
            if isinstance(vv, Mapping):
                vv = ", ".join(f"{esc(a)} {fmt_value(b)}" for a, b in vv.items())
                rows.append(f'<tr><td>{esc(name)}</td><td class="what">{esc(kk)}</td><td>{vv}</td></tr>')
            else:
                rows.append(f'<tr><td>{esc(name)}</td><td class="what">{esc(kk)}</td><td class="num">{fmt_value(vv)}</td></tr>')
    if not rows:
        return ""
    return (
        '<details class="stages"><summary>Every stage\'s statistics</summary><table class="stages">'
        "<thead><tr><th>stage</th><th>statistic</th><th>value</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></details>"
    )


def _other_rows(r: _Rows) -> list[str]:
    """Whatever else is in stats, as it is."""
    out = []
    for k, v in sorted(r.stats.items(), key=lambda kv: str(kv[0])):
        if k in r.used:
            continue
        if isinstance(v, Mapping) and v:
            out += [r.row(f"{k} · {kk}", fmt_value(vv)) for kk, vv in sorted(v.items(), key=lambda kv: str(kv[0]))]
        else:
            out.append(r.row(str(k), fmt_value(v)))
    return out


def summary_html(
    stats: Mapping[str, Any], fit: Mapping[str, Any] | None, shares: Mapping[str, Any] | None, derived: Mapping[str, Any]
) -> str:
    """The run summary: known keys in cards, each stage's statistics, whatever else is in ``stats``.

    ``stats`` is what the report stage computed (t, the densities and the counts are taken as
    they are, never re-derived); ``derived`` holds what the writer counted from the rank–frequency
    curve (distinct and boilerplate hashes), used when ``stats`` lacks them. Missing keys are left out.
    """
    r = _Rows(stats)
    cards = (
        _card("Input", _input_rows(r))
        + _card("Fingerprints", _fingerprint_rows(r))
        + _card("Hash frequencies", _hash_rows(r, fit, shares, derived))
        + _card("Pairs and clusters", _pair_rows(r))
    )
    stages = _stage_table(r.get("stages"))
    r.used.update({"tag", "title", "fit", "shares", "headline"})
    return f'<div class="cards">{cards}</div>' + _card("More", _other_rows(r)) + stages


# ---------------------------------------------------------------------------- pairs


def headline(stats: Mapping[str, Any], runs: Sequence[tuple[int, int, int, int]], top: Any | None) -> list[str]:
    """The run in a few sentences, for the top of the report and of the terminal summary: how
    many page pairs share copied content and the largest copy, how much of what the pages hold
    is site template, the near-duplicate clusters, and a word where the power-law fit is poor.

    runs: RANK_FREQ rows (rank, rank_last, docs, hashes); top: the pair listed first (a PairView)."""
    noun = unit_noun(stats.get("unit"))
    lines = []
    pairs, template_pairs = stats.get("pairs") or 0, stats.get("template_pairs") or 0
    if pairs:
        line = (
            f"{pairs:,} page pairs share copied content ({stats.get('passages') or 0:,} passages, "
            f"{stats.get('content_chars') or 0:,} {noun} outside site template)"
        )
        if top is not None and top.content_a is not None and top.content_b is not None:
            line += (
                f"; the largest copy, {min(top.content_a, top.content_b):,} {noun}, is between "
                f"{top.url_a or f'doc {top.doc_a}'} and {top.url_b or f'doc {top.doc_b}'}"
            )
        lines.append(line + ".")
    else:
        lines.append("No two pages share copied content outside site template.")
    max_df: int = stats.get("max_df") or 0
    held = sum(docs * hashes for _, _, docs, hashes in runs)
    if max_df and held:
        template = sum(docs * hashes for _, _, docs, hashes in runs if docs > max_df)
        lines.append(
            f"Site template (fingerprints in more than max_df = {max_df:,} pages) is {100 * template / held:.1f}% "
            f"of what the pages hold; {template_pairs:,} more pairs share only template."
        )
    clusters = stats.get("clusters")
    if clusters:
        lines.append(f"{clusters:,} near-duplicate clusters hold {stats.get('clustered_documents') or 0:,} pages.")
    r2: float | None = (stats.get("fit") or {}).get("r2")
    if r2 is not None and r2 < 0.9:
        lines.append(
            f"The power-law fit of the hash frequencies is poor (R² {r2:.2f}): the rank–frequency curve is "
            "not a line on log axes, so read its plot, not the slope."
        )
    return lines


def headline_html(lines: Sequence[str]) -> str:
    return '<section class="headline">' + "".join(f"<p>{esc(line)}</p>" for line in lines) + "</section>" if lines else ""

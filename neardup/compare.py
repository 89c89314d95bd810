"""Crawl over crawl: the numbers of a baseline and a current crawl side by side, per host, the duplicate
clusters that are new, gone or grown, and the pages of the current crawl that duplicate a baseline page.

Within one database the two crawls are sources, clustered together at the setting: a current page
duplicates a baseline page when they share a cluster. Across two database files only the exact texts can
be matched (each file holds its own sketches): there a current page duplicates a baseline page when their
words are the same, and two clusters are one when they share a text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .analysis import Analysis, Fingerprints, analyze, load_fingerprints, subset_fingerprints
from .clusters import components
from .config import Config
from .errors import NeardupError
from .store import Store, is_database_file

NUMBERS = ("total_pages", "exact_duplicates", "near_duplicates", "unique_pages", "redundant_pct")
CHANGES = ("new", "gone", "grown", "shrunk", "same")


@dataclass(slots=True)
class Comparison:
    baseline: str
    current: str
    numbers: pd.DataFrame  # metric, baseline, current, change
    hosts: pd.DataFrame  # host, pages and redundant % on each side
    clusters: (
        pd.DataFrame
    )  # one row per duplicate cluster on either side: baseline_pages, current_pages, change
    repeats: pd.DataFrame  # current pages that duplicate a baseline page, with that page
    matched_by: str  # "cluster" (one database) or "exact text" (two files)

    def counts(self) -> dict[str, int]:
        found = self.clusters["change"].value_counts()
        return {c: int(found.get(c, 0)) for c in CHANGES}

    def as_dict(self, *, top: int = 20) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "current": self.current,
            "matched_by": self.matched_by,
            "numbers": self.numbers.to_dict(orient="records"),
            "clusters": self.counts(),
            "current_pages_duplicating_baseline": len(self.repeats),
            "hosts": self.hosts.to_dict(orient="records"),
            "changed_clusters": self.clusters[self.clusters["change"] != "same"]
            .head(top)
            .to_dict(orient="records"),
            "repeats": self.repeats.head(top).to_dict(orient="records"),
        }


def resolve_source(sources: pd.DataFrame, name: str) -> int:
    """The source id a name means: its id, its path or the file name of its path."""
    if name.isdigit() and int(name) in set(sources["source_id"]):
        return int(name)
    hits = sources[(sources["path"] == name) | (sources["path"].map(lambda p: Path(p).name) == name)]
    if len(hits) == 1:
        return int(hits["source_id"].iloc[0])
    known = ", ".join(f"{r.source_id} ({Path(r.path).name})" for r in sources.itertuples()) or "none"
    what = "names several sources" if len(hits) else "is no source"
    raise NeardupError(f"{name!r} {what} of this database; name one by id or file name: {known}")


def _side_numbers(base: Analysis, cur: Analysis) -> pd.DataFrame:
    rows = [(k, base.numbers[k], cur.numbers[k]) for k in NUMBERS]
    df = pd.DataFrame(rows, columns=["metric", "baseline", "current"])
    df["change"] = (df["current"] - df["baseline"]).round(2)
    return df


def _side_hosts(base: Analysis, cur: Analysis) -> pd.DataFrame:
    cols = ["host", "pages", "redundant", "redundant_pct"]
    hosts = base.hosts[cols].merge(
        cur.hosts[cols], on="host", how="outer", suffixes=("_baseline", "_current")
    )
    for c in ("pages", "redundant"):
        for side in ("baseline", "current"):
            hosts[f"{c}_{side}"] = hosts[f"{c}_{side}"].fillna(0).astype(np.int64)
    hosts["redundant_pct_change"] = (
        hosts["redundant_pct_current"].fillna(0) - hosts["redundant_pct_baseline"].fillna(0)
    ).round(1)
    return hosts.sort_values(
        ["redundant_current", "pages_current"], ascending=False, kind="stable"
    ).reset_index(drop=True)


def _changes(pages: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cluster changes and repeats from pages with side ("baseline" / "current"), group (the joint cluster),
    page_id, url and exact_key."""
    content = pages[pages["group"].notna()]
    # Pages per group and side (a crosstab, counted with bincount: pandas' crosstab runs Python per group).
    codes, groups = pd.factorize(content["group"], sort=True)
    on_base = (content["side"] == "baseline").to_numpy()
    b = np.bincount(codes[on_base], minlength=len(groups))
    c = np.bincount(codes[~on_base], minlength=len(groups))
    change = np.select(
        [(c >= 2) & (b < 2), (b >= 2) & (c < 2), (b >= 2) & (c > b), (b >= 2) & (c < b)],
        ["new", "gone", "grown", "shrunk"],
        "same",
    )
    clusters = pd.DataFrame(
        {"group": np.asarray(groups, dtype=np.int64), "baseline_pages": b, "current_pages": c}
    )
    clusters["change"] = change
    clusters = clusters[(b >= 2) | (c >= 2)]
    example = content.sort_values("page_id").groupby("group")["url"].first()
    clusters["example_url"] = clusters["group"].map(example)
    order = {k: i for i, k in enumerate(CHANGES)}
    clusters = clusters.sort_values(
        ["change", "current_pages"], key=lambda s: s.map(order) if s.name == "change" else -s, kind="stable"
    ).reset_index(drop=True)

    first_base = (
        content[content["side"] == "baseline"]
        .sort_values("page_id")
        .groupby("group")[["page_id", "url", "exact_key"]]
        .first()
        .add_prefix("baseline_")
    )
    repeats = content[content["side"] == "current"].join(first_base, on="group", how="inner")
    repeats = repeats.assign(same_text=repeats["exact_key"] == repeats["baseline_exact_key"])
    repeats = repeats[["page_id", "url", "baseline_page_id", "baseline_url", "same_text"]].reset_index(
        drop=True
    )
    return clusters.rename(columns={"group": "cluster"}), repeats


def compare_sources(
    fp: Fingerprints, config: Config, baseline: int, current: int, names: tuple[str, str]
) -> Comparison:
    """Two sources of one database, clustered together at `config`'s setting, as if they were all the
    database holds: each side's numbers are its own, and texts join only through pages of the two.
    `fp` may hold other sources too (the same result as `load_fingerprints` of the two alone)."""
    src = fp.pages["source_id"].to_numpy()
    on_base, on_cur = src == baseline, src == current
    base = analyze(subset_fingerprints(fp, on_base), config)
    cur = analyze(subset_fingerprints(fp, on_cur), config)
    joint = analyze(subset_fingerprints(fp, on_base | on_cur), config).pages
    pages = joint.assign(
        side=np.where(joint["source_id"].to_numpy() == baseline, "baseline", "current"),
        group=joint["cluster_id"],
    )
    clusters, repeats = _changes(pages)
    return Comparison(*names, _side_numbers(base, cur), _side_hosts(base, cur), clusters, repeats, "cluster")


def compare_files(base: Analysis, cur: Analysis, names: tuple[str, str]) -> Comparison:
    """Two database files, each analysed on its own; clusters matched by the texts they share."""
    cols = ["page_id", "url", "exact_key", "cluster_id"]
    both = pd.concat(
        [base.pages[cols].assign(side="baseline"), cur.pages[cols].assign(side="current")], ignore_index=True
    )
    content = both["cluster_id"].notna()
    node_of = pd.factorize(both["side"] + ":" + both["cluster_id"].astype("string"))[0]
    text_of = pd.factorize(both["exact_key"])[0]
    n_nodes = int(node_of.max(initial=-1)) + 1
    # A cluster node and a text node are joined for every content page: clusters sharing a text are one.
    edges_a = node_of[content.to_numpy()]
    edges_b = n_nodes + text_of[content.to_numpy()]
    labels = components(n_nodes + int(text_of.max(initial=-1)) + 1, edges_a, edges_b)
    group = pd.array(np.where(content, labels[node_of], 0), dtype="Int64")
    group[~content.to_numpy()] = pd.NA
    # Page ids of two files overlap: the current file's order comes after the baseline's.
    offset = int(base.pages["page_id"].max()) if len(base.pages) else 0
    both["page_id"] = both["page_id"] + np.where(both["side"] == "current", offset, 0)
    clusters, repeats = _changes(both.assign(group=group))
    repeats["page_id"] = repeats["page_id"] - offset
    return Comparison(
        *names, _side_numbers(base, cur), _side_hosts(base, cur), clusters, repeats, "exact text"
    )


def per_source_numbers(fp: Fingerprints, config: Config, sources: pd.DataFrame) -> pd.DataFrame:
    """The numbers of each source on its own, in load order (one row per source): the trend over crawls."""
    rows = []
    src = fp.pages["source_id"].to_numpy()
    for s in sources.sort_values("source_id").itertuples():
        keep = src == s.source_id
        if not keep.any():
            continue
        n = analyze(subset_fingerprints(fp, keep), config).numbers
        rows.append(
            {
                "source_id": int(s.source_id),
                "source": Path(s.path).name,
                "loaded_at": s.loaded_at,
                **{k: n[k] for k in NUMBERS},
            }
        )
    return pd.DataFrame(rows, columns=["source_id", "source", "loaded_at", *NUMBERS])


def open_comparison(
    db: str, baseline: str, current: str, config: Config, *, jobs: int | None = None
) -> Comparison:
    """`neardup compare`: two source names of `db`, or two database files (crawl dumps of those names in
    the working directory are the sources loaded from them)."""
    if is_database_file(baseline) and is_database_file(current):
        analyses = []
        for path in (baseline, current):
            with Store(path, on_demand=True) as store:
                analyses.append(analyze(load_fingerprints(store, config, jobs=jobs), config))
        return compare_files(analyses[0], analyses[1], (baseline, current))
    if not Path(db).exists():
        raise NeardupError(f"no database at {db}: name two sources of --db, or two database files")
    with Store(db, on_demand=True) as store:
        sources = store.sources()
        b, c = resolve_source(sources, baseline), resolve_source(sources, current)
        if b == c:
            raise NeardupError(f"--baseline and --current name the same source ({b})")
        fp = load_fingerprints(store, config, jobs=jobs, source_ids=[b, c])
    return compare_sources(fp, config, b, c, (baseline, current))


def comparison_text(cmp: Comparison, *, top: int = 10) -> str:
    lines = [f"neardup compare  baseline {cmp.baseline}  ->  current {cmp.current}", ""]
    lines.append(f"  {'':<20} {'baseline':>10} {'current':>10} {'change':>9}")
    for r in cmp.numbers.itertuples():
        fmt = ".2f" if r.metric == "redundant_pct" else ",.0f"
        lines.append(f"  {r.metric:<20} {r.baseline:>10{fmt}} {r.current:>10{fmt}} {r.change:>+9{fmt}}")
    k = cmp.counts()
    lines += [
        "",
        f"  duplicate clusters: {k['new']} new, {k['gone']} gone, {k['grown']} grown, {k['shrunk']} shrunk, "
        f"{k['same']} the same (matched by {cmp.matched_by})",
        f"  current pages that duplicate a baseline page: {len(cmp.repeats):,}",
        "",
        "  per host (redundant %: baseline -> current):",
    ]
    for h in cmp.hosts.head(top).itertuples():
        lines.append(
            f"    {h.host:<30} {h.pages_baseline:>7,} -> {h.pages_current:>7,} pages  "
            f"{h.redundant_pct_baseline:>5.1f}% -> {h.redundant_pct_current:>5.1f}%"
        )
    changed = cmp.clusters[cmp.clusters["change"] != "same"].head(top)
    if len(changed):
        lines += ["", "  changed clusters:"]
        for c in changed.itertuples():
            lines.append(
                f"    {c.change:<7} {c.baseline_pages:>4} -> {c.current_pages:>4} pages  {c.example_url}"
            )
    return "\n".join(lines)

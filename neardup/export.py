"""Cluster assignments as CSV, one row per page, and the `dupcheck.yaml` that replays the run.

CSV goes through `csvsafe.to_csv` (spreadsheet formulas defused)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .config import save_config
from .csvsafe import to_csv
from .engine import Analysis

COLUMNS = [
    "url", "cluster_id", "cluster_size", "is_representative", "representative_url",
    "similarity_to_representative", "method", "shingle_size", "threshold", "degenerate",
]


def clusters_frame(analysis: Analysis) -> pd.DataFrame:
    """One row per page. Degenerate pages have no cluster and name their reason in `degenerate`.

    `similarity_to_representative` is in the threshold's unit: Hamming bits for simhash, the MinHash
    Jaccard estimate for minhash (1.0 / 0 bits for an exact duplicate of the representative).
    """
    c = analysis.config
    p = analysis.pages
    out = pd.DataFrame({
        "url": p["url"],
        "cluster_id": p["cluster_id"],
        "cluster_size": p["cluster_size"],
        "is_representative": p["is_representative"].where(p["cluster_id"].notna(), False),
        "representative_url": p["representative_url"],
        "similarity_to_representative": p["similarity_to_representative"].round(4),
        "method": c.method,
        "shingle_size": c.shingle_size,
        "threshold": int(c.threshold) if c.method == "simhash" else c.threshold,
        "degenerate": p["degenerate"].fillna(""),
    })
    return out[COLUMNS]


def write_clusters_csv(analysis: Analysis, path: str | Path) -> int:
    df = clusters_frame(analysis)
    to_csv(df, path)
    return len(df)


def write_export(analysis: Analysis, csv_path: str | Path, yaml_path: str | Path | None = None) -> Path:
    """Write the cluster CSV and, beside it unless given, `dupcheck.yaml`. Returns the YAML path."""
    csv_path = Path(csv_path)
    yaml_path = Path(yaml_path) if yaml_path else csv_path.with_name("dupcheck.yaml")
    write_clusters_csv(analysis, csv_path)
    save_config(analysis.config, yaml_path)
    return yaml_path

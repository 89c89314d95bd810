"""Home at a setting whose fingerprints are not computed yet: the three numbers estimated from a sample of the
pages, clearly labeled, while the exact set is computed in the background under one progress bar; the page
draws the exact numbers when it is done (`estimate`, `ui.background`)."""

from __future__ import annotations

import streamlit as st

from ..config import Config
from ..estimate import Estimate, Estimated
from ..report import describe_config
from ..store import Store
from .background import JobState
from .data import FINGERPRINT_JOBS, get_estimate, is_computed, want_computed
from .render import md_escape

# How often the progress bar is redrawn (and the page checks whether the exact numbers are in).
PROGRESS_EVERY_S = 1.0
ESTIMATE_LABEL = "Estimate from {sample:,} of {total:,} pages"
NUMBER_TITLES = {
    "byte_identical_duplicates": "Byte-identical duplicates",
    "exact_duplicates": "Exact duplicates",
    "near_duplicates": "Near duplicates",
}


def interval_text(value: Estimated) -> str:
    """The caption under an estimated number."""
    if value.value is None:
        return "too few near duplicates in the sample to scale from"
    if value.exact:
        return "does not depend on shingle size or method: the exact count"
    return f"95% interval {value.low:,} to {value.high:,}"


def draw_estimate(estimate: Estimate) -> None:
    st.info(
        f"**{ESTIMATE_LABEL.format(sample=estimate.sample_pages, total=estimate.total_pages)}** "
        f"(computed in {estimate.seconds:,.1f} s): this setting's exact numbers are being computed and replace "
        "these when done. The sample's counts at this setting and at "
        f"{md_escape(describe_config(estimate.reference))} scale that setting's exact numbers.",
        icon=":material/query_stats:",
    )
    for column, (name, title) in zip(st.columns(3), NUMBER_TITLES.items(), strict=True):
        value = estimate.numbers[name]
        column.metric(f"{title} (estimate)", "?" if value.value is None else f"≈ {value.value:,}")
        column.caption(interval_text(value))


@st.fragment(run_every=PROGRESS_EVERY_S)
def job_progress(path: str, config: Config) -> None:
    """The background computation's one progress bar; the whole page runs again when it is done."""
    job = FINGERPRINT_JOBS.progress(path, config)
    if job is None or job.state is JobState.DONE:
        st.rerun(scope="app")
    st.progress(min(job.share, 1.0), text=job.label())
    if job.state is JobState.FAILED:
        st.error(md_escape(job.label()))


def pending_setting(store: Store, path: str, config: Config) -> bool:
    """When `config`'s fingerprint set is neither in memory nor stored and the latest exact analysis can be
    scaled to it: draw the estimate and the progress of its computation (started here, once the estimate is
    drawn: the estimate has both cores) and return True."""
    if is_computed(store, path, config):
        return False
    estimate = get_estimate(store, path, config)
    if estimate is None:  # nothing to scale from (a first start): the page waits under the progress bar
        return False
    st.caption(f"Database {md_escape(path)} · {md_escape(describe_config(config))}")
    draw_estimate(estimate)
    want_computed(store, path, config)
    job_progress(path, config)
    return True

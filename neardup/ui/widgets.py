"""Sidebar controls and shared renderers."""

from __future__ import annotations

from typing import Literal, overload

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ..config import Config, default_threshold
from ..errors import NeardupError
from ..labels import BUCKET_WIDTH, bucket_edges, bucket_range
from ..removals import removals
from ..store import Store
from .data import (
    clear_caches,
    get_store,
    let_go_of_pages_frames,
    load_sample_if_empty,
    refresh_if_changed,
    sample_source,
)
from .drilldown import open_host
from .render import counted, md_escape
from .state import (
    KEY_CONFIG,
    KEY_CONFIG_SYNC,
    KEY_FLASH,
    KEY_SIDEBAR_DRAWN,
    KEY_THRESHOLDS,
    SHINGLE_RANGE,
    W_HOSTS_TABLE,
    W_METHOD,
    W_NORMALIZE,
    W_REMOVE_CONFIRM,
    W_REMOVE_FORM,
    W_REMOVE_SOURCE,
    W_SHINGLE,
    W_SIMILARITY,
    current_config,
    db_path,
    default_config,
    setting_params,
    threshold_scale,
    w_threshold,
)


def _seed_widgets(config: Config) -> None:
    """Give each sidebar widget its value: a widget the last run drew on this page keeps its own (a press
    may have changed it), every other key gets the setting's: `config` (the session's, which the sidebar
    records at the end of each run) and, per threshold scale, the last threshold used on it. Widgets take no
    `value=`: session state is their one source of truth, so a rerun never makes a new widget that forgets
    the user's last change.

    A value assigned here is pushed to the browser with the run's widget, over what the widget shows. So a
    widget this run draws is assigned only when code changed the setting or the last run did not draw it
    (another page: a widget's id includes its page; or another method or similarity). Assigned on every run,
    it would undo each key press that lands while a run is under way: that run pushes the value from before
    the press. Streamlit's own state of a widget the last run did not draw is not read: a value assigned
    while the widget was hidden outlives the user's later moves of it and would come back on the next page.
    The keys of the widgets this run hides (the other scales' thresholds) are assigned on every run, which
    keeps them and pushes nothing."""
    state = st.session_state
    sync = state.pop(KEY_CONFIG_SYNC, False)
    thresholds = state.setdefault(
        KEY_THRESHOLDS,
        {
            "simhash": default_threshold("simhash"),
            "containment": default_threshold("minhash"),
            "jaccard": default_threshold("minhash"),
        },
    )
    thresholds[threshold_scale(config)] = (
        int(config.threshold) if config.method == "simhash" else config.threshold
    )
    values = {
        W_METHOD: config.method,
        W_NORMALIZE: config.normalize,
        W_SHINGLE: config.shingle_size,
        W_SIMILARITY: config.similarity,
        **{w_threshold(scale): v for scale, v in thresholds.items()},
    }
    page = _page_id()
    last_page, last_drawn = state.get(KEY_SIDEBAR_DRAWN, ("", ()))
    same_page = last_page == page and not sync
    # the widgets this run draws: on the page the last run drew, the method radio's and the similarity
    # radio's values say which (a press may have changed them); else the setting's
    method = state[W_METHOD] if same_page and W_METHOD in state else config.method
    similarity = state[W_SIMILARITY] if same_page and W_SIMILARITY in state else config.similarity
    drawn = {W_METHOD, W_NORMALIZE, W_SHINGLE}
    drawn |= {w_threshold("simhash")} if method == "simhash" else {W_SIMILARITY, w_threshold(similarity)}
    kept = set(last_drawn) if same_page else set()
    state[KEY_SIDEBAR_DRAWN] = (page, tuple(sorted(drawn)))
    for key, value in values.items():
        if key not in drawn or key not in kept or key not in state:
            state[key] = value


def _page_id() -> str:
    """The page this run draws (its script hash; "" outside a script run)."""
    ctx = get_script_run_ctx()
    return ctx.page_script_hash if ctx else ""


def setting_sidebar() -> Config:
    """Method, shingle size, threshold and normalization controls; returns the chosen setting, which is also
    written to the URL (a reload, a bookmark or a shared link opens the same setting)."""
    config = current_config()
    _seed_widgets(config)
    state = st.session_state
    with st.sidebar:
        st.header("Setting")
        method = st.radio(
            "Method",
            ["minhash", "simhash"],
            horizontal=True,
            key=W_METHOD,
            help="MinHash finds candidate pairs by LSH, then scores each exactly (Jaccard / containment of the "
            "shingle sets); SimHash compares 64-bit fingerprints (Hamming bits).",
        )
        normalize = st.radio(
            "Boilerplate",
            ["main", "strip"],
            horizontal=True,
            key=W_NORMALIZE,
            help=(
                f"main: main-content extraction ({config.extractor}'s extractor; `extractor:` in dupcheck.yaml). "
                "strip: drop nav/header/footer/script/... tags."
            ),
        )
        shingle_size = st.slider("Shingle size (words)", *SHINGLE_RANGE, key=W_SHINGLE)
        similarity = state[W_SIMILARITY]
        if method == "simhash":
            threshold: float = st.slider(
                "Threshold (max Hamming bits)",
                0,
                config.simhash_max_bits,
                key=w_threshold("simhash"),
                help="Two pages are near duplicates when their fingerprints differ in at most this many bits.",
            )
        else:
            similarity = st.radio(
                "Similarity",
                ["containment", "jaccard"],
                horizontal=True,
                key=W_SIMILARITY,
                help="Containment catches partial copies (print versions, syndicated articles).",
            )
            floor = config.replace(similarity=similarity, threshold=1.0).minhash_floor
            threshold = st.slider(
                f"Threshold (min {similarity})",
                floor,
                1.0,
                step=0.01,
                key=w_threshold(similarity),
                help=f"Pairs are stored down to {floor:g} {similarity}; moving the threshold only filters them.",
            )
    config = config.with_shingle_size(shingle_size, min_words=default_config().min_words).replace(
        method=method, normalize=normalize, threshold=threshold, similarity=similarity
    )
    state[KEY_THRESHOLDS][threshold_scale(config)] = threshold
    state[KEY_CONFIG] = config
    params = setting_params(config)
    if any(st.query_params.get(k) != v for k, v in params.items()):
        st.query_params.update(params)
    return config


def flash(message: str) -> None:
    """A confirmation for the next run to show (a toast sent just before st.rerun would be lost)."""
    st.session_state[KEY_FLASH] = message


@overload
def open_database(*, setting: Literal[True] = True, frames: bool = False) -> tuple[Store, str, Config]: ...
@overload
def open_database(*, setting: Literal[False], frames: bool = False) -> tuple[Store, str, None]: ...


def open_database(*, setting: bool = True, frames: bool = False) -> tuple[Store, str, Config | None]:
    """Every page starts here: the shared store (or a clear error), the sample on first start, the setting.
    A page that draws from the analysis' pages frame says so (`frames`); any other lets go of it
    (`let_go_of_pages_frames`)."""
    if not frames:
        let_go_of_pages_frames()
    path = db_path()
    try:  # a foreign or damaged file, or one a CLI ingest is writing: one line, not a traceback
        store = get_store(path)
        loaded_sample = load_sample_if_empty(store)
        refresh_if_changed(store)
        sample = sample_source(store)
        n_pages = store.count_pages()
    except NeardupError as exc:
        st.error(str(exc))
        st.stop()
    if loaded_sample:
        st.toast("No database was named and this one was empty: the bundled sample crawl was loaded.")
    if sample is not None:  # on every page of every session while its pages are in
        where = (
            "on the **Load** page and take the sample out there"
            if setting
            else "below and take the sample out under *Sources loaded*"  # the Load page
        )
        st.info(
            f"This database holds the bundled **sample crawl** ({int(sample['n_loaded']):,} synthetic pages). "
            f"Load your own dump {where} (*Remove this source*).",
            icon=":material/science:",
        )
    message = st.session_state.pop(KEY_FLASH, None)
    if message:
        st.toast(message)
    if n_pages == 0 and setting:  # the Load page (setting=False) is how pages get in
        st.info("This database holds no pages yet. Load a crawl dump on the **Load** page.")
        st.stop()
    return store, path, setting_sidebar() if setting else None


def escaped_text(label: str, value: object) -> None:
    """A label and an untrusted value (URL, title), shown as plain text."""
    st.caption(label)
    st.text(str(value) if value is not None else "")


def remove_source_form(store: Store, sources: pd.DataFrame) -> None:
    """Take one loaded source out of the database (its pages and everything derived from them; labels stay)."""
    names = {
        int(r.source_id): f"{r.source_id}: {r.path} ({counted(int(r.n_loaded), 'page')})"
        for r in sources.itertuples()
    }
    sample = sample_source(store)
    ids = list(names)
    default = (
        ids.index(int(sample["source_id"])) if sample is not None and int(sample["source_id"]) in ids else 0
    )
    with st.form(W_REMOVE_FORM, border=False):
        c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
        chosen = c1.selectbox(
            "Source", ids, index=default, format_func=names.__getitem__, key=W_REMOVE_SOURCE
        )
        confirmed = c1.checkbox(
            "Yes, remove its pages, texts, sketches and the pairs derived from them (labels stay)",
            key=W_REMOVE_CONFIRM,
        )
        clicked = c2.form_submit_button("Remove this source", width="stretch")
    if clicked and not confirmed:
        st.warning("Tick the box to confirm the removal.")
    elif clicked:
        try:
            n_pages = store.remove_source(int(chosen))
        except NeardupError as exc:
            st.error(md_escape(str(exc)))
            return
        clear_caches()
        # a toast is Markdown: the file's name is escaped (the select box shows it as text)
        flash(f"Removed source {md_escape(names[int(chosen)])}: {counted(n_pages, 'page')} out, labels kept.")
        st.rerun()


# --- charts and tables shared by the pages ---------------------------------------------------------------
COUNT_AXES = ("log", "linear")  # the Explore histogram's count axis (W_COUNT_AXIS)


def hosts_table(hosts: pd.DataFrame, *, height: int) -> None:
    """The per-host rollup (`Analysis.hosts`), most redundant pages first; a host picked in it opens its
    clusters and pairs (`drilldown.open_host`)."""
    st.markdown("**Redundant pages per host**")
    st.caption("Pick a host (the box at the start of its row) to see its clusters and pairs.")
    event = st.dataframe(
        hosts,
        hide_index=True,
        placeholder="–",
        width="stretch",
        height=height,
        on_select="rerun",
        selection_mode="single-row",
        key=W_HOSTS_TABLE,
        column_config={
            "pages": st.column_config.NumberColumn(
                "pages", format="localized", help="Content pages of the host."
            ),
            "redundant": st.column_config.NumberColumn(
                "redundant",
                format="localized",
                help="Its pages that deduplication removes: in a cluster, not its representative.",
            ),
            "redundant_pct": st.column_config.NumberColumn("redundant %", format="%.1f"),
        },
    )
    rows = event.selection.rows if event and event.selection else []
    if rows:
        open_host(str(hosts.iloc[rows[0]]["host"]))


def cluster_size_figure(sizes: pd.Series) -> go.Figure:
    """Bars of how many duplicate clusters have each size. Sizes are categories: a numeric axis puts ticks
    between two sizes (1.5, 2.5 pages)."""
    counts = sizes.value_counts().sort_index()
    fig = go.Figure(
        go.Bar(
            x=[str(int(s)) for s in counts.index],
            y=counts.to_numpy(),
            marker_color="#72B7B2",
            # the count over each bar: beside thousands of two-page clusters, a few large ones make no visible bar
            texttemplate="%{y:,}",
            textposition="outside",
            cliponaxis=False,
            hovertemplate="%{y:,} clusters of %{x} pages<extra></extra>",
        )
    )
    fig.update_layout(
        title="Duplicate cluster sizes",
        xaxis=dict(title="pages in cluster", type="category"),
        yaxis_title="clusters",
        margin=dict(t=50, b=10),
    )
    return fig


def cluster_size_chart(sizes: pd.Series, *, height: int) -> None:
    """The cluster-size bars (`Analysis.cluster_sizes`), or a line saying there is no cluster."""
    if len(sizes):
        st.plotly_chart(cluster_size_figure(sizes).update_layout(height=height), width="stretch")
    else:
        st.info("No duplicate clusters at this threshold.")


def similarity_figure(
    pairs: pd.DataFrame, decided: pd.DataFrame, config: Config, *, count_axis: str = "log"
) -> go.Figure:
    """Candidate pairs per bucket (`pairs`: a `bucket` column), the labeled duplicate share per bucket
    (`decided`: `bucket` and `label`, duplicate or not) on a second axis, and the threshold as a dashed line.

    MinHash bars span their bucket (`neardup.labels.bucket_of`: [edge, edge + 0.05), the last [0.95, 1.0]),
    from the floor up (empty buckets show as gaps), so no bar reaches past a similarity of 1. SimHash has one
    bar per bit. `count_axis`: "log" or "linear"."""
    simhash = config.method == "simhash"
    counts = pairs["bucket"].value_counts().sort_index()
    if simhash:
        bar = go.Bar(x=counts.index, y=counts.to_numpy(), name="candidate pairs", marker_color="#4C78A8")
    else:
        counts = counts.reindex(bucket_edges(config), fill_value=0)
        bar = go.Bar(
            x=counts.index,
            y=counts.to_numpy(),
            offset=0,
            width=BUCKET_WIDTH,
            name="candidate pairs",
            marker_color="#4C78A8",
            marker_line=dict(color="white", width=1),
            customdata=[bucket_range(b, config) for b in counts.index],
            hovertemplate="%{customdata}: %{y:,} pairs<extra></extra>",
        )
    fig = go.Figure(bar)
    if len(decided):
        share = decided.groupby("bucket")["label"].apply(lambda s: (s == "duplicate").mean())
        share = share.reindex(counts.index)  # unlabeled buckets stay gaps, not interpolated
        mid = 0 if simhash else BUCKET_WIDTH / 2  # at the middle of the bucket's bar
        fig.add_trace(
            go.Scatter(
                x=share.index + mid,
                y=share.to_numpy(),
                name="labeled duplicate share",
                yaxis="y2",
                mode="lines+markers",
                marker_color="#E45756",
                connectgaps=False,
            )
        )
    fig.add_vline(
        x=config.threshold,
        line_dash="dash",
        line_color="black",
        annotation_text=f"threshold {config.threshold:g}",
    )
    log = count_axis == "log"
    fig.update_layout(
        title="Candidate pairs by similarity",
        xaxis_title="Hamming distance (bits)" if simhash else f"{config.similarity} (buckets of 0.05)",
        height=380,
        yaxis=dict(type="log", dtick=1, title="pairs (log scale)") if log else dict(title="pairs"),
        yaxis2=dict(
            overlaying="y",
            side="right",
            range=[-0.08, 1.08],  # padded: a 0% or 100% share is a dot above the axis, not on it
            tickvals=[0, 0.25, 0.5, 0.75, 1],
            tickformat=".0%",
            title="labeled duplicate share",
            showgrid=False,
            zeroline=False,
        ),
        legend=dict(orientation="h", y=-0.25),
        margin=dict(t=50, b=10),
    )
    if simhash:
        fig.update_xaxes(autorange="reversed", dtick=1)
    else:
        ticks = [*counts.index, 1.0]  # every bin edge, 1.0 the last
        fig.update_xaxes(range=[ticks[0] - 0.005, 1.005], tickvals=ticks, tickformat=".2f")
    return fig


def removals_table(html: str, config: Config) -> None:
    """What `config`'s normalization removed from one page (`neardup.removals`), biggest first."""
    found = removals(html, config)
    st.caption(md_escape(found.summary))
    if not found.parts:
        st.caption("Nothing with text was removed.")
        return
    st.dataframe(
        pd.DataFrame([(p.where, p.words, p.text) for p in found.parts], columns=["where", "words", "text"]),
        hide_index=True,
        placeholder="–",
        width="stretch",
        column_config={
            "where": st.column_config.TextColumn(
                "where",
                help="The element removed, or body: text inside the "
                "page's content area that main-content extraction left out.",
            ),
            "text": st.column_config.TextColumn("text", width="large"),
        },
    )

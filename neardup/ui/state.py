"""Session-state keys, defaults and the setting's URL form, in one place."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..config import Config, Method, default_threshold
from ..errors import ConfigError
from ..store import DEFAULT_DB

KEY_CONFIG = "neardup.config"
KEY_CONFIG_SYNC = "neardup.config.sync"  # set when code (not a widget) changed the setting
KEY_LABELER = "neardup.labeler"
# ui.audit_session.AuditSession: the Audit tab's labels (saved, waiting), the actions its keys gave, its
# place in the queue, the pairs it skipped and the categories it chose
KEY_AUDIT_SESSION = "neardup.audit.session"
# A pair another page opens in Audit (page_a, page_b), and what opened it (one of OPENED_BY_*, for its
# caption): the Audit page moves them into its AuditSession.
KEY_AUDIT_PAIR = "neardup.audit.pair"
KEY_AUDIT_OPENED_BY = "neardup.audit.opened_by"
OPENED_BY_CLUSTERS, OPENED_BY_LIST, OPENED_BY_UNDO, OPENED_BY_BACK = "clusters", "list", "undo", "back"
KEY_AUDIT_SEED = "neardup.audit.seed"
W_LABELER = "neardup.audit.labeler_input"
W_NOTE = "neardup.audit.note"
W_PER_BUCKET = "neardup.audit.per_bucket"
W_COMPARE_BASELINE = "neardup.compare.baseline"  # URL rules page: the two sources compared
W_COMPARE_CURRENT = "neardup.compare.current"
W_COMPARE_SHOWN = "neardup.compare.shown"  # the comparison of the two, drawn only while on
W_QUEUE = "neardup.audit.queue"  # which queue the Audit page serves (a queues.AuditQueue)
KEY_FLASH = "neardup.flash"  # a confirmation shown once on the next run (st.toast does not survive st.rerun)

# Sidebar widget keys. The threshold has one slider per scale (bits, Jaccard, containment): their ranges differ.
W_METHOD = "neardup.setting.method"
W_NORMALIZE = "neardup.setting.normalize"
W_SHINGLE = "neardup.setting.shingle_size"
W_SIMILARITY = "neardup.setting.similarity"
KEY_THRESHOLDS = "neardup.setting.thresholds"  # scale -> last threshold, kept while its slider is hidden
KEY_SIDEBAR_DRAWN = "neardup.setting.drawn"  # (page, widget keys) the last run drew in the sidebar
# The Audit and Tune pages' own keys.
W_LABEL_KEYS = "neardup.audit.label_keys"  # the component that sends label keys with their press times
W_AUDIT_CATEGORY = "neardup.audit.cat."  # + the category's index: its button (keys 1-8)
W_AUDIT_SHOW_HTML = "neardup.audit.show_html"
W_AUDIT_SHOW_STRIPPED = "neardup.audit.show_stripped"
W_AUDIT_SHOW_PROGRESS = "neardup.audit.show_progress"  # the per-bucket table, drawn only while on
W_AUDIT_SHOW_LABELED = "neardup.audit.show_labeled"  # the labeled pairs list, drawn only while on
W_AUDIT_LIST = "neardup.audit.list"  # the labeled pairs table (its selected row opens the pair)
W_AUDIT_LIST_LABEL = "neardup.audit.list.label"  # the list's filters
W_AUDIT_LIST_CATEGORY = "neardup.audit.list.cat"
W_AUDIT_LIST_LABELER = "neardup.audit.list.who"
W_AUDIT_LIST_BUCKET = "neardup.audit.list.bucket"
W_AUDIT_LIST_OPEN = "neardup.audit.list.open"
W_TUNE_LABELER_1 = "neardup.tune.labeler_1"  # the two labelers whose agreement Tune shows
W_TUNE_LABELER_2 = "neardup.tune.labeler_2"
W_TUNE_USE = "neardup.tune.use_threshold"
W_TUNE_LABEL_MORE = "neardup.tune.label_more"  # opens Audit's active queue

# Keys of the pages' own widgets and state.
W_COUNT_AXIS = "neardup.explore.count_axis"  # the Explore histogram's count axis: log or linear
W_CLUSTERS_TABLE = "neardup.clusters.table"  # the Clusters page's cluster table (its row selection)
W_RULES_TABLE = "neardup.rules.table"  # the URL rules page's table of learned rules
KEY_LAST_UPLOAD = "neardup.last_upload"  # (name, size) of the dump the Load page last loaded from an upload
KEY_LABELS_UPLOAD = "neardup.labels_upload"  # (name, size) of the labels.csv the Export page last imported
W_REMOVE_FORM = "neardup.load.remove"  # the Load page's "Remove this source" form
W_REMOVE_SOURCE = "neardup.load.remove_source"
W_REMOVE_CONFIRM = "neardup.load.remove_confirm"
# Evidence and drill-down (Home, Explore, Clusters).
W_HOSTS_TABLE = "neardup.hosts.table"  # the per-host table of Home and Explore (a selected host drills down)
KEY_DRILL_HOST = "neardup.drill.host"  # the host a click drilled down to: Clusters sets its filters from it
W_FILTER_HOST = "neardup.clusters.filter.host"  # the Clusters page's filters
W_FILTER_CATEGORY = "neardup.clusters.filter.category"
W_FILTER_SIZE = "neardup.clusters.filter.size"
W_FILTER_URL = "neardup.clusters.filter.url"
W_HOST_PAIRS = "neardup.clusters.host_pairs"  # the pairs of the filtered host (a selected row shows evidence)
W_EVIDENCE_LEFT = "neardup.clusters.evidence.left"  # the two members whose evidence Clusters shows
W_EVIDENCE_RIGHT = "neardup.clusters.evidence.right"
W_EVIDENCE_SHOW_PASSAGES = "neardup.evidence.show_passages"  # Audit: the highlighted passages, drawn while on
# The Clusters filters in the URL: ?host=...&category=...&size=2-5&url=print
FILTER_PARAMS = {
    "host": W_FILTER_HOST,
    "category": W_FILTER_CATEGORY,
    "size": W_FILTER_SIZE,
    "url": W_FILTER_URL,
}


def w_threshold(scale: str) -> str:
    return f"neardup.setting.threshold.{scale}"


def threshold_scale(config: Config) -> str:
    return "simhash" if config.method == "simhash" else config.similarity


# The setting in the URL: ?method=minhash&normalize=main&shingle=5&similarity=containment&threshold=0.8
URL_FIELDS = ("method", "normalize", "shingle", "similarity", "threshold")
SHINGLE_RANGE = (3, 10)  # words; what the sidebar slider offers


def setting_params(config: Config) -> dict[str, str]:
    """The URL query parameters that name `config`'s setting (its other fields come from the defaults)."""
    threshold = str(int(config.threshold)) if config.method == "simhash" else f"{config.threshold:g}"
    return {
        "method": config.method,
        "normalize": config.normalize,
        "shingle": str(config.shingle_size),
        "similarity": config.similarity,
        "threshold": threshold,
    }


def setting_from_params(base: Config, params: Mapping[str, str]) -> Config:
    """`base` with the setting named in URL query parameters. Raises ConfigError naming a bad value."""
    changes: dict[str, object] = {}
    if "method" in params:
        changes["method"] = params["method"]
        changes["threshold"] = default_threshold(params["method"])  # type: ignore[arg-type]
    for name in ("normalize", "similarity"):
        if name in params:
            changes[name] = params[name]
    try:
        if "shingle" in params:
            shingle_size = int(params["shingle"])
            if not SHINGLE_RANGE[0] <= shingle_size <= SHINGLE_RANGE[1]:
                raise ValueError(
                    f"shingle={shingle_size} is not from {SHINGLE_RANGE[0]} to {SHINGLE_RANGE[1]}"
                )
            base = base.with_shingle_size(shingle_size)
        if "threshold" in params:
            value = float(params["threshold"])
            # A whole number of bits is an int; anything else (8.99, -0.5, inf) goes to the config as it came,
            # which names it, rather than being truncated into range.
            simhash = changes.get("method", base.method) == "simhash"
            changes["threshold"] = int(value) if simhash and value.is_integer() else value
    except ValueError as exc:
        raise ConfigError(f"bad setting in the link: {exc}") from exc
    return base.replace(**changes)


def other_method(config: Config, thresholds: Mapping[str, float]) -> Config:
    """`config` under the other method (SimHash <-> MinHash), at that method's last threshold in the session
    (`thresholds`: scale -> threshold, as the sidebar keeps them), else its default."""
    method: Method = "minhash" if config.method == "simhash" else "simhash"
    scale = "simhash" if method == "simhash" else config.similarity
    value = thresholds.get(scale, default_threshold(method))
    return config.replace(method=method, threshold=int(value) if method == "simhash" else float(value))


def db_path() -> str:
    return os.environ.get("NEARDUP_DB", DEFAULT_DB)


def default_config() -> Config:
    """The settings in NEARDUP_CONFIG's file, else the defaults. A bad file raises ConfigError."""
    path = os.environ.get("NEARDUP_CONFIG")
    if path and Path(path).exists():
        from ..config import load_config

        return load_config(path)
    return Config()


def current_config() -> Config:
    """The session's setting; a new session takes it from the URL, else from the defaults. A bad
    NEARDUP_CONFIG stops the page with its one-line error."""
    import streamlit as st

    if KEY_CONFIG not in st.session_state:
        try:
            base = default_config()
        except ConfigError as exc:
            from .render import md_escape

            st.error(f"NEARDUP_CONFIG: {md_escape(str(exc))}")
            st.stop()
        params = {k: st.query_params[k] for k in URL_FIELDS if k in st.query_params}
        try:
            config = setting_from_params(base, params)
        except ConfigError as exc:
            from .render import md_escape

            # The values come from the link: whoever wrote it chose them, so none may become Markdown.
            st.warning(
                f"The link's setting was not used ({md_escape(str(exc))}); the default setting is shown."
            )
            config = base
        st.session_state[KEY_CONFIG] = config
    return st.session_state[KEY_CONFIG]


def set_config(config: Config) -> None:
    """Change the setting from code: the sidebar widgets take it on the next run."""
    import streamlit as st

    st.session_state[KEY_CONFIG] = config
    st.session_state[KEY_CONFIG_SYNC] = True

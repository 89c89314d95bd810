"""The Audit page's parts, each drawn from what it is given: the label bar, the pair side by side, the
progress and stop rule, the labeled pairs list, and the labels waiting for a busy file. The tab's state is
an `AuditSession`; what one run reads (the store, the setting, the pairs, the queue) is an `AuditRun`."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from ..audit import PAIR_KEY, PairDetail
from ..config import Config
from ..errors import DatabaseLocked
from ..labels import ADJUDICATOR, CATEGORIES, STOP_HALF_WIDTH, decision_at
from ..markdown import counted, md_escape, score_text
from ..queues import PairQueue, QueueBasis
from ..readers.capture import describe_archive_record
from ..store import Store
from .audit_session import LABEL_NAMES, AuditSession
from .data import LabelView
from .evidence import show_pair_evidence
from .keys import DIFF_KEY, PAGE_KEYS_HINT
from .labeling import LabelSession, fetch_sides
from .render import show_diff
from .state import (
    OPENED_BY_BACK,
    OPENED_BY_CLUSTERS,
    OPENED_BY_LIST,
    OPENED_BY_UNDO,
    W_AUDIT_CATEGORY,
    W_AUDIT_LIST,
    W_AUDIT_LIST_BUCKET,
    W_AUDIT_LIST_CATEGORY,
    W_AUDIT_LIST_LABEL,
    W_AUDIT_LIST_LABELER,
    W_AUDIT_LIST_OPEN,
    W_AUDIT_SHOW_HTML,
    W_AUDIT_SHOW_PROGRESS,
    W_AUDIT_SHOW_STRIPPED,
    W_NOTE,
)
from .widgets import flash, removals_table

CATEGORY_KEYS = 8  # categories on the keys 1-8
LABEL_KEYS = (("duplicate", "d"), ("not", "n"), ("unsure", "u"))  # the label buttons and their keys
MOVE_KEYS = (("Previous", "k", -1), ("Next", "j", 1))
SUGGESTED_ICON, CHOSEN_ICON = ":material/lightbulb:", ":material/check_circle:"
KEY_HINT = (
    "Are the two pages the same content? **d** duplicate · **n** not · **u** unsure. The kind in blue "
    "(keys 1-8) is saved with the label, at first the suggested one (the bulb); press another to change it. **s** skip · "
    f"**z** undo · **j** / **k** next / previous · **{DIFF_KEY}** first change and back · **Esc** leaves a field · "
    f"{PAGE_KEYS_HINT}"
)
LIST_COLUMNS = ["label", "category", "labeler", "bucket", "url_a", "url_b", "note", "labeled_at"]
WAITING_RETRY_S = 1.0  # how often labels waiting for a busy file are tried again
HTML_SHOWN_CHARS = 30_000  # of a page's raw HTML
OPENED_BY_CAPTIONS = {
    OPENED_BY_UNDO: "Pair reopened by undo: its label is taken back, label it again",
    OPENED_BY_BACK: "A pair you labeled (k goes further back, j forward): a new label replaces yours",
    OPENED_BY_LIST: "Pair opened from the list of labeled pairs: a new label replaces yours",
    OPENED_BY_CLUSTERS: "Pair opened from the Clusters page: the representative on the left",
}


@dataclass(frozen=True, slots=True)
class AuditRun:
    """What one run of the Audit page reads: the database (`store` for reads, `quick_store` for label
    writes and prefetches: a short wait for the file, no linger), the setting, its candidate pairs, the queue
    served, its quota and seed, and who labels."""

    store: Store
    quick_store: Store
    path: str
    config: Config
    pairs: pd.DataFrame
    queue: PairQueue
    per_bucket: int
    seed: int
    labeler: str

    @property
    def adjudicating(self) -> bool:
        return self.queue.kind.adjudicates

    def basis(self, view: LabelView, skipped: set[tuple[str, ...]]) -> QueueBasis:
        return QueueBasis(
            pairs=self.pairs,
            labels=view.labels,
            matched=view.matched,
            tallies=view.tallies,
            config=self.config,
            per_bucket=self.per_bucket,
            seed=self.seed,
            skipped=skipped,
            positions=view.index.exact,
        )


def label_bar(
    audit: AuditSession, detail: PairDetail, category: str | None, current: pd.Series | None, n_queue: int
) -> None:
    """Every action on a key: the labels, skip, undo, previous / next, the eight categories, a note."""
    bar = st.columns([1.3, 1.3, 1, 1, 1, 1, 1])
    for col, (choice, shortcut) in zip(bar, LABEL_KEYS, strict=False):
        col.button(
            LABEL_NAMES[choice],
            type="primary" if choice == "duplicate" else "secondary",
            shortcut=shortcut,
            width="stretch",
            on_click=audit.label,
            args=(choice,),
        )
    bar[3].button("Skip", shortcut="s", width="stretch", on_click=audit.skip)
    bar[4].button(
        "Undo", shortcut="z", width="stretch", on_click=audit.undo, disabled=not can_undo(audit.labels)
    )
    for col, (name, shortcut, step) in zip(bar[5:], MOVE_KEYS, strict=True):
        col.button(
            name,
            shortcut=shortcut,
            width="stretch",
            on_click=audit.step,
            args=(step,),
            disabled=not audit.can_step(step) and (current is None or n_queue < 2),
        )
    # Two rows of four: eight in one row cut the longer names ("templated siblings") at 1400 px.
    cats = [*st.columns(CATEGORY_KEYS // 2), *st.columns(CATEGORY_KEYS // 2)]
    # The chosen kind is in bold blue, not filled (a filled button reads as the Duplicate action); the
    # suggested one has a bulb, the chosen one a tick where it is not the suggested one.
    for i, name in enumerate(CATEGORIES[:CATEGORY_KEYS]):
        cats[i].button(
            f":blue[**{name}**]" if name == category else name,
            key=f"{W_AUDIT_CATEGORY}{i}",
            shortcut=str(i + 1),
            width="stretch",
            icon=SUGGESTED_ICON if name == detail.category else CHOSEN_ICON if name == category else None,
            help=f"Suggested: {md_escape(detail.category_reason)}" if name == detail.category else None,
            on_click=audit.choose,
            args=(name,),
        )
    note_col, why_col = st.columns([1, 2])
    note_col.text_input("Note", key=W_NOTE, placeholder="optional note", label_visibility="collapsed")
    suggestion = f"{SUGGESTED_ICON} Suggested category: **{md_escape(detail.category)}**, {md_escape(detail.category_reason)}."
    why_col.markdown(
        suggestion
        if category == detail.category
        else f"Category: :blue[**{md_escape(category or 'none')}**] ({SUGGESTED_ICON} suggested: "
        f"{md_escape(detail.category)}, {md_escape(detail.category_reason)})."
    )


def can_undo(labels: LabelSession) -> bool:
    return bool(labels.saved or labels.waiting)


def done_bar(audit: AuditSession) -> None:
    """The keys with no pair on screen: undo the last label, and k back through the pairs this tab labeled
    (the last pair of the queue labeled, it is the way to look at it again)."""
    row = st.container(horizontal=True)
    row.button("Undo the last label", shortcut="z", on_click=audit.undo, disabled=not can_undo(audit.labels))
    name, shortcut, step = MOVE_KEYS[0]
    row.button(name, shortcut=shortcut, on_click=audit.step, args=(step,), disabled=not audit.can_step(step))


def show_pair(run: AuditRun, detail: PairDetail) -> None:
    """The two pages side by side (earlier fetch left), their scores, and the word diff or the one text."""
    L, R = detail.left, detail.right
    changed = sum(s.n_words for s in detail.segments if s.op in ("delete", "insert", "replace"))
    st.caption(
        f"SimHash {detail.simhash_bits} bits · MinHash Jaccard (est.) {score_text(detail.minhash_jaccard)} · exact "
        f"Jaccard {score_text(detail.exact_jaccard)} · exact containment {score_text(detail.exact_containment)} "
        f"({run.config.shingle_size}-word shingles) · {counted(changed, 'changed word')}"
    )
    left, right = st.columns(2)
    sides = fetch_sides(L["fetched_at"], R["fetched_at"])
    for col, page, side in ((left, L, sides[0]), (right, R, sides[1])):
        with col:
            st.code(page["url"], language=None, wrap_lines=True)
            fetched = page["fetched_at"]
            st.caption(
                f"{side} · fetched {fetched if not pd.isna(fetched) else 'unknown'} · host "
                f"{md_escape(page['host'])} · status {page['status'] if not pd.isna(page['status']) else '?'}"
                f" · {page['n_words']:,} words"
            )
            if (record := describe_archive_record(page.get("extra"))) is not None:
                st.caption(md_escape(record))
    show_pair_evidence(run.store, run.path, run.config, L, R)  # the highlighted passages behind a switch
    if detail.same_text:
        st.markdown(f"**Main text: identical on both sides** ({L['n_words']:,} words), shown once")
        with st.container(height=420):
            st.text(L["text"] or "")
    else:
        st.markdown(
            "**Main text, word diff** (deleted on the left in red, inserted on the right in green; long "
            "equal runs folded; punctuation around a word is no change)"
        )
        show_diff(detail.segments)

    t1, t2 = st.columns(2)
    with t1:
        show_html = st.toggle("Raw HTML (as source, never rendered)", key=W_AUDIT_SHOW_HTML)
    with t2:
        show_stripped = st.toggle("What normalization removed", key=W_AUDIT_SHOW_STRIPPED)
    if show_html or show_stripped:
        h1, h2 = st.columns(2)
        for col, page in ((h1, L), (h2, R)):
            with col:
                html = run.store.page_source(int(page["page_id"]))
                if show_html:
                    st.code(
                        html[:HTML_SHOWN_CHARS]
                        + ("\n... (truncated)" if len(html) > HTML_SHOWN_CHARS else ""),
                        language="html",
                        height=300,
                    )
                if show_stripped:
                    removals_table(html, run.config)


def progress(view: LabelView, config: Config) -> None:
    """How many pairs are labeled; on its switch, the per-bucket table and the stop rule."""
    n_contested = int(view.matched["contested"].sum()) if "contested" in view.matched else 0
    st.caption(
        f"Progress: {counted(int(view.tallies['labeled'].sum()), 'labeled pair')} at this setting ("
        f"{counted(len(view.labels), 'label')} in all"
        + (f", {counted(n_contested, 'contested pair')}" if n_contested else "")
        + ")"
    )
    if st.toggle("Progress per bucket and the stop rule", key=W_AUDIT_SHOW_PROGRESS):
        d = decision_at(view.tallies, config)
        st.markdown(
            f"{d.summary().capitalize()}. "
            + (
                f"Both are known to +/-{STOP_HALF_WIDTH:g}: you can stop labeling."
                if d.done
                else f"About {int(d.more.sum())} more labels would bring both to +/-{STOP_HALF_WIDTH:g} (the "
                "*active* queue in the sidebar serves them)."
                if d.reachable
                else f"Labeling every pair left would not bring both to +/-{STOP_HALF_WIDTH:g}."
            )
        )
        st.dataframe(
            view.tallies[["bucket", "pairs", "labeled", "duplicates"]],
            hide_index=True,
            placeholder="–",
            width="stretch",
        )


def labeled_list(audit: AuditSession, view: LabelView, pairs: pd.DataFrame) -> None:
    """Every label (filter by label, category, labeler, bucket); a selected row's pair can be reopened."""
    labels = view.labels
    if labels.empty:
        st.caption("No labels yet.")
        return
    listed = labels.merge(pairs[[*PAIR_KEY, "page_a", "page_b", "bucket"]], on=PAIR_KEY, how="left")
    f1, f2, f3, f4 = st.columns(4)
    by_label = f1.multiselect("Label", sorted(listed["label"].unique()), key=W_AUDIT_LIST_LABEL)
    by_cat = f2.multiselect(
        "Category", sorted(listed["category"].dropna().unique()), key=W_AUDIT_LIST_CATEGORY
    )
    by_who = f3.multiselect("Labeler", sorted(listed["labeler"].dropna().unique()), key=W_AUDIT_LIST_LABELER)
    by_bucket = f4.multiselect(
        "Bucket",
        sorted(listed["bucket"].dropna().unique()),
        format_func=lambda b: f"{b:g}",
        key=W_AUDIT_LIST_BUCKET,
        help="Pairs that are no candidate at this setting have no bucket.",
    )
    keep = pd.Series(True, index=listed.index)
    for column, picked in (
        ("label", by_label),
        ("category", by_cat),
        ("labeler", by_who),
        ("bucket", by_bucket),
    ):
        if picked:
            keep &= listed[column].isin(picked)
    shown = listed[keep].sort_values("labeled_at", ascending=False).reset_index(drop=True)
    event = st.dataframe(
        shown[LIST_COLUMNS],
        hide_index=True,
        placeholder="–",
        width="stretch",
        height=260,
        on_select="rerun",
        selection_mode="single-row",
        key=W_AUDIT_LIST,
    )
    rows = event.selection.rows if event and event.selection else []
    if rows and not pd.isna(shown.iloc[rows[0]]["page_a"]):
        row = shown.iloc[rows[0]]
        st.button(
            "Open this pair to change its label",
            key=W_AUDIT_LIST_OPEN,
            on_click=audit.open,
            args=((int(row["page_a"]), int(row["page_b"])), OPENED_BY_LIST),
        )
    elif rows:
        st.caption("That pair is no candidate pair at this setting.")


def waiting_labels(audit: AuditSession, store: Store) -> None:
    """While labels wait for the file (or it was busy): how many, and a retry every WAITING_RETRY_S."""
    if audit.labels.waiting or audit.labels.busy is not None:
        st.fragment(retry_waiting, run_every=WAITING_RETRY_S)(audit, store)


def retry_waiting(audit: AuditSession, store: Store) -> None:
    """Write the waiting labels; once they are written and the file is free, the page is drawn anew."""
    messages, _ = audit.save(store)
    labels = audit.labels
    if not labels.waiting:
        try:
            store.labels_version()  # the file is free again
        except DatabaseLocked:
            pass
        else:
            labels.busy = None
            flash(" · ".join(messages) if messages else "The database is free again.")
            st.rerun(scope="app")
    st.warning(busy_message(labels), icon=":material/hourglass_top:")


def busy_message(labels: LabelSession) -> str:
    waiting = len(labels.waiting)
    return (
        (
            f"{counted(waiting, 'label')} waiting to be saved: "
            if waiting
            else "No label waiting, but the database is busy: "
        )
        + f"{md_escape(labels.busy or 'the database is busy')}. They stay in this tab and are written as soon as it "
        "is free (keep this tab open)."
    )


def queue_done(audit: AuditSession, run: AuditRun, basis: QueueBasis) -> None:
    """Say why the queue is empty, and what to do next (the quota queue: a key for more pairs)."""
    st.success(run.queue.done_message(basis))
    if (quota := run.queue.more_quota(basis)) is not None:
        st.button(
            f"More pairs: {quota} per bucket",
            shortcut="m",
            on_click=audit.ask_more,
            args=(quota,),
            help="Sets *Pairs per bucket* in the sidebar, from the keyboard: the slider there, once "
            "clicked, keeps the focus and takes the label keys.",
        )


def where_caption(
    audit: AuditSession,
    run: AuditRun,
    basis: QueueBasis,
    current: pd.Series | None,
    queued: pd.DataFrame,
    position: int,
) -> str:
    """Which pair of which queue is shown, and why it comes now."""
    if current is None:
        return OPENED_BY_CAPTIONS.get(audit.opened_by or "", "Pair opened from another page") + (
            f" · your label is the adjudicated final one (labeler '{ADJUDICATOR}')"
            if run.adjudicating
            else ""
        )
    return run.queue.caption(basis, current, audit.counter(position, len(queued)), len(queued))

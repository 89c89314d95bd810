"""Audit: sampled pairs per similarity bucket, side by side, labeled from the keyboard.

Every action is a button with a shortcut. Everything under the sidebar is one fragment: a key reruns only
it, a label is written at its top, the labels are re-read only when their version changed (and this
session's own label updates them in place), the pair's pages, scores and diff are cached per pair and the
next pair is prefetched; the per-bucket table and the labeled pairs list are drawn only while switched on.

The page only draws: the tab's labels, undo, pending writes and place in the queue are an `AuditSession`
(`neardup.ui.audit_session`), the queues are `neardup.queues`, the parts of the page `neardup.ui.audit_page`.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.runtime.state import SessionStateProxy

from neardup import pairkey
from neardup.audit import PairDetail, PairKey, label_in
from neardup.errors import DatabaseLocked
from neardup.labels import ADJUDICATOR
from neardup.markdown import md_escape
from neardup.queues import PER_BUCKET_MAX, AuditQueue, pair_queue, queue_help
from neardup.ui.audit_page import (
    KEY_HINT,
    AuditRun,
    done_bar,
    label_bar,
    labeled_list,
    progress,
    queue_done,
    show_pair,
    waiting_labels,
    where_caption,
)
from neardup.ui.audit_session import LABEL_NAMES, AuditSession, PendingLabel, ShownPair, superseded_message
from neardup.ui.data import (
    LabelView,
    get_candidate_pairs,
    get_label_store,
    get_pair_detail,
    label_view,
    label_view_with,
    prefetch_pair_detail,
)
from neardup.ui.guard import one_line_errors
from neardup.ui.keys import KEYBOARD_SCRIPT
from neardup.ui.label_press import mount_label_keys
from neardup.ui.labeling import LABELER_MAX_CHARS, LabelingChoice, choice_from_params
from neardup.ui.state import (
    KEY_AUDIT_OPENED_BY,
    KEY_AUDIT_PAIR,
    KEY_AUDIT_SEED,
    KEY_AUDIT_SESSION,
    KEY_FLASH,
    KEY_LABELER,
    KEY_THRESHOLDS,
    W_AUDIT_SHOW_LABELED,
    W_LABELER,
    W_NOTE,
    W_PER_BUCKET,
    W_QUEUE,
    other_method,
)
from neardup.ui.widgets import flash, open_database

SCROLL_TO_TOP = "<script>/* pair {0:d} {1:d} */ document.querySelector('[data-testid=\"stMain\"]')?.scrollTo(0, 0);</script>"


def pair_key(detail: PairDetail) -> PairKey:
    left, right = detail.left, detail.right
    return pairkey.pair_key(left["canonical_url"], left["md5"], right["canonical_url"], right["md5"])


def clear_note(audit: AuditSession, state: SessionStateProxy) -> None:
    """Empty the note of a pair left (before the note field is drawn again)."""
    if audit.note_reset:
        state[W_NOTE] = ""
        audit.note_reset = False


@st.fragment
def labeling(audit: AuditSession, run: AuditRun) -> None:
    with one_line_errors("the Audit page's labeling"):
        label_and_draw(audit, run, st.session_state)


def label_and_draw(audit: AuditSession, run: AuditRun, state: SessionStateProxy) -> None:
    """The label bar, the pair, the progress and the labeled pairs: what a key press reruns.

    The labels and undos the keys gave are written first (committed before the page says so or draws the
    next pair); while another process holds the file they wait in this tab (`waiting_labels`). The labels
    are read again only when another session changed them (their version before this tab's write is not
    the one kept); the pair shown next was prefetched, so a label key reads nothing more."""
    if audit.more is not None:  # the quota slider is outside this fragment: the app's run sets it
        st.rerun(scope="app")
    clear_note(audit, state)
    note = state.get(W_NOTE) or ""
    undone = False
    for action in audit.take_pending():
        if isinstance(action, PendingLabel):
            audit.give(action, pairs=run.pairs, labeler=run.labeler, note=note, config=run.config)
        else:
            flash(audit.undo_newest(run.quick_store))
            undone = True
    clear_note(audit, state)
    messages, current = audit.save(run.quick_store)
    view = audit.view if current and not undone else None
    if view is None or view.pairs is not run.pairs:
        try:
            with run.store.reading():
                view = label_view(run.store, run.pairs, audit.view)
        except DatabaseLocked as exc:
            audit.labels.busy = audit.labels.busy or str(exc)
            view = audit.view
            if view is None or view.pairs is not run.pairs:
                waiting_labels(audit, run.quick_store)
                return
        else:
            audit.view = view
            messages += [superseded_message(g, stored) for g, stored in audit.labels.superseded(view.labels)]
    for message in messages:
        st.toast(message)
    for row in audit.labels.rows_waiting():  # drawn as given: the queue moves on while they wait
        view = label_view_with(view, row)
    waiting = st.container()  # above the pair, filled once the pair is drawn (which may find the file busy)
    upcoming = draw_labeling(audit, run, view, state)
    with waiting:
        waiting_labels(audit, run.quick_store)
    # The pair that comes next is read and diffed on a background thread while this one is read, so the key
    # that leads there only draws it.
    if upcoming is not None:
        prefetch_pair_detail(run.quick_store, run.path, *upcoming, run.config)


def draw_labeling(
    audit: AuditSession, run: AuditRun, view: LabelView, state: SessionStateProxy
) -> tuple[int, int] | None:
    """Draw the fragment from `view`; the pages of the pair that comes next in the queue, if any."""
    if message := state.pop(KEY_FLASH, None):  # a fragment run does not pass open_database, which shows it
        st.toast(message)
    basis = run.basis(view, audit.skipped)
    queued = run.queue.pairs(basis)
    position, opened = audit.position, audit.opened
    current: pd.Series | None = None
    page_a = page_b = None
    if opened:
        page_a, page_b = opened
    elif queued.empty:
        queue_done(audit, run, basis)
    else:
        position %= len(queued)
        current = queued.iloc[position]
        page_a, page_b = int(current["page_a"]), int(current["page_b"])

    # No key acts on the pair drawn last while this one is read: it may not come (the file is busy).
    audit.shown = None
    try:  # A pair opened from elsewhere keeps its order (Clusters: the representative on the left).
        detail = (
            get_pair_detail(run.quick_store, run.path, page_a, page_b, run.config, keep_order=bool(opened))
            if page_a and page_b
            else None
        )
    except DatabaseLocked as exc:
        audit.labels.busy = str(exc)
        st.info(
            "The next pair shows as soon as the database is free: another process holds it. Labels given "
            "so far are kept in this tab.",
            icon=":material/hourglass_top:",
        )
        return None
    key = pair_key(detail) if detail else None
    # The pair the label and category keys apply to, set before anything of it is drawn: a run that drew the
    # next pair's caption but was cut short before its buttons leaves the previous run's buttons (and their
    # arguments) on screen, so the callbacks read the pair from here, not from arguments bound when a button
    # was drawn.
    if detail is not None and key is not None:
        pages = (int(detail.left["page_id"]), int(detail.right["page_id"]))
        audit.shown = ShownPair(key, pages, detail.category, run.adjudicating)
        # A new pair opens at its top (the label bar), wherever the last one was scrolled to. The script is
        # a constant but for the two page ids, so the same pair drawn again (a category key) does not run it.
        with st.container(gap=None):  # the script's and the component's elements take no room
            st.html(SCROLL_TO_TOP.format(*pages), unsafe_allow_javascript=True)
            mount_label_keys(audit.label)  # the label keys, with their press times
            mine = label_in(view.labels, key, ADJUDICATOR if run.adjudicating else run.labeler or None)
            st.caption(
                where_caption(audit, run, basis, current, queued, position)
                + (
                    f" · **your label: {LABEL_NAMES.get(mine['label'], mine['label']).lower()}**"
                    + (f" ({md_escape(mine['category'])})" if mine["category"] else "")
                    if mine is not None
                    else ""
                )
            )
        st.caption(KEY_HINT)
        # The pair is sent before the label bar above it (its 25 widgets are the same from pair to pair; the
        # last run's stay on screen meanwhile, and their keys act on `audit.shown`): the URLs and the diff
        # the analyst reads next reach the browser first.
        bar = st.container()
        show_pair(run, detail)
        with bar:
            label_bar(audit, detail, audit.category(key, detail.category), current, len(queued))
    else:
        done_bar(audit)

    progress(view, run.config)
    if st.toggle("Labeled pairs", key=W_AUDIT_SHOW_LABELED, help="Filter, reopen a pair, change its label."):
        labeled_list(audit, view, run.pairs)

    if current is None or len(queued) < 2:
        return None
    nxt = queued.iloc[(position + 1) % len(queued)]
    return int(nxt["page_a"]), int(nxt["page_b"])


def main() -> None:
    st.set_page_config(page_title="neardup · Audit", layout="wide")
    st.title("Audit pairs")
    with st.container(gap=None):  # the script's element takes no room; sent first, it catches the first key
        st.html(KEYBOARD_SCRIPT, unsafe_allow_javascript=True)
    store, path, config = open_database()
    state = st.session_state
    audit: AuditSession = state.setdefault(KEY_AUDIT_SESSION, AuditSession())
    # A new session takes who labels, the quota and the queue from the URL (a reload, a shared link); one set
    # already (Tune sends the analyst to the active queue) keeps its value.
    if any(key not in state for key in (W_PER_BUCKET, W_QUEUE, W_LABELER)):
        linked = choice_from_params(
            st.query_params,
            LabelingChoice(state.get(KEY_LABELER, ""), 5, AuditQueue.QUOTA),
            per_bucket_max=PER_BUCKET_MAX,
        )
        state.setdefault(W_PER_BUCKET, linked.per_bucket)
        state.setdefault(W_QUEUE, linked.queue)
        state.setdefault(W_LABELER, linked.labeler)
    state.setdefault(KEY_AUDIT_SEED, 7)
    for widget_key in (W_PER_BUCKET, KEY_AUDIT_SEED, W_LABELER, W_QUEUE):
        # keep the values while another page runs (Streamlit drops unrendered widgets' state)
        state[widget_key] = state[widget_key]
    if audit.more is not None:  # the "more pairs" key's quota, set before the slider is drawn
        state[W_PER_BUCKET], audit.more = audit.more, None
    if (opened := state.pop(KEY_AUDIT_PAIR, None)) is not None:  # a pair another page opened (Clusters)
        audit.open(opened, state.pop(KEY_AUDIT_OPENED_BY, None))

    pairs = get_candidate_pairs(store, path, config.fingerprint_key, config.similarity, config)
    if pairs.empty:
        st.info("No candidate pairs at this setting: nothing to audit. Try another method or shingle size.")
        st.stop()

    with st.sidebar:
        st.header("Labeling")
        st.text_input(
            "Your name",
            key=W_LABELER,
            max_chars=LABELER_MAX_CHARS,
            help="Each labeler keeps their own label of a pair.",
        )
        state[KEY_LABELER] = state[W_LABELER]
        per_bucket = st.slider(
            "Pairs per bucket",
            1,
            PER_BUCKET_MAX,
            key=W_PER_BUCKET,
            help="Label until every similarity bucket has this many decided labels.",
        )
        seed = st.number_input("Seed", 0, 10**6, key=KEY_AUDIT_SEED)
        kind = AuditQueue(
            st.radio(
                "Queue",
                list(AuditQueue),
                key=W_QUEUE,
                format_func=lambda q: AuditQueue(q).display_name,
                help=queue_help(),
            )
            or AuditQueue.QUOTA
        )
    linked_params = LabelingChoice(state[W_LABELER], int(per_bucket), kind).params()
    if any(st.query_params.get(k) != v for k, v in linked_params.items()):
        st.query_params.update(linked_params)
    other = other_method(config, state.get(KEY_THRESHOLDS, {}))
    # The other method's pairs are read here, outside the labeling fragment's read of the file: their
    # fingerprints may have to be computed first, a write, which cannot start inside a read.
    other_pairs = (
        get_candidate_pairs(store, path, other.fingerprint_key, other.similarity, other)
        if kind.compares_methods
        else None
    )
    run = AuditRun(
        store=store,
        quick_store=get_label_store(path),
        path=path,
        config=config,
        pairs=pairs,
        queue=pair_queue(kind, other_pairs=other_pairs, other=other),
        per_bucket=int(per_bucket),
        seed=int(seed),
        labeler=state[W_LABELER],
    )
    labeling(audit, run)


main()

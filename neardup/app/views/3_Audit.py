"""Audit: sampled pairs per similarity bucket, side by side, labeled from the keyboard.

Every action is a button with a shortcut. Everything under the sidebar is one fragment: a key reruns only
it, a label is written at its top, the labels are re-read only when their version changed (and this
session's own label updates them in place), the pair's pages, scores and diff are cached per pair and the
next pair is prefetched; the per-bucket table and the labeled pairs list are drawn only while switched on.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import streamlit as st

from neardup.audit import (
    PAIR_KEY,
    PairDetail,
    PairKey,
    label_in,
    labels_by_labeler,
    labels_with,
    method_disagreements,
)
from neardup.errors import DatabaseLocked
from neardup.labels import (
    ADJUDICATOR,
    CATEGORIES,
    STOP_HALF_WIDTH,
    active_queue,
    audit_queue,
    bucket_range,
    decision_at,
)
from neardup.readers.capture import describe_archive_record
from neardup.ui.data import (
    LabelView,
    get_candidate_pairs,
    get_label_store,
    get_pair_detail,
    label_view,
    label_view_with,
    prefetch_pair_detail,
)
from neardup.ui.evidence import show_pair_evidence
from neardup.ui.guard import one_line_errors
from neardup.ui.keys import DIFF_KEY, KEYBOARD_SCRIPT
from neardup.ui.labeling import (
    LABELER_MAX_CHARS,
    GivenLabel,
    LabelingChoice,
    LabelSession,
    choice_from_params,
    fetch_sides,
    score_text,
)
from neardup.ui.render import counted, md_escape, show_diff
from neardup.ui.state import (
    AUDIT_QUEUES,
    KEY_AUDIT_BACK,
    KEY_AUDIT_CATEGORY,
    KEY_AUDIT_HISTORY,
    KEY_AUDIT_LABELS,
    KEY_AUDIT_MORE,
    KEY_AUDIT_OPENED_BY,
    KEY_AUDIT_PAIR,
    KEY_AUDIT_PENDING,
    KEY_AUDIT_POS,
    KEY_AUDIT_SEED,
    KEY_AUDIT_SHOWN,
    KEY_AUDIT_SKIPPED,
    KEY_FLASH,
    KEY_LABELER,
    KEY_THRESHOLDS,
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
    W_AUDIT_SHOW_LABELED,
    W_AUDIT_SHOW_PROGRESS,
    W_AUDIT_SHOW_STRIPPED,
    W_LABELER,
    W_NOTE,
    W_PER_BUCKET,
    W_QUEUE,
    other_method,
)
from neardup.ui.widgets import flash, open_database, removals_table

CATEGORY_KEYS = 8  # categories on the keys 1-8
PER_BUCKET_MAX = 30  # the Pairs per bucket slider's end
MORE_PER_BUCKET = 5  # the "more pairs" key: this many more pairs in the least labeled bucket with pairs left
LABEL_NAMES = {"duplicate": "Duplicate", "not": "Not duplicate", "unsure": "Unsure"}
WAITING_RETRY_S = 1.0  # how often labels waiting for a busy file are tried again

st.set_page_config(page_title="neardup · Audit", layout="wide")
st.title("Audit pairs")
with st.container(gap=None):  # the script's element takes no room; sent first, it catches the first key
    st.html(KEYBOARD_SCRIPT, unsafe_allow_javascript=True)
store, path, config = open_database()
quick_store = get_label_store(path)  # label writes and prefetches: a short wait for the file, no linger
state = st.session_state
skipped: set[tuple[str, ...]] = state.setdefault(KEY_AUDIT_SKIPPED, set())
session: LabelSession = state.setdefault(KEY_AUDIT_HISTORY, LabelSession())
chosen: dict[tuple[str, ...], str | None] = state.setdefault(KEY_AUDIT_CATEGORY, {})
# A new session takes who labels, the quota and the queue from the URL (a reload, a shared link); one set
# already (Tune sends the analyst to the active queue) keeps its value.
if any(key not in state for key in (W_PER_BUCKET, W_QUEUE, W_LABELER)):
    linked = choice_from_params(
        st.query_params,
        LabelingChoice(state.get(KEY_LABELER, ""), 5, AUDIT_QUEUES[0]),
        per_bucket_max=PER_BUCKET_MAX,
    )
    state.setdefault(W_PER_BUCKET, linked.per_bucket)
    state.setdefault(W_QUEUE, linked.queue)
    state.setdefault(W_LABELER, linked.labeler)
state.setdefault(KEY_AUDIT_SEED, 7)
if W_LABELER not in state:
    state[W_LABELER] = state.get(KEY_LABELER, "")
for widget_key in (W_PER_BUCKET, KEY_AUDIT_SEED, W_LABELER, W_QUEUE):
    state[widget_key] = state[
        widget_key
    ]  # keep the values while another page runs (Streamlit drops unrendered widgets' state)


def leave_pair() -> None:
    state.pop(KEY_AUDIT_PAIR, None)
    state.pop(KEY_AUDIT_OPENED_BY, None)
    state[W_NOTE] = ""
    state[KEY_AUDIT_BACK] = 0


def labels_given(view: LabelView | None) -> pd.DataFrame | None:
    """The labels `view` holds with the labels waiting in this tab put in (None without a view)."""
    if view is None or view.pairs is not pairs:
        return None
    labels = view.labels
    for row in session.rows_waiting():
        labels = labels_with(labels, row)
    return labels


def give_label(
    labels: pd.DataFrame | None,
    choice: str,
    key: PairKey,
    pages: tuple[int, int],
    suggested: str | None,
    adjudicate: bool = False,
) -> GivenLabel:
    """The label given by a key on the pair shown, as a `Store.labels()` row, with what undo puts back."""
    labeler = ADJUDICATOR if adjudicate else state.get(W_LABELER) or None
    a, ma, b, mb = key
    row = {
        "url_a": a,
        "md5_a": ma,
        "url_b": b,
        "md5_b": mb,
        "label": choice,
        "category": chosen.get(key, suggested),
        "note": state.get(W_NOTE) or None,
        "labeler": labeler,
        "labeled_at": datetime.now(UTC).replace(tzinfo=None),
        "setting": json.dumps(config.to_dict()),
    }
    return GivenLabel(row, pages, label_in(labels, key, labeler) if labels is not None else None)


def labeled_message(given: GivenLabel) -> str:
    row = given.row
    return (
        ("Adjudicated: " if row["labeler"] == ADJUDICATOR else "Labeled ")
        + LABEL_NAMES[row["label"]].lower()
        + (f" · {md_escape(row['category'])}" if row["category"] else "")
    )


def superseded_message(given: GivenLabel, stored: dict[str, Any]) -> str:
    return (
        f"Your label {LABEL_NAMES[given.row['label']].lower()} of {md_escape(given.row['url_a'])} and "
        f"{md_escape(given.row['url_b'])} was replaced by a later one given elsewhere (another tab or window): "
        f"{LABEL_NAMES.get(stored['label'], stored['label']).lower()}. Reopen the pair to change it."
    )


def take_back() -> None:
    """Undo the newest label of this tab and reopen its pair."""
    undone = session.undo(quick_store)
    if undone.label is None:
        flash("Nothing to undo in this session.")
    elif undone.busy is not None:
        flash(f"Not undone: the database is busy ({undone.busy}). Press z again once it is free.")
    else:
        state[KEY_AUDIT_PAIR] = undone.label.pages
        state[KEY_AUDIT_OPENED_BY] = OPENED_BY_UNDO
        flash(
            f"Undone: {LABEL_NAMES[undone.label.row['label']].lower()} · the pair is open again"
            if undone.done
            else "Not undone: a later label of this pair, given elsewhere, replaced yours; the pair is open"
        )


def save_waiting() -> tuple[list[str], bool]:
    """Write the labels waiting in this tab: what to tell the analyst, and whether the labels kept are
    known current (labels were written, and no other session wrote one since the labels were read)."""
    saved = session.save(quick_store)
    messages = [labeled_message(g) + " · z undoes it" for g in saved.kept]
    messages += [
        f"Not kept: {labeled_message(g).lower()}; a later label of this pair, given elsewhere, stays"
        for g in saved.refused
    ]
    kept_view: LabelView | None = state.get(KEY_AUDIT_LABELS)
    current = saved.versions is not None and kept_view is not None and saved.versions[0] == kept_view.version
    if current and kept_view is not None and saved.versions is not None:
        view = kept_view
        for given in saved.kept:
            view = label_view_with(view, given.row)
        state[KEY_AUDIT_LABELS] = replace(view, version=saved.versions[1])
    return messages, current


def pair_key(detail: PairDetail) -> PairKey:
    (a, ma), (b, mb) = sorted(
        (
            (detail.left["canonical_url"], detail.left["md5"]),
            (detail.right["canonical_url"], detail.right["md5"]),
        )
    )
    return a, ma, b, mb


def label_pair(choice: str) -> None:
    # Of the pair this session's last run put on screen (see choose_category).
    if (shown := state.get(KEY_AUDIT_SHOWN)) is not None:
        key, pages, suggested, adjudicate = shown
        state.setdefault(KEY_AUDIT_PENDING, []).append(("label", (choice, key, pages, suggested, adjudicate)))


def undo() -> None:
    state.setdefault(KEY_AUDIT_PENDING, []).append(("undo", ()))


def skip() -> None:
    if (shown := state.get(KEY_AUDIT_SHOWN)) is not None:
        skipped.add(shown[0])
    leave_pair()


def move(step: int) -> None:
    """k goes back through the pairs this tab labeled, newest first, j forward again and then on in the
    queue; without labels to go back to they move in the queue."""
    given, back = session.given(), state.get(KEY_AUDIT_BACK, 0)
    back = min(back, len(given))
    if (step < 0 and back < len(given)) or (step > 0 and back > 1):
        back -= step
        state[KEY_AUDIT_PAIR] = given[-back].pages
        state[KEY_AUDIT_OPENED_BY] = OPENED_BY_BACK
        state[W_NOTE] = ""
        state[KEY_AUDIT_BACK] = back
        return
    if back == 0:
        state[KEY_AUDIT_POS] = state.get(KEY_AUDIT_POS, 0) + step
    leave_pair()


def choose_category(category: str) -> None:
    # Of the pair this session's last run put on screen (KEY_AUDIT_SHOWN), as label_pair.
    if (shown := state.get(KEY_AUDIT_SHOWN)) is not None:
        key = shown[0]
        chosen[key] = None if chosen.get(key) == category else category


def open_pair(pages: tuple[int, int]) -> None:
    state[KEY_AUDIT_PAIR] = pages
    state[KEY_AUDIT_OPENED_BY] = OPENED_BY_LIST


def more_per_bucket(quota: int) -> None:
    # The slider is in the sidebar, outside the fragment this key reruns: the fragment asks for a run of
    # the whole app (KEY_AUDIT_MORE), which draws the slider at its new value and the queue it makes.
    state[W_PER_BUCKET] = quota
    state[KEY_AUDIT_MORE] = True


def more_quota(tallies: pd.DataFrame, per_bucket: int) -> int | None:
    """The quota that brings MORE_PER_BUCKET more pairs to the least labeled bucket with pairs left (a
    quota at or under a bucket's labels brings none there); None when no quota brings more."""
    left = tallies[tallies["unlabeled"] > 0]
    if left.empty or per_bucket >= PER_BUCKET_MAX:
        return None
    return min(max(int(left["labeled"].min()) + MORE_PER_BUCKET, per_bucket + 1), PER_BUCKET_MAX)


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
    mode = st.radio(
        "Queue",
        AUDIT_QUEUES,
        key=W_QUEUE,
        help="*quota per bucket*: every similarity bucket gets *pairs per bucket* decided labels. *active*: the "
        "pair whose label narrows precision and recall at the threshold most, until both are known to "
        f"+/-{STOP_HALF_WIDTH:g}. *SimHash vs MinHash disagree*: pairs one method flags at its threshold and the "
        "other does not. *labelers disagree*: pairs labeled both duplicate and not; your label there is the "
        f"adjudicated final one (labeler '{ADJUDICATOR}').",
    )
adjudicating = mode == "labelers disagree"
linked_params = LabelingChoice(state[W_LABELER], int(per_bucket), mode).params()
if any(st.query_params.get(k) != v for k, v in linked_params.items()):
    st.query_params.update(linked_params)
other = other_method(config, state.get(KEY_THRESHOLDS, {}))
# The other method's pairs are read here, outside the labeling fragment's read of the file: their
# fingerprints may have to be computed first, a write, which cannot start inside a read.
other_pairs = (
    get_candidate_pairs(store, path, other.fingerprint_key, other.similarity, other)
    if mode == "SimHash vs MinHash disagree"
    else None
)
sim_cfg, mh_cfg = (config, other) if config.method == "simhash" else (other, config)
LABEL_KEYS = (("duplicate", "d"), ("not", "n"), ("unsure", "u"))  # the label buttons and their keys
MOVE_KEYS = (("Previous", "k", -1), ("Next", "j", 1))
SUGGESTED_ICON, CHOSEN_ICON = ":material/lightbulb:", ":material/check_circle:"
KEY_HINT = (
    "Are the two pages the same content? **d** duplicate · **n** not · **u** unsure. The kind in blue "
    "(keys 1-8) is saved with the label, at first the suggested one (the bulb); press another to change it. **s** skip · "
    f"**z** undo · **j** / **k** next / previous · **{DIFF_KEY}** first change and back · **Esc** leaves a field"
)
SCROLL_TO_TOP = "<script>/* pair {0:d} {1:d} */ document.querySelector('[data-testid=\"stMain\"]')?.scrollTo(0, 0);</script>"
LIST_COLUMNS = ["label", "category", "labeler", "bucket", "url_a", "url_b", "note", "labeled_at"]


def make_queue(view: LabelView) -> pd.DataFrame:
    """The pairs still to label in the chosen queue, in the order they come."""
    matched, labels = view.matched, view.labels
    if mode == "active":
        return active_queue(pairs, matched, view.tallies, config, seed=int(seed), skipped=skipped)
    if mode == "SimHash vs MinHash disagree" and other_pairs is not None:
        sim_pairs, mh_pairs = (pairs, other_pairs) if config.method == "simhash" else (other_pairs, pairs)
        queue = method_disagreements(
            sim_pairs, mh_pairs, simhash_bits=int(sim_cfg.threshold), minhash_threshold=mh_cfg.threshold
        )
        done = set(labels[PAIR_KEY].itertuples(index=False, name=None)) | skipped
        done_urls = {(a, b) for a, ma, b, mb in done if not ma and not mb}
        keep = [
            k not in done and (k[0], k[2]) not in done_urls
            for k in queue[PAIR_KEY].itertuples(index=False, name=None)
        ]
        return queue[keep].reset_index(drop=True)
    if adjudicating:
        contested = matched[matched["contested"]] if "contested" in matched else matched.iloc[:0]
        queue = contested[PAIR_KEY].merge(pairs[[*PAIR_KEY, "page_a", "page_b", "bucket"]], on=PAIR_KEY)
        queue = queue[[k not in skipped for k in queue[PAIR_KEY].itertuples(index=False, name=None)]]
        return queue.reset_index(drop=True)
    return audit_queue(
        pairs,
        matched,
        per_bucket=per_bucket,
        seed=int(seed),
        skipped=skipped,
        focus=config.threshold,
        positions=view.index.exact,
    )


def queue_done_message(view: LabelView) -> None:
    """Say why the queue is empty, and what to do next."""
    if mode == "active":
        d = decision_at(view.tallies, config)
        st.success(
            f"Stop: precision at {config.threshold:g} is {d.precision:.2f} [{d.precision_low:.2f}-"
            f"{d.precision_high:.2f}], recall {d.recall:.2f} [{d.recall_low:.2f}-{d.recall_high:.2f}]"
            + (
                f", both within +/-{STOP_HALF_WIDTH:g}."
                if d.done
                else "; no pair left that narrows them (every pair is labeled or skipped)."
            )
        )
    elif mode == "SimHash vs MinHash disagree":
        st.success(
            f"SimHash at {int(sim_cfg.threshold)} bits and MinHash at {mh_cfg.threshold:g} {mh_cfg.similarity} "
            "flag the same pairs, apart from pairs labeled or skipped."
        )
    elif adjudicating:
        st.success("No contested pair: every pair the labelers disagree on has an adjudicated label.")
    else:
        n_decided = int(view.matched["label"].isin(["duplicate", "not"]).sum())
        st.success(
            f"Every bucket has {counted(per_bucket, 'decided label')}, or no unlabeled pair left "
            f"({counted(n_decided, 'decided label')} at this setting, {counted(len(skipped), 'pair')} skipped). "
            "For more, press **m** (or raise *Pairs per bucket* in the sidebar, under *Labeling*); whether you "
            "can stop: *Progress per bucket and the stop rule* below, or the **Tune** page."
        )
        if (quota := more_quota(view.tallies, per_bucket)) is not None:
            st.button(
                f"More pairs: {quota} per bucket",
                shortcut="m",
                on_click=more_per_bucket,
                args=(quota,),
                help="Sets *Pairs per bucket* in the sidebar, from the keyboard: the slider there, once "
                "clicked, keeps the focus and takes the label keys.",
            )


def where_caption(current: pd.Series | None, queue: pd.DataFrame, position: int, view: LabelView) -> str:
    """Which pair of which queue is shown, and why it comes now."""
    if current is None:
        opened_by = {
            OPENED_BY_UNDO: "Pair reopened by undo: its label is taken back, label it again",
            OPENED_BY_BACK: "A pair you labeled (k goes further back, j forward): a new label replaces yours",
            OPENED_BY_LIST: "Pair opened from the list of labeled pairs: a new label replaces yours",
            OPENED_BY_CLUSTERS: "Pair opened from the Clusters page: the representative on the left",
        }
        return opened_by.get(state.get(KEY_AUDIT_OPENED_BY, ""), "Pair opened from another page") + (
            f" · your label is the adjudicated final one (labeler '{ADJUDICATOR}')" if adjudicating else ""
        )
    done = len(session.given()) + len(skipped)  # this tab's labels and skips: the count goes on
    n = f"Pair {done + position + 1} of {done + len(queue)}"
    if mode == "SimHash vs MinHash disagree":
        bits, score = current["simhash_bits"], current["minhash_score"]
        return (
            f"{n} ({len(queue)} left) SimHash and MinHash disagree on · flagged by {current['flagged_by']} only · SimHash "
            f"{'no candidate' if pd.isna(bits) else f'{int(bits)} bits'} (threshold {int(sim_cfg.threshold)}) "
            f"· MinHash {mh_cfg.similarity} {'no candidate' if pd.isna(score) else f'{score:.2f}'} (threshold "
            f"{mh_cfg.threshold:g})"
        )
    if adjudicating:
        theirs = labels_by_labeler(pairs[(pairs[PAIR_KEY] == current[PAIR_KEY]).all(axis=1)], view.labels)
        given = ", ".join(
            f"{md_escape(w if isinstance(w, str) and w else 'unnamed')}: {lab}"
            for w, lab in zip(theirs["labeler"], theirs["label"], strict=True)
        )
        return (
            f"{n} ({len(queue)} left) contested · bucket {bucket_range(current['bucket'], config)} · {given} · your label is the "
            "adjudicated final one"
        )
    if mode == "active":
        return (
            f"{n} ({len(queue)} left) in the buckets that narrow the decision · bucket "
            f"{bucket_range(current['bucket'], config)}: one more label "
            f"there narrows precision and recall at {config.threshold:g} most"
        )
    unit = "" if config.method == "simhash" else f" {config.similarity}"  # a SimHash bucket says "3 bits"
    return (
        f"{n} to label ({len(queue)} left) · similarity bucket {bucket_range(current['bucket'], config)}{unit}"
        + ("" if config.method == "simhash" else f" (this pair {score_text(float(current['score']))})")
        + " · nearest the "
        f"threshold first · {counted(per_bucket, 'decided label')} per bucket"
    )


def label_bar(detail: PairDetail, category: str | None, current: pd.Series | None, n_queue: int) -> None:
    """Every action on a key: the labels, skip, undo, previous / next, the eight categories, a note."""
    bar = st.columns([1.3, 1.3, 1, 1, 1, 1, 1])
    for col, (choice, shortcut) in zip(bar, LABEL_KEYS, strict=False):
        col.button(
            LABEL_NAMES[choice],
            type="primary" if choice == "duplicate" else "secondary",
            shortcut=shortcut,
            width="stretch",
            on_click=label_pair,
            args=(choice,),
        )
    bar[3].button("Skip", shortcut="s", width="stretch", on_click=skip)
    bar[4].button(
        "Undo", shortcut="z", width="stretch", on_click=undo, disabled=not (session.saved or session.waiting)
    )
    back = state.get(KEY_AUDIT_BACK, 0)
    can_go = {-1: back < len(session.given()), 1: back > 0}  # through this tab's labeled pairs
    for col, (name, shortcut, step) in zip(bar[5:], MOVE_KEYS, strict=True):
        col.button(
            name,
            shortcut=shortcut,
            width="stretch",
            on_click=move,
            args=(step,),
            disabled=not can_go[step] and (current is None or n_queue < 2),
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
            on_click=choose_category,
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


def show_pair(detail: PairDetail) -> None:
    """The two pages side by side (earlier fetch left), their scores, and the word diff or the one text."""
    L, R = detail.left, detail.right
    changed = sum(s.n_words for s in detail.segments if s.op in ("delete", "insert", "replace"))
    st.caption(
        f"SimHash {detail.simhash_bits} bits · MinHash Jaccard (est.) {score_text(detail.minhash_jaccard)} · exact "
        f"Jaccard {score_text(detail.exact_jaccard)} · exact containment {score_text(detail.exact_containment)} "
        f"({config.shingle_size}-word shingles) · {counted(changed, 'changed word')}"
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
    # The passages are on the Clusters page: a switch for them here left the labeling keys dead after a click
    # on another switch (tests/test_browser_audit_keys.py).
    show_pair_evidence(store, path, config, L, R, passages=False)
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
                html = store.page_source(int(page["page_id"]))
                if show_html:
                    st.code(
                        html[:30000] + ("\n... (truncated)" if len(html) > 30000 else ""),
                        language="html",
                        height=300,
                    )
                if show_stripped:
                    removals_table(html, config)


def labeled_list(view: LabelView) -> None:
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
            on_click=open_pair,
            args=((int(row["page_a"]), int(row["page_b"])),),
        )
    elif rows:
        st.caption("That pair is no candidate pair at this setting.")


def waiting_labels() -> None:
    """While labels wait for the file (or it was busy): how many, and a retry every WAITING_RETRY_S."""
    if session.waiting or session.busy is not None:
        st.fragment(retry_waiting, run_every=WAITING_RETRY_S)()


def retry_waiting() -> None:
    """Write the waiting labels; once they are written and the file is free, the page is drawn anew."""
    messages, _ = save_waiting()
    if not session.waiting:
        try:
            quick_store.labels_version()  # the file is free again
        except DatabaseLocked:
            pass
        else:
            session.busy = None
            flash(" · ".join(messages) if messages else "The database is free again.")
            st.rerun(scope="app")
    st.warning(busy_message(), icon=":material/hourglass_top:")


def busy_message() -> str:
    waiting = len(session.waiting)
    return (
        (
            f"{counted(waiting, 'label')} waiting to be saved: "
            if waiting
            else "No label waiting, but the database is busy: "
        )
        + f"{md_escape(session.busy or 'the database is busy')}. They stay in this tab and are written as soon as it "
        "is free (keep this tab open)."
    )


@st.fragment
def labeling() -> None:
    with one_line_errors("the Audit page's labeling"):
        label_and_draw()


def label_and_draw() -> None:
    """The label bar, the pair, the progress and the labeled pairs: what a key press reruns.

    The labels and undos the keys gave are written first (committed before the page says so or draws the
    next pair); while another process holds the file they wait in this tab (`waiting_labels`). The labels
    are read again only when another session changed them (their version before this tab's write is not
    the one kept); the pair shown next was prefetched, so a label key reads nothing more."""
    if state.pop(KEY_AUDIT_MORE, False):
        st.rerun(scope="app")
    messages: list[str] = []
    pending: list[tuple[str, tuple[Any, ...]]] = state.pop(KEY_AUDIT_PENDING, [])
    kept: LabelView | None = state.get(KEY_AUDIT_LABELS)
    undone = False
    for action, args in pending:
        if action == "label":
            session.give(give_label(labels_given(kept), *args))
            leave_pair()
        else:
            take_back()
            undone = True
    written, current = save_waiting()
    messages += written
    view = state.get(KEY_AUDIT_LABELS) if current and not undone else None
    if view is None or view.pairs is not pairs:
        try:
            with store.reading():
                view = label_view(store, pairs, state.get(KEY_AUDIT_LABELS))
        except DatabaseLocked as exc:
            session.busy = session.busy or str(exc)
            view = state.get(KEY_AUDIT_LABELS)
            if view is None or view.pairs is not pairs:
                waiting_labels()
                return
        else:
            state[KEY_AUDIT_LABELS] = view
            messages += [superseded_message(g, stored) for g, stored in session.superseded(view.labels)]
    for message in messages:
        st.toast(message)
    for row in session.rows_waiting():  # drawn as given: the queue moves on while they wait
        view = label_view_with(view, row)
    waiting = st.container()  # above the pair, filled once the pair is drawn (which may find the file busy)
    upcoming = draw_labeling(view)
    with waiting:
        waiting_labels()
    # The pair that comes next is read and diffed on a background thread while this one is read, so the key
    # that leads there only draws it.
    if upcoming is not None:
        prefetch_pair_detail(quick_store, path, *upcoming, config)


def draw_labeling(view: LabelView) -> tuple[int, int] | None:
    """Draw the fragment from `view`; the pages of the pair that comes next in the queue, if any."""
    if message := state.pop(KEY_FLASH, None):  # a fragment run does not pass open_database, which shows it
        st.toast(message)
    queue = make_queue(view)
    position = state.get(KEY_AUDIT_POS, 0)
    opened = state.get(KEY_AUDIT_PAIR)
    current: pd.Series | None = None
    page_a = page_b = None
    if opened:
        page_a, page_b = opened
    elif queue.empty:
        queue_done_message(view)
    else:
        position %= len(queue)
        current = queue.iloc[position]
        page_a, page_b = int(current["page_a"]), int(current["page_b"])

    # No key acts on the pair drawn last while this one is read: it may not come (the file is busy).
    state[KEY_AUDIT_SHOWN] = None
    try:  # A pair opened from elsewhere keeps its order (Clusters: the representative on the left).
        detail = (
            get_pair_detail(quick_store, path, page_a, page_b, config, keep_order=bool(opened))
            if page_a and page_b
            else None
        )
    except DatabaseLocked as exc:
        session.busy = str(exc)
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
    state[KEY_AUDIT_SHOWN] = (
        (key, (int(detail.left["page_id"]), int(detail.right["page_id"])), detail.category, adjudicating)
        if detail is not None and key is not None
        else None
    )
    if detail is not None and key is not None:
        # A new pair opens at its top (the label bar), wherever the last one was scrolled to. The script is
        # a constant but for the two page ids, so the same pair drawn again (a category key) does not run it.
        with st.container(gap=None):  # the script's element takes no room
            st.html(SCROLL_TO_TOP.format(*state[KEY_AUDIT_SHOWN][1]), unsafe_allow_javascript=True)
            mine = label_in(view.labels, key, ADJUDICATOR if adjudicating else state.get(W_LABELER) or None)
            st.caption(
                where_caption(current, queue, position, view)
                + (
                    f" · **your label: {LABEL_NAMES.get(mine['label'], mine['label']).lower()}**"
                    + (f" ({md_escape(mine['category'])})" if mine["category"] else "")
                    if mine is not None
                    else ""
                )
            )
        st.caption(KEY_HINT)
        # The pair is sent before the label bar above it (its 25 widgets are the same from pair to pair; the
        # last run's stay on screen meanwhile, and their keys act on KEY_AUDIT_SHOWN): the URLs and the diff
        # the analyst reads next reach the browser first.
        bar = st.container()
        show_pair(detail)
        with bar:
            label_bar(detail, chosen.get(key, detail.category), current, len(queue))
    else:
        st.button(
            "Undo the last label",
            shortcut="z",
            on_click=undo,
            disabled=not (session.saved or session.waiting),
        )

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
            f"At the threshold {config.threshold:g}: precision {d.precision:.2f} [{d.precision_low:.2f}-"
            f"{d.precision_high:.2f}], recall {d.recall:.2f} [{d.recall_low:.2f}-{d.recall_high:.2f}]. "
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
    if st.toggle("Labeled pairs", key=W_AUDIT_SHOW_LABELED, help="Filter, reopen a pair, change its label."):
        labeled_list(view)

    if current is None or len(queue) < 2:
        return None
    nxt = queue.iloc[(position + 1) % len(queue)]
    return int(nxt["page_a"]), int(nxt["page_b"])


labeling()

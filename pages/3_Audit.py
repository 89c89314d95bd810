"""Audit: sampled pairs per similarity bucket, side-by-side diff, label them."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from neardup.audit import PAIR_KEY, labeled_pairs, pair_detail
from neardup.diff import diff_stats, word_diff
from neardup.labels import CATEGORIES, bucket_tallies, sample_pairs
from neardup.normalize import stripped_parts
from neardup.ui.data import get_candidate_pairs
from neardup.ui.render import md_escape, show_diff
from neardup.ui.state import KEY_AUDIT_PAIR, KEY_AUDIT_SEED, KEY_LABELER
from neardup.ui.widgets import open_database
from neardup.warc import describe_record

st.set_page_config(page_title="neardup · Audit", layout="wide")
st.title("Audit pairs")
store, path, config = open_database()
pairs = get_candidate_pairs(store, path, config.fingerprint_key, config.similarity, config)
labels = store.labels()
if pairs.empty:
    st.info("No candidate pairs at this setting: nothing to audit. Try another method or shingle size.")
    st.stop()

with st.sidebar:
    st.header("Sampling")
    per_bucket = st.slider("Pairs per bucket", 1, 30, 5)
    seed = st.number_input("Seed", 0, 10**6, st.session_state.get(KEY_AUDIT_SEED, 7), key=KEY_AUDIT_SEED)
    skipped = st.session_state.setdefault("neardup.audit.skipped", set())

matched = labeled_pairs(pairs, labels)
done = set(matched[PAIR_KEY].itertuples(index=False, name=None))
queue = sample_pairs(pairs, per_bucket=per_bucket, seed=int(seed), exclude=done | skipped, focus=config.threshold)

tallies = bucket_tallies(pairs["bucket"], matched)
with st.expander(f"Progress: {int(tallies['labeled'].sum())} labeled pairs at this setting "
                 f"({len(labels)} labels in all)", expanded=False):
    st.dataframe(tallies[["bucket", "pairs", "labeled", "duplicates"]], hide_index=True, width="stretch")

opened = st.session_state.get(KEY_AUDIT_PAIR)
if opened:
    page_a, page_b = opened
    current = None
elif queue.empty:
    st.success("Every sampled pair is labeled. Raise *pairs per bucket* or change the seed for more.")
    st.stop()
else:
    current = queue.iloc[0]
    page_a, page_b = int(current["page_a"]), int(current["page_b"])

detail = pair_detail(store, page_a, page_b, config)
L, R = detail.left, detail.right
side_a, side_b = sorted(((L["canonical_url"], L["md5"]), (R["canonical_url"], R["md5"])))
if current is not None:
    st.caption(f"Pair from bucket {current['bucket']:g} · {len(queue)} sampled pairs left, nearest the threshold first")
else:
    st.caption("Pair opened from the Clusters page")

m = st.columns(5)
m[0].metric("SimHash distance", f"{detail.simhash_bits} bits")
m[1].metric("MinHash Jaccard (est.)", f"{detail.minhash_jaccard:.2f}")
m[2].metric("Exact Jaccard", f"{detail.exact_jaccard:.2f}", help=f"Of the {config.shingle_size}-word shingle sets")
m[3].metric("Exact containment", f"{detail.exact_containment:.2f}")
segments = word_diff(L["text"] or "", R["text"] or "")
stats = diff_stats(segments)
m[4].metric("Changed words", f"{stats['changed_words']:,}", help=f"{stats['equal_words']:,} words equal")

left, right = st.columns(2)
for col, page in ((left, L), (right, R)):
    with col:
        st.code(page["url"], language=None, wrap_lines=True)
        fetched = page["fetched_at"]
        st.caption(f"host {md_escape(page['host'])} · fetched {fetched if not pd.isna(fetched) else 'unknown'} · "
                   f"status {page['status'] if not pd.isna(page['status']) else 'unknown'} · {page['n_words']:,} words")
        if (record := describe_record(page.get("extra"))) is not None:
            st.caption(md_escape(record))

st.markdown("**Main text, word diff** (deleted on the left in red, inserted on the right in green; long equal runs folded)")
show_diff(segments)

t1, t2 = st.columns(2)
with t1:
    show_html = st.toggle("Raw HTML (as source, never rendered)")
with t2:
    show_stripped = st.toggle("What tag stripping removed")
if show_html or show_stripped:
    h1, h2 = st.columns(2)
    for col, page in ((h1, L), (h2, R)):
        with col:
            html = page["html"] if isinstance(page["html"], str) else page.get("text_in") or ""
            if show_html:
                st.code(html[:30000] + ("\n... (truncated)" if len(html) > 30000 else ""), language="html", height=300)
            if show_stripped:
                parts = pd.DataFrame(stripped_parts(html, strip_tags=config.strip_tags), columns=["tag", "text"])
                st.dataframe(parts, hide_index=True, width="stretch", height=250)

st.divider()
with st.form("label", clear_on_submit=True, border=False):
    c1, c2, c3 = st.columns([1, 1, 2])
    labeler = c1.text_input("Your name", value=st.session_state.get(KEY_LABELER, ""))
    category = c2.selectbox("Category", CATEGORIES, index=None, placeholder="optional")
    note = c3.text_input("Note", placeholder="optional")
    b1, b2, b3, b4 = st.columns(4)
    dup = b1.form_submit_button("Duplicate", type="primary", width="stretch")
    nodup = b2.form_submit_button("Not duplicate", width="stretch")
    unsure = b3.form_submit_button("Unsure", width="stretch")
    skip = b4.form_submit_button("Skip", width="stretch")

choice = "duplicate" if dup else "not" if nodup else "unsure" if unsure else None
if choice or skip:
    st.session_state[KEY_LABELER] = labeler
    if choice:
        store.record_label(side_a[0], side_b[0], md5_a=side_a[1], md5_b=side_b[1], label=choice, category=category,
                           note=note or None, labeler=labeler or None, setting=config.to_dict())
        st.toast(f"Labeled: {choice}")
    else:
        skipped.add((*side_a, *side_b))
    st.session_state.pop(KEY_AUDIT_PAIR, None)
    st.rerun()

"""neardup audit app: the home page and the navigation between the pages in `views/` (neardup.app.PAGES).

Start it with `neardup app` or `streamlit run app.py` (NEARDUP_DB=...).
"""

from __future__ import annotations

import streamlit as st

from neardup.app import HOME, PAGES, in_navigation, main_script, navigating, page_script
from neardup.report import describe_config
from neardup.ui import FAVICON
from neardup.ui.data import get_clustering
from neardup.ui.guard import one_line_errors
from neardup.ui.keys import PAGE_KEYS_HINT, PAGE_KEYS_SCRIPT
from neardup.ui.pending import pending_setting
from neardup.ui.render import md_escape
from neardup.ui.widgets import cluster_size_chart, hosts_table, open_database


def home() -> None:
    """Which database is open and the numbers at the current setting."""
    st.title("neardup: how much of this crawl is duplicated?")

    store, path, config = open_database()
    if pending_setting(store, path, config):  # an estimate while the exact numbers are computed
        return

    n_pages = store.count_pages()
    clustering = get_clustering(store, path, config)  # no pages frame: Home draws counts only
    n = clustering.numbers
    setting = describe_config(clustering.config)
    st.caption(f"Database {md_escape(path)} · {n_pages:,} pages · {setting}")
    # The title's answer in words: the metrics below split it, and Redundant is not the first of them.
    st.markdown(
        f"**{n['redundant_pct']:.1f}% of the {n['total_pages']:,} pages are redundant** "
        f"({n['redundant_pages']:,}: {n['exact_duplicates']:,} exact and {n['near_duplicates']:,} near duplicates); "
        f"deduplication keeps {n['unique_pages']:,}"
        + (f" and sets {n['degenerate_pages']:,} aside as no content" if n["degenerate_pages"] else "")
        + "."
    )

    c1, c2, c3 = st.columns(3)
    c1.metric(
        "Exact duplicates",
        f"{n['exact_duplicates']:,}",
        help="Pages whose words equal an earlier page's after normalization (byte-identical ones included: "
        f"{n['byte_identical_duplicates']:,}).",
    )
    c2.metric(
        "Near duplicates",
        f"{n['near_duplicates']:,}",
        help="Distinct texts merged into a cluster by the near-duplicate threshold.",
    )
    c3.metric(
        "Unique pages",
        f"{n['unique_pages']:,}",
        help="What deduplication keeps: one representative per cluster, singletons included. "
        "Exact + near + unique = content pages.",
    )
    c4, c5, c6, c7 = st.columns(4)
    c4.metric("Duplicate clusters", f"{n['duplicate_clusters']:,}", help="Clusters of two or more pages.")
    c5.metric(
        "Largest cluster",
        f"{n['largest_cluster']:,}",
        help="Pages in the largest cluster, its representative included: the pages joined by pairs at "
        f"{setting}, directly or through other members.",
    )
    c6.metric("Redundant", f"{n['redundant_pct']:.1f}%", help="(exact + near duplicates) / total pages")
    c7.metric(
        "Degenerate (set aside)",
        f"{n['degenerate_pages']:,}",
        help="Block and challenge pages, soft-404s, loading shells, non-2xx and near-empty pages: "
        "failures, not duplicates; never clustered.",
    )

    for warning in clustering.warnings:
        st.warning(warning)

    left, right = st.columns(2)
    with left:
        hosts_table(clustering.hosts, height=320)
    with right:
        cluster_size_chart(clustering.cluster_sizes, height=320)

    st.markdown(
        "**Next:** *Explore* the similarity histogram and hosts, *Audit* sampled pairs side by side and label them, "
        "*Tune* the threshold from your labels, inspect *Clusters*, and *Export* the result. "
        f"Keys: {PAGE_KEYS_HINT} in the menu."
    )


if in_navigation():
    home()  # this script (or app.py, which runs it) as the navigation's Home page
else:
    # The favicon is a file the app serves: a Material icon here is fetched from a font CDN on every load.
    st.set_page_config(page_title="neardup", page_icon=str(FAVICON), layout="wide")
    # Home is the main script itself (what AppTest's switch_page("app.py") names), run again as a page.
    with st.container(gap=None):  # the script's element takes no room
        st.html(PAGE_KEYS_SCRIPT, unsafe_allow_javascript=True)
    with navigating(), one_line_errors("a page"):
        st.navigation(
            [
                st.Page(main_script() or HOME, title="Home", icon=":material/home:", default=True),
                *(
                    st.Page(page_script(p.file), title=p.title, icon=p.icon, url_path=p.url_path)
                    for p in PAGES
                ),
            ]
        ).run()

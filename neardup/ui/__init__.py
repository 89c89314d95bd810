"""Streamlit helpers: cached loaders, session-state keys, widgets. The only place beside the pages
that imports streamlit; the engine never does."""

from pathlib import Path

# The app's favicon (scripts/make_favicon.py draws it), served by the app itself.
FAVICON = Path(__file__).resolve().parent.parent / "favicon.png"

"""Streamlit helpers: cached loaders, session-state keys, widgets. The only place beside the pages
that imports streamlit; the engine never does."""

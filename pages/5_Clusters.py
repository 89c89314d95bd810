"""The 5_Clusters page in a source checkout: runs neardup/app/views/5_Clusters.py (see neardup.app.run_page)."""

from neardup.app import run_page

run_page("5_Clusters.py", globals())

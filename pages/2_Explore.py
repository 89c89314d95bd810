"""The 2_Explore page in a source checkout: runs neardup/app/views/2_Explore.py (see neardup.app.run_page)."""

from neardup.app import run_page

run_page("2_Explore.py", globals())

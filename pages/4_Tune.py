"""The 4_Tune page in a source checkout: runs neardup/app/views/4_Tune.py (see neardup.app.run_page)."""

from neardup.app import run_page

run_page("4_Tune.py", globals())

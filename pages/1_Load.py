"""The 1_Load page in a source checkout: runs neardup/app/views/1_Load.py (see neardup.app.run_page)."""

from neardup.app import run_page

run_page("1_Load.py", globals())

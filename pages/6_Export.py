"""The 6_Export page in a source checkout: runs neardup/app/views/6_Export.py (see neardup.app.run_page)."""

from neardup.app import run_page

run_page("6_Export.py", globals())

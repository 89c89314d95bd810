"""The 3_Audit page in a source checkout: runs neardup/app/views/3_Audit.py (see neardup.app.run_page)."""

from neardup.app import run_page

run_page("3_Audit.py", globals())

"""The 7_URL_rules page in a source checkout: runs neardup/app/views/7_URL_rules.py (see neardup.app.run_page)."""

from neardup.app import run_page

run_page("7_URL_rules.py", globals())

"""The 7_URL_rules page in a source checkout: runs neardup/app/pages/7_URL_rules.py."""

from neardup.app import run_packaged

run_packaged("pages/7_URL_rules.py", globals())

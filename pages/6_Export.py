"""The 6_Export page in a source checkout: runs neardup/app/pages/6_Export.py."""

from neardup.app import run_packaged

run_packaged("pages/6_Export.py", globals())

"""The 1_Load page in a source checkout: runs neardup/app/pages/1_Load.py."""

from neardup.app import run_packaged

run_packaged("pages/1_Load.py", globals())

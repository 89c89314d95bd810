"""The 2_Explore page in a source checkout: runs neardup/app/pages/2_Explore.py."""

from neardup.app import run_packaged

run_packaged("pages/2_Explore.py", globals())

"""The 4_Tune page in a source checkout: runs neardup/app/pages/4_Tune.py."""

from neardup.app import run_packaged

run_packaged("pages/4_Tune.py", globals())

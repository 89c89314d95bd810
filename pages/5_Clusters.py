"""The 5_Clusters page in a source checkout: runs neardup/app/pages/5_Clusters.py."""

from neardup.app import run_packaged

run_packaged("pages/5_Clusters.py", globals())

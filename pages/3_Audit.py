"""The 3_Audit page in a source checkout: runs neardup/app/pages/3_Audit.py."""

from neardup.app import run_packaged

run_packaged("pages/3_Audit.py", globals())

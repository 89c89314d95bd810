"""neardup audit app (`streamlit run app.py` in a source checkout): runs neardup/app/Home.py."""

from neardup.app import run_packaged

run_packaged("Home.py", globals())

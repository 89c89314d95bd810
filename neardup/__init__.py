"""neardup: how much of a web crawl is duplicated, exactly and nearly, and which pages to keep.

The notebook API: text in, numbers out, no database needed.

    >>> from neardup import words, shingles, jaccard
    >>> a = shingles(words("The quick brown fox jumps"), 3)
    >>> round(jaccard(a, shingles(words("the quick brown fox leaps"), 3)), 2)
    0.5
"""

from .config import Config, load_config
from .errors import NeardupError
from .normalize import normalize_html
from .shingles import containment, jaccard, shingle_hashes, shingles, words
from .simhash import hamming, simhash64
from .urls import canonicalize_url

__version__ = "0.12.0"


def simhash(text: str, shingle_size: int = 5) -> int:
    """64-bit SimHash of a text's word shingles (see `neardup.simhash`)."""
    return simhash64(shingle_hashes(words(text), shingle_size))


__all__ = [
    "Config",
    "NeardupError",
    "canonicalize_url",
    "containment",
    "hamming",
    "jaccard",
    "load_config",
    "normalize_html",
    "shingle_hashes",
    "shingles",
    "simhash",
    "simhash64",
    "words",
]

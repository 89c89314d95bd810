"""Reference implementations the tests check neardup against, and the benchmark's naive peers: slow and
clear, each the recipe a reader would write first (per-bit SimHash, every pair compared, datasketch's own
MinHash and MinHashLSH, BeautifulSoup). They live with the tests, not in the package: neardup never calls
them, and an ingest worker never imports datasketch or BeautifulSoup."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from datasketch import LeanMinHash, MinHash, MinHashLSH

from neardup.batches import signature_matrix
from neardup.config import DEFAULT_STRIP_TAGS, Config
from neardup.minhash import SCHEME
from neardup.simhash import hamming_many
from neardup.store import Store


def collapse(text: str) -> str:
    """Whitespace runs as one space, none at either end (what neardup's normalizers return)."""
    return " ".join(text.split())


def simhash_naive(shingle_hashes: Sequence[int]) -> int:
    """The classic per-bit pure-Python SimHash of one document."""
    votes = [0] * 64
    for h in set(int(x) for x in shingle_hashes):
        for bit in range(64):
            votes[bit] += 1 if (h >> bit) & 1 else -1
    return sum(1 << bit for bit in range(64) if votes[bit] > 0)


def simhash_pairs_bruteforce(
    fingerprints: np.ndarray, max_bits: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All pairs within `max_bits`, by comparing every pair."""
    fps = np.asarray(fingerprints, dtype=np.uint64)
    out_a, out_b = [], []
    for i in range(len(fps) - 1):
        d = hamming_many(fps[i], fps[i + 1 :])
        js = np.flatnonzero(d <= max_bits) + i + 1
        out_a.append(np.full(len(js), i, dtype=np.int64))
        out_b.append(js)
    if not out_a:
        e = np.empty(0, np.int64)
        return e, e, np.empty(0, np.uint8)
    a, b = np.concatenate(out_a), np.concatenate(out_b)
    return a, b, hamming_many(fps[a], fps[b])


def lean(signature: np.ndarray, seed: int) -> LeanMinHash:
    """A datasketch LeanMinHash around one signature row of neardup's (same permutations and scheme)."""
    return LeanMinHash(seed=seed, hashvalues=signature, scheme=SCHEME)


def minhash_update_loop(shingle_texts: Sequence[str], num_perm: int = 128, seed: int = 1) -> np.ndarray:
    """The naive way: datasketch's default hash (SHA-1) and one `update()` per shingle."""
    m = MinHash(num_perm=num_perm, seed=seed)
    for s in shingle_texts:
        m.update(s.encode("utf-8"))
    return np.asarray(m.hashvalues)


def lsh_buckets_datasketch(signatures: np.ndarray, bands: int, rows: int, seed: int) -> list[np.ndarray]:
    """Buckets (member arrays, 2+ members) of a datasketch MinHashLSH index over the signatures: one `insert`
    per document and band in Python (slow at scale)."""
    lsh = MinHashLSH(num_perm=signatures.shape[1], params=(bands, rows))
    with lsh.insertion_session() as session:
        for i in range(len(signatures)):
            session.insert(i, lean(signatures[i], seed), check_duplication=False)
    out = []
    for table in lsh.hashtables:
        for key, count in table.itemcounts().items():
            if count > 1:
                out.append(np.sort(np.fromiter(table.get(key), dtype=np.int64)))
    return out


def normalize_html_bs4(html: str, *, strip_tags: tuple[str, ...] = DEFAULT_STRIP_TAGS) -> str:
    """`strip` mode with BeautifulSoup + lxml."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "lxml")
    for node in soup.find_all(list(strip_tags)):
        node.decompose()
    for node in soup.find_all("input", attrs={"type": "hidden"}):
        node.decompose()
    for node in soup.find_all("title"):  # the head's title is not body text
        node.decompose()
    body = soup.body
    return collapse(body.get_text(" ") if body is not None else "")


def stripped_parts_bs4(
    html: str, *, strip_tags: tuple[str, ...] = DEFAULT_STRIP_TAGS
) -> list[tuple[str, str]]:
    """`normalize.stripped_parts` with BeautifulSoup + lxml (seconds on a page of 100,000 elements)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "lxml")
    parts = []
    for node in soup.find_all(list(strip_tags)):
        if node.parent is None:  # inside an element already removed
            continue
        text = collapse(node.get_text(" ")) if node.name not in ("script", "style") else ""
        parts.append((node.name, text))
        node.decompose()
    return parts


def every_signature(store: Store, config: Config, n_units: int) -> np.ndarray:
    """The MinHash signatures of every unit of `config`'s stored fingerprint set, by unit id, read whole: the
    reference the app's reads are checked against (its fingerprints hold those of the units in a pair only,
    and of the others it reads only the buckets over the cap)."""
    out = np.empty((n_units, config.num_perm), dtype=np.uint32)
    read = 0
    for units, batch in store.unit_signature_batches(config.fingerprint_key):
        out[units] = signature_matrix(config.num_perm, batch)
        read += len(units)
    assert read == n_units
    return out

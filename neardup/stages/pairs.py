"""The candidate pairs stage: the pairs of units (distinct content texts) at or above the loosest threshold.

SimHash pairs come from the pigeonhole tables, MinHash pairs from LSH with the signatures' estimates
(`neardup.candidates`); with `verify: exact` those are scored again from the shingle sets
(`verify_exact`). `UnitPairs` is the stage's output, for a full computation and for the pairs a fingerprint
set is extended with (`stages.incremental`); its `frame()` is the one table the store keeps.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..batches import set_batch, signatures
from ..candidate_stats import CandidateStats
from ..candidates import (
    MappedSignatures,
    above_floor,
    exact_scores,
    intersection_sizes,
    minhash_pairs,
    simhash_pairs,
)
from ..config import Config
from ..parallel import parallel_map
from ..spill import DiskArray, DiskPairs, SpillDir, SpillPlan
from ..store import Store
from .base import BATCH, PARALLEL_MIN, Progress, no_progress


@dataclass(frozen=True, slots=True)
class UnitPairs:
    """Pairs (a[i], b[i]) of unit ids, a < b, with their scores: Hamming bits for SimHash; Jaccard and
    containment (estimates, or exact under `verify: exact`) for MinHash."""

    a: np.ndarray
    b: np.ndarray
    stats: CandidateStats
    hamming_bits: np.ndarray | None = None
    jaccard: np.ndarray | None = None
    containment: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.a)

    def frame(self) -> pd.DataFrame:
        """The pairs as the store keeps them: a, b, hamming_bits (Int16, null for MinHash), jaccard and
        containment (NaN for SimHash)."""
        if self.hamming_bits is not None:
            return pd.DataFrame(
                {
                    "a": self.a,
                    "b": self.b,
                    "hamming_bits": self.hamming_bits.astype(np.int16),
                    "jaccard": np.nan,
                    "containment": np.nan,
                }
            )
        return pd.DataFrame(
            {
                "a": self.a,
                "b": self.b,
                "hamming_bits": pd.array([None] * len(self.a), dtype="Int16"),
                "jaccard": self.jaccard,
                "containment": self.containment,
            }
        )


# What a band in hand holds a unit out of core: its columns (4 rows of uint32 at the default setting) and
# its bucket group's number; the group being sorted is sized apart (`SpillPlan.bucket_entries`).
BAND_BYTES_PER_UNIT = 20
# The signatures' file may lie resident through its map up to 1 / this of an out-of-core step's limit.
SIGNATURE_MAP_SHARE = 4


@dataclass(frozen=True, slots=True)
class SpilledUnits:
    """The units of a setting with their sketches in files of a `SpillDir` (`stages.fingerprints`, out of
    core): unit id = row of each array, exact-key order as `Store.unit_sketches`. `exact_keys` (64-byte
    SHA-256 hex) lie in a memory map, `n_shingles` and `simhash` in memory; `signature_file` holds the
    MinHash signatures (n x num_perm; None for SimHash), read through its map (`signatures`) or, scattered
    rows, with pread."""

    exact_keys: np.ndarray
    n_shingles: np.ndarray
    simhash: np.ndarray | None
    signature_file: DiskArray | None
    spill: SpillDir
    plan: SpillPlan

    @property
    def signatures(self) -> np.ndarray | None:
        """The signatures on the memory map of their file (None for a SimHash setting)."""
        return None if self.signature_file is None else self.signature_file.read()

    def __len__(self) -> int:
        return len(self.n_shingles)

    def mapped(self) -> MappedSignatures:
        """How the candidate search reads the signatures, in pieces of the plan's sizes, its pairs kept in
        the spill folder. The rows a chunk of pairs compares are read through the map while the whole file
        is within 1 / `SIGNATURE_MAP_SHARE` of the limit (scattered reads of a map can hold the whole file
        resident, a read fault mapping a page-cache folio of up to megabytes), with pread past it (a
        system call a row, slower)."""
        plan, signature_file = self.plan, self.signature_file
        assert signature_file is not None, "the signatures of a MinHash setting"
        within_share = signature_file.nbytes <= plan.memory_limit // SIGNATURE_MAP_SHARE
        return MappedSignatures(
            plan.copy_rows,
            self.spill.release,
            plan.candidates,
            max(1, plan.memory_limit // 4 // (BAND_BYTES_PER_UNIT * max(len(self), 1))),
            plan.bucket_entries,
            DiskPairs(self.spill, plan.pair_rows),
            None if within_share else signature_file.read_rows,
        )


def find_pairs(
    store: Store,
    config: Config,
    units: pd.DataFrame | SpilledUnits,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
    texts: pd.DataFrame | None = None,
) -> UnitPairs:
    """Every candidate pair of `units` (`Store.unit_sketches`, unit id = row; or `SpilledUnits`: the same
    pairs, read from disk a piece at a time), verified as `config` says. `texts` (exact_key, text), when
    the caller holds the units' texts: the verification reads them there."""
    spilled = units if isinstance(units, SpilledUnits) else None
    if config.method == "simhash":
        fingerprints = (
            units.simhash if isinstance(units, SpilledUnits) else units["simhash"].to_numpy(np.uint64)
        )
        a, b, bits, stats = simhash_pairs(np.asarray(fingerprints, np.uint64), config.simhash_max_bits)
        return UnitPairs(a, b, stats, hamming_bits=bits)
    if isinstance(units, SpilledUnits):
        n_shingles, sigs, unit_keys = units.n_shingles, units.signatures, units.exact_keys
        mapped = units.mapped()
    else:
        n_shingles = units["n_shingles"].to_numpy(np.int32)
        sigs = signatures(units["minhash"], config.num_perm)
        unit_keys, mapped = units["exact_key"].to_numpy(), None
    assert sigs is not None
    a, b, jac, cont, stats = minhash_candidates(config, sigs, n_shingles, mapped)
    del sigs  # ~0.5 GB at 1M texts; the verification needs the room
    found = UnitPairs(a, b, stats, jaccard=jac, containment=cont)
    if config.verify != "exact":
        return found
    return verified_exactly(
        store,
        config,
        unit_keys,
        n_shingles,
        found,
        progress=progress,
        jobs=jobs,
        texts=texts,
        spilled=spilled,
    )


def minhash_candidates(
    config: Config, signatures: np.ndarray, n_shingles: np.ndarray, mapped: MappedSignatures | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, CandidateStats]:
    """`candidates.minhash_pairs` at `config`'s setting (similarity, floor, size guard, partial copies)."""
    return minhash_pairs(
        signatures,
        n_shingles,
        similarity=config.similarity,
        floor=config.minhash_floor,
        min_size_ratio=config.min_size_ratio,
        seed=config.seed,
        min_shingles=config.min_contained_shingles,
        partial_copies=config.searches_partial_copies,
        mapped=mapped,
    )


def verified_exactly(
    store: Store,
    config: Config,
    unit_keys: np.ndarray,
    n_shingles: np.ndarray,
    pairs: UnitPairs,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
    texts: pd.DataFrame | None = None,
    spilled: SpilledUnits | None = None,
) -> UnitPairs:
    """MinHash `pairs` with exact scores, those below the floor dropped (`verify_exact`)."""
    a, b, jac, cont = verify_exact(
        store,
        config,
        unit_keys,
        n_shingles,
        pairs.a,
        pairs.b,
        pairs.stats,
        progress=progress,
        jobs=jobs,
        texts=texts,
        spilled=spilled,
    )
    return dataclasses.replace(pairs, a=a, b=b, jaccard=jac, containment=cont)


def verify_exact(
    store: Store,
    config: Config,
    unit_keys: np.ndarray,
    n_shingles: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    stats: CandidateStats,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
    texts: pd.DataFrame | None = None,
    spilled: SpilledUnits | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Exact Jaccard and containment of MinHash pairs (units a[i], b[i]); keeps those at or above the floor.

    `unit_keys` and `n_shingles` are per unit: its exact key (str, or the 64 ASCII bytes of
    `SpilledUnits.exact_keys`) and its number of distinct shingles. Their texts are read from the store,
    or from `texts` (exact_key, text) where the caller holds them.
    The shingle sets of the units in pairs are rebuilt from their texts (in workers) as sorted uint32,
    the values MinHash sketched, and intersected in bulk (`intersection_sizes`). A pair reaches this
    step because its estimate passed the floor; near the floor that selects pairs whose estimate came
    out high, so the exact scores are what the threshold should apply to. `spilled`: out of core
    (`verify_spilled`, the same scores).
    """
    stats.verified_exact = len(a)
    if not len(a):
        return a, b, np.empty(0), np.empty(0)
    if spilled is not None:
        return verify_spilled(store, config, spilled, a, b, stats, progress=progress, jobs=jobs)
    need = np.unique(np.concatenate((a, b)))
    progress("verify", 0, len(need))
    rank = np.full(len(unit_keys), -1, dtype=np.int64)
    rank[need] = np.arange(len(need))
    need_keys = unit_keys[need]
    index = pd.Index(need_keys)
    if texts is None:
        frames: Iterable[pd.DataFrame] = store.unit_texts(config.norm_key, need_keys.tolist(), BATCH * 4)
    else:
        held = texts[texts["exact_key"].isin(index)]
        frames = (held[i : i + BATCH * 4] for i in range(0, len(held), BATCH * 4))
    batches = ((df["exact_key"].tolist(), df["text"].tolist(), config.shingle_size) for df in frames)
    # One buffer, filled as the sets arrive: a set of 32-bit values is at most as large as the unit's
    # set of 64-bit shingle hashes, so the units' shingle counts bound the total (~0.6 GB at 1M pages).
    values = np.empty(int(np.asarray(n_shingles, dtype=np.int64)[need].sum()), dtype=np.uint32)
    pos_parts, len_parts, filled, done = [], [], 0, 0
    for keys, lens, batch_values in parallel_map(
        set_batch, batches, jobs=1 if len(need) < PARALLEL_MIN else jobs
    ):
        values[filled : filled + len(batch_values)] = batch_values
        filled += len(batch_values)
        pos_parts.append(index.get_indexer(keys))
        len_parts.append(lens)
        done += len(keys)
        progress("verify", done, len(need))
    pos = np.concatenate(pos_parts) if pos_parts else np.empty(0, np.int64)
    arrived_lens = np.concatenate(len_parts).astype(np.int64) if len_parts else np.empty(0, np.int64)
    if (pos < 0).any() or len(pos) != len(need) or len(np.unique(pos)) != len(need):
        raise RuntimeError("exact verification: a unit's text is missing from the store")
    # The batches come in no particular order: address each set where it arrived (no copy of the values).
    # Offsets are int64: the sets of a million pages pass 2**31 values.
    lens, offsets = np.empty_like(arrived_lens), np.empty_like(arrived_lens)
    lens[pos] = arrived_lens
    offsets[pos] = np.concatenate(([0], np.cumsum(arrived_lens, dtype=np.int64)[:-1]))
    inter = intersection_sizes(values, lens, rank[a], rank[b], offsets=offsets)
    jac, cont = exact_scores(
        inter, lens[rank[a]], lens[rank[b]], config.min_size_ratio, config.min_contained_shingles
    )
    keep = above_floor(jac, cont, config.similarity, config.minhash_floor)
    stats.rejected_exact = int(len(a) - keep.sum())
    return a[keep], b[keep], jac[keep], cont[keep]


def verify_spilled(
    store: Store,
    config: Config,
    units: SpilledUnits,
    a: np.ndarray,
    b: np.ndarray,
    stats: CandidateStats,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`verify_exact` out of core, for pairs (a, b) that may lie in memory maps (`DiskPairs.unique`): the
    same scores, with what is held bounded by the units' count at a few ints a unit (a flag, set sizes
    and offsets by unit id), not by the pairs or their keys. The pairs are read a piece at a time; the keys
    of the units in them go to a Parquet file the store's query joins; a text's unit is found by its key
    in the sorted `exact_keys`; the sets are appended to a file, and for each piece of pairs the sets of its
    units are read back into memory (`DiskArray.gather`) and intersected. Only the pairs kept are in memory
    at the end."""
    spill, plan, n = units.spill, units.plan, len(units)
    step = plan.verify_pairs
    needed = np.zeros(n, dtype=bool)
    for lo in range(0, len(a), plan.pair_rows):
        needed[a[lo : lo + plan.pair_rows]] = True
        needed[b[lo : lo + plan.pair_rows]] = True
        spill.release()
    n_needed = int(needed.sum())
    progress("verify", 0, n_needed)
    keys_path = spill.path / "verified-keys.parquet"
    with pq.ParquetWriter(keys_path, _KEYS) as wanted:
        for lo in range(0, n, plan.read_rows):
            at = lo + np.flatnonzero(needed[lo : lo + plan.read_rows])
            wanted.write_table(
                pa.table([pa.array(units.exact_keys[at], pa.binary(64)).cast(pa.string())], _KEYS)
            )
            spill.release()
    frames = store.unit_texts(config.norm_key, keys_path, BATCH * 4)
    batches = ((df["exact_key"].tolist(), df["text"].tolist(), config.shingle_size) for df in frames)
    on_disk = spill.array("shingle-sets", np.uint32)
    # by unit id; int64 as the intersection kernel reads them (the sets of a million pages pass 2**31 values)
    lens, offsets = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    arrived = np.zeros(n, dtype=bool)
    for keys, batch_lens, batch_values in parallel_map(
        set_batch, batches, jobs=1 if n_needed < PARALLEL_MIN else jobs
    ):
        ids = unit_ids(units.exact_keys, keys)
        if arrived[ids].any():
            raise RuntimeError("exact verification: a unit's text came twice from the store")
        arrived[ids] = True
        lens[ids] = batch_lens
        offsets[ids] = on_disk.rows + np.concatenate(([0], np.cumsum(batch_lens, dtype=np.int64)[:-1]))
        on_disk.append(batch_values)
        spill.release()
        progress("verify", int(arrived.sum()), n_needed)
    if not np.array_equal(arrived, needed):
        raise RuntimeError("exact verification: a unit's text is missing from the store")
    del arrived, needed
    kept: list[tuple[np.ndarray, ...]] = []
    for lo in range(0, len(a), step):
        pa_, pb = np.array(a[lo : lo + step]), np.array(b[lo : lo + step])
        spill.release()
        # the piece's sets, read into memory of their size (`DiskArray.gather`), back to back
        ids, at = np.unique(np.concatenate((pa_, pb)), return_inverse=True)
        values = on_disk.gather(offsets[ids], lens[ids])
        inter = intersection_sizes(values, lens[ids], at[: len(pa_)], at[len(pa_) :])
        del values
        pjac, pcont = exact_scores(
            inter, lens[pa_], lens[pb], config.min_size_ratio, config.min_contained_shingles
        )
        keep = above_floor(pjac, pcont, config.similarity, config.minhash_floor)
        kept.append((pa_[keep], pb[keep], pjac[keep], pcont[keep]))
    a_kept, b_kept, jac, cont = (np.concatenate(column) for column in zip(*kept, strict=True))
    stats.rejected_exact = int(len(a) - len(a_kept))
    return a_kept, b_kept, jac, cont


def unit_ids(exact_keys: np.ndarray, keys: list[str]) -> np.ndarray:
    """The unit id of each key: its row of `exact_keys` (sorted 64-byte keys, `SpilledUnits.exact_keys`)."""
    wanted = np.array(keys, dtype="S64")
    ids = np.searchsorted(exact_keys, wanted)
    found = ids < len(exact_keys)
    found[found] = exact_keys[ids[found]] == wanted[found]
    if not found.all():
        raise RuntimeError("exact verification: a text the store gave is no unit")
    return ids


_KEYS = pa.schema([("exact_key", pa.string())])

"""The Audit page's queues: for each way of choosing the pairs to label, which pair comes next and why.

`AuditQueue` names a queue (its value is its name in the page's URL, `?queue=active`, so links keep
working); `pair_queue` makes the class that serves it. Every queue picks from one `QueueBasis` (the
candidate pairs, the labels and what the page derives from them, the quota, the seed, the pairs skipped)
and says, as escaped Markdown, why a pair comes now and why it has nothing left. No Streamlit here: the
page only draws what these return.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Set
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

import pandas as pd

from . import audit
from .audit import PAIR_KEY, labels_by_labeler
from .config import Config
from .labels import ADJUDICATOR, STOP_HALF_WIDTH, active_queue, audit_queue, bucket_range, decision_at
from .markdown import counted, md_escape, score_text

PER_BUCKET_MAX = 30  # the most pairs per bucket the quota queue is asked for (the page's slider's end)
MORE_PER_BUCKET = 5  # the "more pairs" key: this many more pairs in the least labeled bucket with pairs left


class AuditQueue(StrEnum):
    """A queue the Audit page serves. The value is the queue's name in the page's URL."""

    QUOTA = "quota"
    ACTIVE = "active"
    DISAGREE = "disagree"
    CONTESTED = "contested"

    @property
    def display_name(self) -> str:
        """What the page calls the queue (its radio button)."""
        return QUEUE_CLASSES[self].display_name

    @property
    def compares_methods(self) -> bool:
        """Whether the queue needs the other method's candidate pairs (`pair_queue`'s `other_pairs`)."""
        return self is AuditQueue.DISAGREE

    @property
    def adjudicates(self) -> bool:
        """Whether a label given in this queue is the adjudicated final one (labeler `ADJUDICATOR`)."""
        return self is AuditQueue.CONTESTED


@dataclass(frozen=True, slots=True)
class QueueBasis:
    """What a queue picks from: the setting's candidate pairs (`get_candidate_pairs`' frame), the labels
    (`Store.labels()`), the labeled pairs (`audit.labeled_pairs`) and their per-bucket tallies
    (`labels.bucket_tallies`), a pair key's row in `pairs` (`audit.PairIndex.exact`), the quota, the seed of
    the shuffled order, and the pairs this tab skipped."""

    pairs: pd.DataFrame
    labels: pd.DataFrame
    matched: pd.DataFrame
    tallies: pd.DataFrame
    config: Config
    per_bucket: int
    seed: int
    skipped: Set[tuple[str, ...]]
    positions: Mapping[Any, int] | None = None


class PairQueue(ABC):
    """One queue: the pairs still to label in the order they come, the caption of the pair shown, and the
    message once nothing is left."""

    kind: ClassVar[AuditQueue]
    display_name: ClassVar[str]
    summary: ClassVar[str]  # what the queue serves, for the page's help

    @abstractmethod
    def pairs(self, basis: QueueBasis) -> pd.DataFrame:
        """The pairs still to label, in the order they come (columns of `basis.pairs`, at least `PAIR_KEY`,
        `page_a`, `page_b`, `bucket`)."""

    @abstractmethod
    def caption(self, basis: QueueBasis, current: pd.Series, counter: str, left: int) -> str:
        """Why `current` (a row of `pairs`) comes now; `counter` says which pair it is ("Pair 3 of 12") and
        `left` how many are left in the queue."""

    @abstractmethod
    def done_message(self, basis: QueueBasis) -> str:
        """Why the queue is empty, and what to do next."""

    def more_quota(self, basis: QueueBasis) -> int | None:
        """The quota that brings more pairs into an empty queue (the "more pairs" key); None: none does."""
        return None


class QuotaQueue(PairQueue):
    """Sampled by bucket: every similarity bucket gets `per_bucket` decided labels, the buckets nearest
    the threshold first, each bucket's pairs in one shuffled order (`labels.audit_queue`)."""

    kind = AuditQueue.QUOTA
    display_name = "quota per bucket"
    summary = "every similarity bucket gets *pairs per bucket* decided labels."

    def pairs(self, basis: QueueBasis) -> pd.DataFrame:
        return audit_queue(
            basis.pairs,
            basis.matched,
            per_bucket=basis.per_bucket,
            seed=basis.seed,
            skipped=set(basis.skipped),
            focus=basis.config.threshold,
            positions=basis.positions,
        )

    def caption(self, basis: QueueBasis, current: pd.Series, counter: str, left: int) -> str:
        config = basis.config
        unit = "" if config.method == "simhash" else f" {config.similarity}"  # a SimHash bucket says "3 bits"
        return (
            f"{counter} to label ({left} left) · similarity bucket {bucket_range(current['bucket'], config)}{unit}"
            + ("" if config.method == "simhash" else f" (this pair {score_text(float(current['score']))})")
            + f" · nearest the threshold first · {counted(basis.per_bucket, 'decided label')} per bucket"
        )

    def done_message(self, basis: QueueBasis) -> str:
        n_decided = int(basis.matched["label"].isin(["duplicate", "not"]).sum())
        tally = f"{counted(n_decided, 'decided label')} at this setting, {counted(len(basis.skipped), 'pair')} skipped"
        stop = "whether you can stop: *Progress per bucket and the stop rule* below, or the **Tune** page."
        if self.more_quota(basis) is None:  # the page draws no "more pairs" key: none would bring a pair
            return f"Every pair at this setting is labeled or skipped ({tally}); {stop}"
        return (
            f"Every bucket has {counted(basis.per_bucket, 'decided label')}, or no unlabeled pair left "
            f"({tally}). For more, press **m** (or raise *Pairs per bucket* in the sidebar, under *Labeling*); "
            + stop
        )

    def more_quota(self, basis: QueueBasis) -> int | None:
        """The quota that brings MORE_PER_BUCKET more pairs to the least labeled bucket with pairs left (a
        quota at or under a bucket's labels brings none there); None when no quota brings more."""
        tallies = basis.tallies
        left = tallies[tallies["unlabeled"] > 0]
        if left.empty or basis.per_bucket >= PER_BUCKET_MAX:
            return None
        return min(max(int(left["labeled"].min()) + MORE_PER_BUCKET, basis.per_bucket + 1), PER_BUCKET_MAX)


class ActiveQueue(PairQueue):
    """Active (decisive): the pairs of the bucket where one more label narrows precision and recall at the
    threshold most first, until the stop rule holds (`labels.active_queue`)."""

    kind = AuditQueue.ACTIVE
    display_name = "active"
    summary = (
        "the pair whose label narrows precision and recall at the threshold most, until both are known to "
        f"+/-{STOP_HALF_WIDTH:g}."
    )

    def pairs(self, basis: QueueBasis) -> pd.DataFrame:
        return active_queue(
            basis.pairs,
            basis.matched,
            basis.tallies,
            basis.config,
            seed=basis.seed,
            skipped=set(basis.skipped),
        )

    def caption(self, basis: QueueBasis, current: pd.Series, counter: str, left: int) -> str:
        config = basis.config
        return (
            f"{counter} ({left} left) in the buckets that narrow the decision · bucket "
            f"{bucket_range(current['bucket'], config)}: one more label "
            f"there narrows precision and recall at {config.threshold:g} most"
        )

    def done_message(self, basis: QueueBasis) -> str:
        config = basis.config
        d = decision_at(basis.tallies, config)
        return f"Stop: {d.summary()}" + (
            f", both within +/-{STOP_HALF_WIDTH:g}."
            if d.done
            else "; no pair left that narrows them (every pair is labeled or skipped)."
        )


class DisagreementQueue(PairQueue):
    """SimHash vs MinHash: the pairs one method flags at its threshold and the other does not
    (`audit.method_disagreements`), passed over where labeled (a URL-only label covers every fetch of its
    two URLs) or skipped. `other_pairs` are the candidate pairs of `other`, the setting under the other
    method."""

    kind = AuditQueue.DISAGREE
    display_name = "SimHash vs MinHash disagree"
    summary = "pairs one method flags at its threshold and the other does not."

    def __init__(self, other_pairs: pd.DataFrame, other: Config) -> None:
        self.other_pairs = other_pairs
        self.other = other

    def _configs(self, config: Config) -> tuple[Config, Config]:
        """The SimHash and the MinHash setting, whichever of them `config` is."""
        return (config, self.other) if config.method == "simhash" else (self.other, config)

    def pairs(self, basis: QueueBasis) -> pd.DataFrame:
        sim_cfg, mh_cfg = self._configs(basis.config)
        sim_pairs, mh_pairs = (
            (basis.pairs, self.other_pairs)
            if basis.config.method == "simhash"
            else (self.other_pairs, basis.pairs)
        )
        queue = audit.method_disagreements(
            sim_pairs, mh_pairs, simhash_bits=int(sim_cfg.threshold), minhash_threshold=mh_cfg.threshold
        )
        done = set(basis.labels[PAIR_KEY].itertuples(index=False, name=None)) | set(basis.skipped)
        done_urls = {(a, b) for a, ma, b, mb in done if not ma and not mb}
        keep = [
            k not in done and (k[0], k[2]) not in done_urls
            for k in queue[PAIR_KEY].itertuples(index=False, name=None)
        ]
        return queue[keep].reset_index(drop=True)

    def caption(self, basis: QueueBasis, current: pd.Series, counter: str, left: int) -> str:
        sim_cfg, mh_cfg = self._configs(basis.config)
        bits, score = current["simhash_bits"], current["minhash_score"]
        return (
            f"{counter} ({left} left) SimHash and MinHash disagree on · flagged by {current['flagged_by']} only "
            f"· SimHash {'no candidate' if pd.isna(bits) else f'{int(bits)} bits'} (threshold "
            f"{int(sim_cfg.threshold)}) · MinHash {mh_cfg.similarity} "
            f"{'no candidate' if pd.isna(score) else f'{score:.2f}'} (threshold {mh_cfg.threshold:g})"
        )

    def done_message(self, basis: QueueBasis) -> str:
        sim_cfg, mh_cfg = self._configs(basis.config)
        return (
            f"SimHash at {int(sim_cfg.threshold)} bits and MinHash at {mh_cfg.threshold:g} {mh_cfg.similarity} "
            "flag the same pairs, apart from pairs labeled or skipped."
        )


class ContestedQueue(PairQueue):
    """Labelers disagree: the pairs labeled both duplicate and not with no adjudicated label, in the order
    of the labeled pairs; a label given here is the adjudicated final one."""

    kind = AuditQueue.CONTESTED
    display_name = "labelers disagree"
    summary = (
        "pairs labeled both duplicate and not; your label there is the adjudicated final one (labeler "
        f"'{ADJUDICATOR}')."
    )

    def pairs(self, basis: QueueBasis) -> pd.DataFrame:
        matched, skipped = basis.matched, basis.skipped
        contested = matched[matched["contested"]] if "contested" in matched else matched.iloc[:0]
        queue = contested[PAIR_KEY].merge(basis.pairs[[*PAIR_KEY, "page_a", "page_b", "bucket"]], on=PAIR_KEY)
        queue = queue[[k not in skipped for k in queue[PAIR_KEY].itertuples(index=False, name=None)]]
        return queue.reset_index(drop=True)

    def caption(self, basis: QueueBasis, current: pd.Series, counter: str, left: int) -> str:
        pairs = basis.pairs
        theirs = labels_by_labeler(pairs[(pairs[PAIR_KEY] == current[PAIR_KEY]).all(axis=1)], basis.labels)
        given = ", ".join(
            f"{md_escape(w if isinstance(w, str) and w else 'unnamed')}: {lab}"
            for w, lab in zip(theirs["labeler"], theirs["label"], strict=True)
        )
        return (
            f"{counter} ({left} left) contested · bucket {bucket_range(current['bucket'], basis.config)} · "
            f"{given} · your label is the adjudicated final one"
        )

    def done_message(self, basis: QueueBasis) -> str:
        return "No contested pair: every pair the labelers disagree on has an adjudicated label."


QUEUE_CLASSES: dict[AuditQueue, type[PairQueue]] = {
    cls.kind: cls for cls in (QuotaQueue, ActiveQueue, DisagreementQueue, ContestedQueue)
}


def pair_queue(
    kind: AuditQueue, *, other_pairs: pd.DataFrame | None = None, other: Config | None = None
) -> PairQueue:
    """The queue `kind`; the SimHash vs MinHash queue (`kind.compares_methods`) takes `other`, the setting
    under the other method, and `other_pairs`, its candidate pairs."""
    if kind.compares_methods:
        if other_pairs is None or other is None:
            raise ValueError(f"the {kind.display_name!r} queue needs the other method's setting and pairs")
        return DisagreementQueue(other_pairs, other)
    return QUEUE_CLASSES[kind]()


def queue_help() -> str:
    """What each queue serves, for the page's help (Markdown)."""
    return " ".join(f"*{kind.display_name}*: {QUEUE_CLASSES[kind].summary}" for kind in AuditQueue)

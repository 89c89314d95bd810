"""Fingerprint sets computed on a background thread of the app's process, one at a time, with one progress
across all their stages (stage name, done / total, overall share, ETA).

A thread, not a subprocess: the computation writes through the app's own connection to the file
(`Store.writing`), which the app's reads share while it runs (DuckDB lets one process write a file; another
process could not read it meanwhile). So the other pages, and threshold moves on a setting already computed,
stay usable.

Who waits for what: each session wants at most one setting computed (`FingerprintJobs.want`). A session's
newer want (another setting not computed yet) replaces its older one; a job no session wants any more is
dropped from the queue, or, running, cancelled at its next progress report (the sketches it stored so far are
kept: a later computation of that shingle size reuses them). Jobs other sessions still want stay, and run in
the order they were asked for. A session that goes back to a setting already computed gives up nothing: the
computation goes on, and its set is stored for when that setting is asked for again.
"""

from __future__ import annotations

import atexit
import dataclasses
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from ..config import Config
from ..engine import Progress

# The stages a fingerprint set's computation reports (`engine.fingerprint_plan`), what the bar calls them,
# and their share of the time: seconds per stage of a MinHash shingle-size change (5 -> 8) on 100k pages of
# the 16 KB bench crawl (texts stored, verify: exact): sketches 27, candidates 20, verification 10, saving 1;
# normalizing is ~1 CPU-ms a page. A stage's share is its weight over the weights of the stages the
# computation runs.
# The bar of a computation about to start (queued, nothing before it).
STARTING_LABEL = "Starting the exact computation"
STAGE_NAMES = {
    "normalize": "normalizing the pages",
    "fingerprint": "sketching the texts",
    "candidates": "finding candidate pairs",
    "verify": "verifying the pairs exactly",
    "save": "saving the fingerprint set",
}
STAGE_WEIGHTS = {"normalize": 60.0, "fingerprint": 27.0, "candidates": 20.0, "verify": 10.0, "save": 1.0}
# The share of the work done before ETAs are shown (a rate measured on less says little).
ETA_MIN_SHARE = 0.03


class JobState(Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Superseded(Exception):
    """Raised from a job's progress report when no session wants its setting any more."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JobProgress:
    """Where a job is: its state, the stage running (index 1..n of the plan's n), the stage's done / total,
    the share of the whole computation done, and the seconds since it started and, estimated, to go."""

    state: JobState
    stage: str
    stage_index: int
    n_stages: int
    done: int
    total: int
    share: float
    elapsed_s: float
    eta_s: float | None
    error: str | None = None
    behind_another: bool = False  # queued while another setting's computation runs or waits before it

    def label(self) -> str:
        """One line for the progress bar."""
        if self.state is JobState.QUEUED:
            if not self.behind_another:  # next: the thread picks it up at once
                return STARTING_LABEL
            return "Exact computation queued behind another setting's"
        if self.state is JobState.FAILED:
            return f"Exact computation failed: {self.error}"
        if self.state is JobState.DONE:
            return f"Exact computation done in {self.elapsed_s:,.0f} s"
        counts = f" ({self.done:,} / {self.total:,})" if self.total > 1 else ""
        eta = f", about {self.eta_s:,.0f} s left" if self.eta_s is not None else ""
        return (
            f"Computing the exact numbers: stage {self.stage_index} of {self.n_stages}, "
            f"{STAGE_NAMES.get(self.stage, self.stage)}{counts} · {self.share:.0%} done, "
            f"{self.elapsed_s:,.0f} s so far{eta}"
        )


def overall_share(plan: Sequence[str], stage: str, done: int, total: int) -> float:
    """The share of a computation done when `stage` of `plan` has `done` of `total`: the stages before it
    whole, this one in proportion, each weighted by STAGE_WEIGHTS."""
    weights = [STAGE_WEIGHTS.get(s, 1.0) for s in plan]
    if stage not in plan:
        return 0.0
    i = plan.index(stage)
    inner = min(done / total, 1.0) if total > 0 else 0.0
    return (sum(weights[:i]) + weights[i] * inner) / sum(weights)


@dataclass(slots=True, eq=False)
class _Job:
    path: str
    config: Config
    run: Callable[[Progress], object]
    plan: Callable[[], list[str]]
    owners: set[str]
    state: JobState = JobState.QUEUED
    stages: list[str] = field(default_factory=list)
    stage: str = ""
    done: int = 0
    total: int = 0
    started: float = 0.0
    ended: float = 0.0
    error: str | None = None
    cancelled: bool = False

    def progress(self) -> JobProgress:
        now = self.ended if self.state in (JobState.DONE, JobState.FAILED) else time.monotonic()
        elapsed = now - self.started if self.started else 0.0
        if self.state is JobState.DONE:
            share = 1.0
        else:
            share = overall_share(self.stages, self.stage, self.done, self.total) if self.stages else 0.0
        eta = (
            elapsed * (1 - share) / share
            if share >= ETA_MIN_SHARE and self.state is JobState.RUNNING
            else None
        )
        return JobProgress(
            state=self.state,
            stage=self.stage,
            stage_index=self.stages.index(self.stage) + 1 if self.stage in self.stages else 1,
            n_stages=len(self.stages) or 1,
            done=self.done,
            total=self.total,
            share=share,
            elapsed_s=elapsed,
            eta_s=eta,
            error=self.error,
        )


JobKey = tuple[str, str]  # (database path, fingerprint key)


class FingerprintJobs:
    """The queue of fingerprint sets to compute and the one thread that computes them (see the module)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._jobs: dict[JobKey, _Job] = {}  # queued and running, in the order asked; finished ones kept
        self._wants: dict[str, JobKey] = {}  # owner -> the job it waits for
        self._thread: threading.Thread | None = None
        self._stopping = False

    def want(
        self,
        owner: str,
        path: str,
        config: Config | None,
        run: Callable[[Progress], object] | None = None,
        plan: Callable[[], list[str]] | None = None,
    ) -> None:
        """`owner` (a session) wants `config`'s set computed by `run(progress)` (`plan()`: the stages it will
        run), or nothing (None). Its earlier want is given up: that job is dropped or cancelled unless
        another owner wants it."""
        key = (path, config.fingerprint_key) if config is not None else None
        with self._cond:
            before = self._wants.pop(owner, None)
            if before is not None and before != key:
                self._give_up(owner, before)
            if key is None or config is None:
                return
            self._wants[owner] = key
            job = self._jobs.get(key)
            if job is None or job.state in (JobState.FAILED, JobState.DONE):
                if run is None or plan is None:
                    raise ValueError("a new job needs the function that computes it and its plan")
                job = self._jobs[key] = _Job(path, config, run, plan, set())
            job.owners.add(owner)
            if self._stopping:
                return
            if self._thread is None or not self._thread.is_alive():
                if self._thread is None:
                    atexit.register(self.stop)
                self._thread = threading.Thread(target=self._work, name="neardup-fingerprints", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def _give_up(self, owner: str, key: JobKey) -> None:
        job = self._jobs.get(key)
        if job is None:
            return
        job.owners.discard(owner)
        if job.owners or job.state in (JobState.DONE, JobState.FAILED):
            return
        if job.state is JobState.QUEUED:
            del self._jobs[key]
        else:
            job.cancelled = True

    def progress(self, path: str, config: Config) -> JobProgress | None:
        """Where the job of `config`'s set is (None: no such job)."""
        with self._cond:
            job = self._jobs.get((path, config.fingerprint_key))
            if job is None:
                return None
            ahead = itertools.takewhile(lambda other: other is not job, self._jobs.values())
            behind = job.state is JobState.QUEUED and any(
                other.state in (JobState.QUEUED, JobState.RUNNING) for other in ahead
            )
            return dataclasses.replace(job.progress(), behind_another=behind)

    def forget(self, path: str, config: Config) -> None:
        """Drop a finished job's record (its set is in the store; a failed one is tried again when wanted)."""
        with self._cond:
            job = self._jobs.get((path, config.fingerprint_key))
            if job is not None and job.state in (JobState.DONE, JobState.FAILED):
                del self._jobs[(path, config.fingerprint_key)]

    def wait(self, path: str, config: Config, timeout_s: float) -> JobProgress | None:
        """Until the job of `config`'s set has finished, or `timeout_s`; where it is then."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                job = self._jobs.get((path, config.fingerprint_key))
                left = deadline - time.monotonic()
                if job is None or job.state in (JobState.DONE, JobState.FAILED) or left <= 0:
                    return job.progress() if job is not None else None
                self._cond.wait(left)

    def stop(self, timeout_s: float = 30.0) -> None:
        """Drop the queue, cancel the running job at its next progress report and wait for the thread (at most
        `timeout_s`): run at the interpreter's exit, where a daemon thread stopped inside DuckDB would abort
        the process."""
        with self._cond:
            self._stopping = True
            for key, job in list(self._jobs.items()):
                if job.state is JobState.QUEUED:
                    del self._jobs[key]
                elif job.state is JobState.RUNNING:
                    job.cancelled = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)

    def _next(self) -> _Job | None:
        with self._cond:
            while True:
                if self._stopping:
                    return None
                for job in self._jobs.values():
                    if job.state is JobState.QUEUED:
                        job.state, job.started = JobState.RUNNING, time.monotonic()
                        return job
                self._cond.wait()

    def _work(self) -> None:
        while True:
            job = self._next()
            if job is None:
                return

            def report(stage: str, done: int, total: int, job: _Job = job) -> None:
                with self._cond:
                    if job.cancelled:
                        raise Superseded(job.config.fingerprint_key)
                    job.stage, job.done, job.total = stage, done, total
                    self._cond.notify_all()

            try:
                stages = job.plan()
                with self._cond:
                    job.stages = stages
                    job.stage = job.stage or (stages[0] if stages else "")
                job.run(report)
            except Superseded:
                with self._cond:
                    self._jobs.pop((job.path, job.config.fingerprint_key), None)
                    self._cond.notify_all()
                continue
            except Exception as exc:  # shown on the page that waits for it
                with self._cond:
                    job.state, job.error, job.ended = (
                        JobState.FAILED,
                        str(exc) or type(exc).__name__,
                        time.monotonic(),
                    )
                    self._cond.notify_all()
                continue
            with self._cond:
                job.state, job.ended = JobState.DONE, time.monotonic()
                self._cond.notify_all()

"""The app's background computations of fingerprint sets (neardup.ui.background), without Streamlit: one at
a time, a session's newer setting cancels its older one unless another session waits for it, one progress
across the stages; and the stage plan the engine reports for a real database."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest

from neardup import engine
from neardup.config import Config
from neardup.engine import Progress
from neardup.store import Store
from neardup.ui.background import (
    STAGE_WEIGHTS,
    STARTING_LABEL,
    FingerprintJobs,
    JobProgress,
    JobState,
    overall_share,
)

PLAN = ["fingerprint", "candidates", "save"]
WAIT_S = 30.0


class Gate:
    """A computation that reports its stages and waits, at a report, until the test lets it go on."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.go = threading.Event()
        self.finished = False
        self.reports: list[tuple[str, int, int]] = []

    def run(self, progress: Progress) -> None:
        progress("fingerprint", 0, 10)
        progress("fingerprint", 5, 10)
        self.reached.set()
        assert self.go.wait(WAIT_S)
        progress("fingerprint", 10, 10)  # a cancelled job stops here
        progress("candidates", 1, 1)
        progress("save", 1, 1)
        self.finished = True

    def plan(self) -> list[str]:
        return list(PLAN)


def config(k: int) -> Config:
    return Config().with_shingle_size(k)


def test_the_share_done_weighs_each_stage() -> None:
    total = sum(STAGE_WEIGHTS[s] for s in PLAN)
    assert overall_share(PLAN, "fingerprint", 0, 10) == 0.0
    assert overall_share(PLAN, "fingerprint", 5, 10) == pytest.approx(
        STAGE_WEIGHTS["fingerprint"] / 2 / total
    )
    assert overall_share(PLAN, "save", 1, 1) == pytest.approx(1.0)
    assert overall_share(PLAN, "candidates", 0, 1) == pytest.approx(STAGE_WEIGHTS["fingerprint"] / total)


def test_a_job_reports_its_stage_and_share_then_is_done() -> None:
    jobs, gate = FingerprintJobs(), Gate()
    jobs.want("s1", "db", config(6), gate.run, gate.plan)
    assert gate.reached.wait(WAIT_S)
    now = jobs.progress("db", config(6))
    assert now is not None and now.state is JobState.RUNNING
    assert (now.stage, now.stage_index, now.n_stages, now.done, now.total) == ("fingerprint", 1, 3, 5, 10)
    assert 0 < now.share < 1
    assert "stage 1 of 3, sketching the texts (5 / 10)" in now.label()
    gate.go.set()
    done = jobs.wait("db", config(6), WAIT_S)
    assert done is not None and done.state is JobState.DONE and done.share == 1.0 and gate.finished


def test_a_sessions_newer_setting_cancels_its_running_one() -> None:
    jobs, first, second = FingerprintJobs(), Gate(), Gate()
    jobs.want("s1", "db", config(6), first.run, first.plan)
    assert first.reached.wait(WAIT_S)
    jobs.want("s1", "db", config(7), second.run, second.plan)
    first.go.set()
    assert second.reached.wait(WAIT_S)
    assert not first.finished
    assert jobs.progress("db", config(6)) is None  # cancelled and dropped
    second.go.set()
    done = jobs.wait("db", config(7), WAIT_S)
    assert done is not None and done.state is JobState.DONE


def test_another_sessions_setting_waits_in_the_queue_and_a_shared_one_is_not_cancelled() -> None:
    jobs, first, second = FingerprintJobs(), Gate(), Gate()
    jobs.want("s1", "db", config(6), first.run, first.plan)
    jobs.want("s2", "db", config(6), first.run, first.plan)  # the same setting: one job, two waiting
    assert first.reached.wait(WAIT_S)
    jobs.want("s1", "db", config(7), second.run, second.plan)  # s2 still waits for 6: not cancelled
    queued = jobs.progress("db", config(7))
    assert queued is not None and queued.state is JobState.QUEUED and "queued" in queued.label()
    first.go.set()
    done = jobs.wait("db", config(6), WAIT_S)
    assert done is not None and done.state is JobState.DONE and first.finished
    assert second.reached.wait(WAIT_S)
    second.go.set()
    assert jobs.wait("db", config(7), WAIT_S).state is JobState.DONE  # type: ignore[union-attr]


def test_a_queued_job_with_nothing_before_it_says_it_is_starting() -> None:
    """Between the want and the thread picking it up, a job with no other before it is starting, not
    "queued behind another setting's"."""
    waiting = JobProgress(
        state=JobState.QUEUED,
        stage="",
        stage_index=1,
        n_stages=1,
        done=0,
        total=0,
        share=0.0,
        elapsed_s=0.0,
        eta_s=None,
    )
    assert waiting.label() == STARTING_LABEL
    assert "queued behind" in dataclasses.replace(waiting, behind_another=True).label()


def test_a_failed_job_says_why() -> None:
    jobs = FingerprintJobs()

    def fail(progress: Progress) -> None:
        raise RuntimeError("disk full")

    jobs.want("s1", "db", config(6), fail, lambda: list(PLAN))
    failed = jobs.wait("db", config(6), WAIT_S)
    assert failed is not None and failed.state is JobState.FAILED and "disk full" in failed.label()


def test_the_plan_names_the_stages_a_shingle_change_runs(tmp_path: Path) -> None:
    with Store(tmp_path / "sample.duckdb") as store:
        engine.ingest_file(store, engine.SAMPLE_CRAWL, Config())
        assert engine.fingerprint_plan(store, Config()) == ["candidates", "verify", "save"]
        assert engine.fingerprint_plan(store, config(7)) == ["fingerprint", "candidates", "verify", "save"]
        simhash = Config().with_method("simhash")
        assert engine.fingerprint_plan(store, simhash) == ["candidates", "save"]
        seen: list[str] = []
        engine.ensure_fingerprints(store, config(7), progress=lambda s, d, t: seen.append(s))
        assert list(dict.fromkeys(seen)) == ["fingerprint", "candidates", "verify", "save"]
        assert engine.fingerprint_plan(store, config(7)) == []

"""What the benchmarks share: the generated crawls, CPU-time medians, the process-tree monitor (RSS, PSS
and CPU from /proc) and the machine line every result carries.

A script in bench/ (or bench/studies/) imports it as `harness` after putting bench/ on its path."""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DATA = BENCH / "data"  # generated crawls, cached (git-ignored)
MAKE_SAMPLE = REPO / "scripts" / "make_sample.py"

PAGE = os.sysconf("SC_PAGE_SIZE")
TICK = os.sysconf("SC_CLK_TCK")
MB = 1024 * 1024


# ------------------------------------------------------------------------------------------------
# inputs
# ------------------------------------------------------------------------------------------------
def ensure_crawl(pages: int, seed: int = 42) -> tuple[Path, Path]:
    """The 16 KB bench crawl of `pages` records for `seed` (`make_sample.py --profile bench`), generated on
    first use and cached under bench/data/; returns (dump, truth CSV)."""
    DATA.mkdir(parents=True, exist_ok=True)
    out = DATA / f"crawl_{pages}_s{seed}.jsonl.gz"
    truth = DATA / f"crawl_{pages}_s{seed}.truth.csv"
    if out.is_file() and truth.is_file():
        return out, truth
    # written under partial-* names (still ending in .jsonl.gz: gzip by the name), renamed when complete
    part_out, part_truth = DATA / f"partial-{out.name}", DATA / f"partial-{truth.name}"
    print(f"generating {pages:,} pages (seed {seed}) -> {out}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, str(MAKE_SAMPLE), "--profile", "bench", "--pages", str(pages), "--seed", str(seed)]
        + ["--out", str(part_out), "--truth", str(part_truth)],
        check=True,
    )
    part_out.rename(out)
    part_truth.rename(truth)
    print(f"generated in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return out, truth


def member_ends(gz: Path) -> Iterator[tuple[int, int]]:
    """(byte offset after, records in) each gzip member of a multi-member file, in order."""
    with open(gz, "rb") as f:
        d, lines, fed, start, buf = zlib.decompressobj(31), 0, 0, 0, b""
        while True:
            if not buf:
                buf = f.read(1 << 22)
                if not buf:
                    if fed > start:
                        raise ValueError(f"{gz}: truncated gzip member at byte {start}")
                    return
            chunk, buf = buf[: 1 << 20], buf[1 << 20 :]
            lines += d.decompress(chunk).count(b"\n")
            if d.eof:
                rest = d.unused_data
                start = fed = fed + len(chunk) - len(rest)
                yield start, lines
                buf = rest + buf
                d, lines = zlib.decompressobj(31), 0
            else:
                fed += len(chunk)


def shard_crawl(gz: Path, shard_pages: int) -> list[Path]:
    """`gz` cut at member boundaries into files of about `shard_pages` records (cached beside it)."""
    folder = gz.with_name(gz.name.removesuffix(".jsonl.gz") + f".shards{shard_pages}")
    done = folder / "_DONE"
    if not done.is_file():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        print(f"cutting {gz.name} into shards of ~{shard_pages:,} records", file=sys.stderr, flush=True)
        cuts, since, start = [], 0, 0
        for end, lines in member_ends(gz):
            since += lines
            if since >= shard_pages:
                cuts.append((start, end))
                start, since = end, 0
        if gz.stat().st_size > start:
            cuts.append((start, gz.stat().st_size))
        with open(gz, "rb") as src:
            for i, (a, b) in enumerate(cuts):
                src.seek(a)
                (folder / f"part-{i:05d}.jsonl.gz").write_bytes(src.read(b - a))
        done.write_text(f"{len(cuts)}\n")
    return sorted(folder.glob("part-*.jsonl.gz"))


# ------------------------------------------------------------------------------------------------
# medians of repeated runs
# ------------------------------------------------------------------------------------------------
def cpu_median(
    fn: Callable[[], Any],
    repeat: int,
    *,
    warmup: bool = False,
    setup: Callable[[], Any] | None = None,
) -> tuple[float, Any]:
    """(median CPU seconds of this process over `repeat` calls of `fn`, the last call's result); with
    `warmup`, one call before them is not counted (caches, lazy imports); `setup` runs before each call,
    untimed."""
    times, out = [], None
    for i in range(repeat + warmup):
        if setup is not None:
            setup()
        t = time.process_time()
        out = fn()
        if i >= warmup:
            times.append(time.process_time() - t)
    return statistics.median(times), out


def median_ms(fn: Callable[[], Any], repeat: int = 5) -> tuple[float, float]:
    """Median wall and CPU milliseconds (this process, DuckDB's threads included) of `repeat` calls."""
    wall, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - t)
    return 1000 * statistics.median(wall), 1000 * statistics.median(cpu)


# ------------------------------------------------------------------------------------------------
# /proc: a process tree's CPU and memory, the machine's load
# ------------------------------------------------------------------------------------------------
def proc_stat(pid: int) -> tuple[int, float, int] | None:
    """(ppid, cpu seconds, start time) of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rindex(b")") + 2 :].split()
    return int(rest[1]), (int(rest[11]) + int(rest[12])) / TICK, int(rest[19])


def cpu_ms(pids: list[int]) -> float:
    """User + system CPU milliseconds of these processes so far (the ones gone count nothing)."""
    return 1000 * sum(st[1] for st in map(proc_stat, pids) if st is not None)


def rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE // 1024
    except OSError:
        return 0


def _proc_kb(path: str, field: bytes) -> int:
    """The kB of the line `field` ("Pss:") of a /proc file of a process (0: gone, or no such line)."""
    try:
        with open(path, "rb") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def anon_kb(pid: int) -> int:
    """The process's anonymous resident memory (RssAnon: its heap and private maps, not the file pages it
    maps, which the kernel can reclaim), kB."""
    return _proc_kb(f"/proc/{pid}/status", b"RssAnon:")


def pss_kb(pid: int) -> int:
    return _proc_kb(f"/proc/{pid}/smaps_rollup", b"Pss:")


def machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy (all processes, all cores), from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = v
    return (user + nice + system + irq + softirq + steal) / TICK


def process_tree(root: int) -> dict[int, tuple[float, int]]:
    """Processes of the tree under `root` (inclusive): pid -> (cpu seconds, start time)."""
    procs: dict[int, tuple[int, float, int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st is not None:
                procs[int(name)] = st
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in procs:
            out[pid] = (procs[pid][1], procs[pid][2])
            todo.extend(children.get(pid, []))
    return out


def run_monitored(
    cmd: list[str],
    *,
    max_rss_mb: float,
    max_seconds: float = float("inf"),
    interval: float = 0.2,
    pss_every: int = 10,
) -> tuple[int, list[tuple[float, float, float, float, int, float, float]], str]:
    """Run `cmd`; sample (t, rss MB, pss MB, cumulative CPU s, processes, largest process MB, main
    process's CPU s) of its tree.

    If the tree's RSS passes `max_rss_mb`, every process of the tree is killed (SIGKILL, by pid) before
    the kernel's OOM killer picks a victim on this shared machine; likewise after `max_seconds`.
    Returns (exit code, samples, why it was killed or ""); `run_monitored.machine_busy` is then the CPU
    seconds the whole machine spent meanwhile.
    """
    busy0 = machine_busy_s()
    proc = subprocess.Popen(cmd)
    samples = []
    killed = ""
    said: list[str] = []
    cpu_seen: dict[tuple[int, int], float] = {}
    pss = 0
    while True:
        t = time.monotonic()
        tree = process_tree(proc.pid)
        rss = biggest = 0
        main_cpu = tree.get(proc.pid, (0.0, 0))[0]
        # PSS (smaps_rollup) makes the kernel walk every page of the process: ~0.25 of a core for a
        # 5 GB JVM at 5 polls/s, taken from the run being measured. RSS (statm) is read every poll,
        # PSS every `pss_every`-th poll (carried forward in between).
        fresh_pss = len(samples) % pss_every == 0
        if fresh_pss:
            pss = 0
        for pid, (cpu, start) in tree.items():
            r = rss_kb(pid)
            rss += r
            biggest = max(biggest, r)
            if fresh_pss:
                pss += pss_kb(pid)
            cpu_seen[(pid, start)] = cpu
        samples.append(
            (t, rss / 1024, pss / 1024, sum(cpu_seen.values()), len(tree), biggest / 1024, main_cpu)
        )
        if killed:
            pass
        elif rss / 1024 > max_rss_mb:
            killed = f"killed by the memory guard (tree RSS > {max_rss_mb:,.0f} MB)"
        elif t - samples[0][0] > max_seconds:
            killed = f"killed by the time guard (engine run > {max_seconds:,.0f} s)"
        if killed and proc.poll() is None:
            if killed not in said:
                print(f"{killed}: killing the process tree", file=sys.stderr, flush=True)
                said.append(killed)
            for pid in sorted(tree, key=lambda p: p == proc.pid):  # workers first, the child last
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        if proc.poll() is not None:
            break
        time.sleep(interval)
    run_monitored.machine_busy = machine_busy_s() - busy0  # type: ignore[attr-defined]
    return proc.returncode, samples, killed


# ------------------------------------------------------------------------------------------------
# what a result is stamped with
# ------------------------------------------------------------------------------------------------
def machine() -> str:
    """The machine line of a result: cores, CPU model, RAM, Python."""
    cores = len(os.sched_getaffinity(0))
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PHYS_PAGES") * PAGE / 1024**3
    return f"nproc {cores} ({model}), {mem:.0f} GB RAM, Python {platform.python_version()}"


def commit() -> str:
    """HEAD's commit (in a worktree too), with a note when the tracked files have uncommitted changes."""
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return (head or "unknown") + (" + uncommitted changes" if dirty else "")

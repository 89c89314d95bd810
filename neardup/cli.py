"""`neardup ingest | report | export | evaluate | app | spark | open`: a thin front end over the engine."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, NoReturn, TextIO

import pyarrow as pa
import yaml

from . import engine, rules
from .analysis import (
    Analysis,
    Fingerprints,
    analyze,
    cluster_at_threshold,
    load_fingerprints,
    report_analysis,
)
from .app import HOME
from .categories import suggest_copies
from .config import Config, Method, load_config
from .dbfile import no_room
from .errors import ConfigError, NeardupError, NotACrawlDump
from .escapes import escape_controls
from .gate import Limit, evaluate, merge, parse_option
from .ingest import check_dump
from .markdown import counted
from .paths import ALLOW_ANY_PATH_ENV
from .rejects import RejectKind
from .spill import duckdb_memory, parse_memory_limit
from .store import DEFAULT_DB, DUCKDB_MEMORY, DUCKDB_SCAN_MEMORY, Store

SAMPLE = engine.SAMPLE_CRAWL


def _say(*parts: object, file: TextIO | None = None, flush: bool = False) -> None:
    """`print`, for every line the CLI writes: crawled URLs and file names in it cannot drive the terminal
    (their control characters are shown as escapes, `escapes.escape_controls`)."""
    stream = file or sys.stdout
    try:
        print(escape_controls(" ".join(map(str, parts))), file=stream, flush=flush)
    except BrokenPipeError:  # the reader stopped (`| head`): the work goes on, its lines are dropped
        _reader_gone(stream)


def _reader_gone(stream: TextIO) -> None:
    """Point `stream`'s file descriptor at /dev/null: its reader has gone, and what is still buffered for
    it (flushed as the process exits) and what is written later would raise BrokenPipeError again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        self.exit(2, escape_controls(f"{self.prog}: error: {message} (see {self.prog} --help)") + "\n")


def _tqdm_progress() -> engine.Progress:
    from tqdm import tqdm

    bars: dict[str, Any] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "ingest" and "read" in bars:  # bytes of a known size tell more than a running count
            return
        bar = bars.get(stage)
        if bar is None:
            for other in bars.values():
                other.close()
            unit = {"unit": "B", "unit_scale": True} if stage == "read" else {"unit": " pages"}
            bar = bars[stage] = tqdm(
                total=total or None, desc=f"{stage:>11}", disable=None, leave=False, file=sys.stderr, **unit
            )
        bar.update(done - bar.n)

    return progress


def _add_common(p: argparse.ArgumentParser, *, setting: bool = True, fingerprints: bool = True) -> None:
    p.add_argument(
        "--db", default=os.environ.get("NEARDUP_DB", DEFAULT_DB), help="DuckDB file (default: %(default)s)"
    )
    p.add_argument("--config", help="dupcheck.yaml with settings (flags override it)")
    p.add_argument(
        "--normalize", choices=["strip", "main"], help="boilerplate removal: tag stripping or main content"
    )
    p.add_argument(
        "--extractor", choices=["neardup", "resiliparse"], help="main-content extractor (default: neardup)"
    )
    p.add_argument("--jobs", type=int, help="worker processes (default: all cores)")
    if fingerprints:
        p.add_argument(
            "--memory-limit",
            help="keep the fingerprint step within this much memory, as 2GB, 512MB or 40%% of the machine: "
            "out of core where it would not fit, with the same pairs (default: the config's memory_limit, "
            "else half the machine)",
        )
    if setting:
        p.add_argument("--method", choices=["simhash", "minhash"])
        p.add_argument("--shingle-size", type=int, help="words per shingle")
        p.add_argument(
            "--threshold", type=float, help="bits (simhash: hamming <= t) or similarity (minhash: >= t)"
        )
        p.add_argument(
            "--similarity", choices=["jaccard", "containment"], help="what a minhash threshold applies to"
        )


def config_from_args(args: argparse.Namespace) -> Config:
    base = load_config(args.config) if args.config else Config()
    changes: dict[str, Any] = {}
    for attr, field in [
        ("normalize", "normalize"),
        ("extractor", "extractor"),
        ("method", "method"),
        ("shingle_size", "shingle_size"),
        ("similarity", "similarity"),
        ("memory_limit", "memory_limit"),
    ]:
        value = getattr(args, attr, None)
        if value is not None:
            changes[field] = value
    if "method" in changes and changes["method"] != base.method and getattr(args, "threshold", None) is None:
        base = base.with_method(changes["method"])
    if getattr(args, "threshold", None) is not None:
        t = args.threshold
        changes["threshold"] = (
            int(t) if changes.get("method", base.method) == "simhash" and t == int(t) else t
        )
    if "shingle_size" in changes:
        base = base.with_shingle_size(changes.pop("shingle_size"))
    return base.replace(**changes)


def _limit(text: str) -> Limit:
    """argparse type of `--fail-over`: a bad limit is a usage error (exit 2, one line)."""
    try:
        return parse_option(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _open(
    args: argparse.Namespace,
    *,
    must_exist: bool = True,
    bulk: bool = False,
    scans: bool = False,
    duckdb_memory: str | None = None,
) -> Store:
    """A bulk store for a load (the file to itself); else an on-demand one: read-only while it only reads
    (a report whose fingerprints are stored), so a running app or another report can share the file.
    `scans`: for a command whose reads each scan a column once (the report): DuckDB is given
    `scan_memory_limit`, so the blocks it scanned and keeps cached stay within that; `duckdb_memory`, where
    given, is DuckDB's limit otherwise."""
    if must_exist and not Path(args.db).exists():
        raise NeardupError(f"no database at {args.db}: run `neardup ingest DUMP --db {args.db}` first")
    if bulk:
        return Store(args.db, bulk=True)
    if scans:
        with Store(args.db, on_demand=True) as store:
            limit = scan_memory_limit(store)
        return Store(args.db, on_demand=True, memory_limit=limit)
    return Store(args.db, on_demand=True, memory_limit=duckdb_memory)


def scan_memory_limit(store: Store) -> str | None:
    """DuckDB's memory for a command whose reads each scan a column once: DUCKDB_SCAN_MEMORY, except over a
    Spark run's Parquet read in place (None: the store's default), where DuckDB reads a row group's column
    chunk whole (a million units' signatures: 66 MB in one block of the run's files)."""
    run = store.spark_run()
    return None if run is not None and run.get("mode") == "view" else DUCKDB_SCAN_MEMORY


def cmd_ingest(args: argparse.Namespace) -> int:
    """Load each file it can; each refused one is one line on stderr and makes the exit code 2. The inputs
    are checked before the database is opened, and a database this run made is removed again when
    nothing was kept in it (every file refused, a full disk, an interrupt)."""
    config = config_from_args(args)
    refused = 0

    def refuse(exc: NeardupError) -> None:
        nonlocal refused
        refused += 1
        _say(f"neardup: error: {exc}", file=sys.stderr)

    paths = []
    for path in args.paths:
        try:
            check_dump(Path(path))
            paths.append(path)
        except NotACrawlDump as exc:
            refuse(exc)
    if not paths:
        return 2
    new = not Path(args.db).exists()
    store = _open(args, must_exist=False, bulk=True)
    # Only a file this run made, tables and all, is removed: never one that was there (an empty DuckDB
    # file a user gave), nor one another process made at the same time.
    kept = not (new and store.created)
    path = paths[0]
    rejected = False  # by this run's files (one loaded before is not read again)
    try:
        progress = _tqdm_progress()
        for path in paths:
            try:
                s = engine.ingest_file(store, path, config, progress=progress, jobs=args.jobs)
            except NotACrawlDump as exc:
                refuse(exc)
                continue
            kept = True
            rejected = rejected or s.errors > 0
            _ingest_summary(path, s)
        if kept:
            store.close()
        else:
            store.discard()
    except BaseException as exc:
        if kept:
            store.close()
        else:
            store.discard()
        what = no_room(exc)
        if what is None:
            raise
        raise NeardupError(f"{what} at {args.db}: nothing of {path} was kept") from None
    if rejected:
        _say(f"rejected records are listed in the ingest_errors table of {args.db}")
    return 2 if refused else 0


def _ingest_summary(path: str, s: engine.FileSummary) -> None:
    if s.status == "already loaded":
        _say(f"{path}: already loaded (same bytes), nothing to do")
        return
    detail = ", ".join(f"{n} {r}" for r, n in sorted(s.reasons.items(), key=lambda kv: -kv[1]))
    if s.loaded == 0:
        dup = s.reasons.get(RejectKind.DUPLICATE, 0)
        other = f", {s.errors - dup:,} rejected" if s.errors > dup else ""
        _say(f"{path}: no new page (its {dup:,} records are loaded already{other})")
    else:
        _say(
            f"{path}: {counted(s.loaded, 'page')} loaded, {counted(s.errors, 'record')} rejected"
            f"{' (' + detail + ')' if detail else ''} in {s.seconds:.1f} s"
        )
    if s.broken is not None:
        _say(f"{path}: {s.broken}")
    for note in s.notes():
        _say(f"  {note}")


def _fingerprints(
    args: argparse.Namespace, store: Store, *, lean: bool = False
) -> tuple[Fingerprints, Config]:
    config = config_from_args(args)
    spark_run = store.spark_run()
    if spark_run is not None:
        from .spark import check_setting

        check_setting(spark_run, config)
    return load_fingerprints(store, config, progress=_tqdm_progress(), jobs=args.jobs, lean=lean), config


def _analysis(args: argparse.Namespace, store: Store) -> Analysis:
    fp, config = _fingerprints(args, store)
    return analyze(fp, config)


def _release_arrow_memory() -> None:
    """Return to the system what Arrow's memory pool keeps of the buffers freed so far (its allocator,
    mimalloc, keeps them for reuse): between the report's stages, so that what one stage read and dropped
    (every page's URLs for the URL parse) is not still resident under the next (the capped buckets' count
    peaked ~190 MB higher without it at 300k pages; bench/RESULTS.md)."""
    pa.default_memory_pool().release_unused()


def cmd_report(args: argparse.Namespace) -> int:
    """The report; with limits (the config's `gate:`, each overridden by `--fail-over`), exit 1 when one is
    crossed, with one line per crossed limit on stderr."""
    from .report import report_dict, report_text

    # The report's reads each scan a column once (the signatures, the texts), whose blocks DuckDB would keep
    # cached up to its memory limit (1 GB on a connection a write opened) while the file is open.
    with _open(args, scans=True) as store:
        if store.count_pages() == 0:
            raise NeardupError(f"{args.db} holds no pages: run `neardup ingest DUMP --db {args.db}` first")
        # the pages' strings are not held: the numbers come from the clustering's arrays, and the URLs
        # and fields of the copies are read from the store where a parse or a comparison needs them
        fp, config = _fingerprints(args, store, lean=True)
        analysis = report_analysis(fp, cluster_at_threshold(fp, config))
        del fp
        _release_arrow_memory()
        rejected = store.rejects_by_kind()
        # Parsed once per crawl for the URL rules page and `neardup rules` (no clustering changes them).
        engine.ensure_parsed_urls(store, analysis.pages)
        _release_arrow_memory()
        if analysis.config.method == "minhash":  # for the Audit page's evidence (a replay of the search)
            engine.ensure_capped_buckets(store, analysis.config)
            _release_arrow_memory()
        if not args.no_categories:
            suggest_copies(store, analysis, progress=_tqdm_progress(), jobs=args.jobs)
    limits = merge(analysis.config.gate, args.fail_over or [])
    verdict = evaluate(analysis.numbers, limits) if limits else None
    if args.json:
        _say(
            json.dumps(
                report_dict(analysis, top_hosts=args.top_hosts, verdict=verdict, rejected=rejected),
                indent=2,
                default=str,
            )
        )
    else:
        _say(report_text(analysis, top_hosts=args.top_hosts, verdict=verdict, rejected=rejected))
    if verdict is None or verdict.passed:
        return 0
    for check in verdict.failed:
        _say(f"neardup: gate failed: {check.line()}", file=sys.stderr)
    return 1


def cmd_export(args: argparse.Namespace) -> int:
    from .config import save_config
    from .export import kept_format, write_clusters_csv, write_kept, write_removed_csv

    outputs = [p for p in (args.out, args.kept, args.removed) if p]
    if not outputs:
        raise NeardupError("export needs at least one of --out CSV, --kept FILE, --removed CSV")
    if args.kept:
        kept_format(args.kept)
    if args.config_out and Path(args.config_out).exists():
        raise NeardupError(
            f"--config-out {args.config_out} exists: name a new file (it is never overwritten)"
        )
    with _open(args) as store:
        fp, config = _fingerprints(args, store)
        analysis = analyze(fp, config)
        n = analysis.numbers
        labels = store.labels()
        if args.kept:
            kept = write_kept(store, analysis, args.kept)
            _say(f"wrote {args.kept} ({kept:,} pages kept: one per cluster, degenerate pages left out)")
        if args.removed:
            removed = write_removed_csv(store, analysis, fp, args.removed, labels)
            _say(f"wrote {args.removed} ({removed:,} removed pages, each with the page kept in its place)")
        if args.out:
            write_clusters_csv(store, analysis, args.out, labels)
            _say(
                f"wrote {args.out} ({n['total_pages']:,} rows, {n['duplicate_clusters']:,} duplicate clusters)"
            )
    if args.config_out:
        yaml_path = Path(args.config_out)
    else:
        beside = Path(outputs[0]).with_name("dupcheck.yaml")
        yaml_path = free_name(beside)
        if yaml_path != beside:
            _say(f"{beside} exists and is kept: the setting goes to {yaml_path.name}")
    save_config(analysis.config, yaml_path)
    _say(f"wrote {yaml_path} (replay: neardup report --config {yaml_path} --db {args.db})")
    return 0


def free_name(path: Path) -> Path:
    """`path` if no file is there, else the first of `stem-1.suffix`, `stem-2.suffix`, ... that is free."""
    n = 0
    candidate = path
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


def cmd_rules(args: argparse.Namespace) -> int:
    """Learn URL rules from the clusters; write them as a config (`url_rules:`) and as a crawler's list."""
    from .config import save_config
    from .rules import crawler_rules, learn_rules, rules_text, url_table

    with _open(args) as store:
        analysis = _analysis(args, store)
        parsed = engine.ensure_parsed_urls(store, analysis.pages)
    learned = learn_rules(
        analysis.pages,
        min_precision=args.min_precision,
        min_support=args.min_support,
        table=url_table(analysis.pages, parsed=parsed),
    )
    config = analysis.config.replace(url_rules=learned.rules)
    crawler = crawler_rules(learned.rules)
    if args.json:
        _say(
            json.dumps(
                {
                    "rules": [s.as_dict() for s in learned.accepted],
                    "rejected": [s.as_dict() for s in learned.rejected],
                    "pages_saved": learned.pages_saved,
                    "crawl_traps": learned.traps.to_dict(orient="records"),
                    "crawler": crawler,
                },
                indent=2,
            )
        )
    else:
        _say(rules_text(learned))
    if args.out:
        save_config(config, args.out)
        _say(f"wrote {args.out} (url_rules applied by: neardup report --config {args.out} --db {args.db})")
    if args.crawler_out:
        path = Path(args.crawler_out)
        text = (
            json.dumps(crawler, indent=2)
            if path.suffix == ".json"
            else yaml.safe_dump(crawler, sort_keys=False)
        )
        path.write_text(text, encoding="utf-8")
        _say(f"wrote {path} ({len(crawler)} hosts)")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """Two crawls side by side: sources of --db, or two database files."""
    from .compare import comparison_text, open_comparison

    cmp = open_comparison(args.db, args.baseline, args.current, config_from_args(args), jobs=args.jobs)
    if args.json:
        _say(json.dumps(cmp.as_dict(top=args.top), indent=2, default=str))
    else:
        _say(comparison_text(cmp, top=args.top))
    if args.repeats_out:
        from .csvsafe import to_csv

        to_csv(cmp.repeats, args.repeats_out)
        _say(f"wrote {args.repeats_out} ({len(cmp.repeats):,} current pages that duplicate a baseline page)")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from .evaluate import load_truth, pairwise_scores

    with _open(args) as store:
        analysis = _analysis(args, store)
    scores = pairwise_scores(analysis.pages, load_truth(args.truth))
    _say(json.dumps(scores.as_dict(), indent=2))
    return 0


def app_database(named: str | None) -> tuple[Path, bool]:
    """(the database the app opens, whether it may get the bundled sample). No database named (no --db, no
    NEARDUP_DB) is a first look: a new or empty database gets the sample. A named one is the user's: it is
    never filled with synthetic pages."""
    named = named or os.environ.get("NEARDUP_DB") or None
    return Path(named or DEFAULT_DB), named is None


# The server's options on its command line, not in a ./.streamlit/config.toml that only a start inside the
# checkout reads: the same upload limit (a real WARC is over Streamlit's 200 MB) wherever the app is started.
APP_SERVER_OPTIONS = ("--server.maxUploadSize", "2000", "--theme.base", "light")


def cmd_app(args: argparse.Namespace) -> int:
    db, first_look = app_database(args.db)
    if first_look and not db.exists() and SAMPLE.exists():
        _say(f"no database named and none at {db}: loading the bundled sample {SAMPLE.name} first")
        with Store(db, bulk=True) as store:
            config = Config()
            engine.ingest_file(store, SAMPLE, config, progress=_tqdm_progress(), jobs=args.jobs)
            engine.ensure_fingerprints(store, config, progress=_tqdm_progress(), jobs=args.jobs)
    env = {
        **os.environ,
        "NEARDUP_DB": str(db.resolve()),
        ALLOW_ANY_PATH_ENV: "1" if args.allow_any_path else "0",
    }
    env["NEARDUP_LOAD_SAMPLE"] = "1" if first_look else "0"
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(HOME),
        "--server.port",
        str(args.port),
        "--server.address",
        args.address,
        "--browser.gatherUsageStats",
        "false",
        # no "Deploy" button, but the toolbar with the running indicator and its Stop button ("minimal"
        # hides them: a long run would show a still page)
        "--client.toolbarMode",
        "viewer",
        *APP_SERVER_OPTIONS,
    ]
    if args.headless:
        cmd += ["--server.headless", "true"]
    sys.stdout.flush()
    sys.stderr.flush()
    # Streamlit replaces this process (same pid): a kill or kill -9 of `neardup app` stops the server itself,
    # where a child would be left holding the port.
    os.execve(sys.executable, cmd, env)
    return 0  # reached only where execve is stubbed out


def cmd_spark(args: argparse.Namespace) -> int:
    from .spark import run_spark, spark_session

    config = config_from_args(args)
    conf = {}
    for item in args.conf or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise NeardupError(f"--conf takes KEY=VALUE, not {item!r}")
        conf[key.strip()] = value.strip()

    def log(msg: str) -> None:
        _say(f"spark: {msg}", file=sys.stderr, flush=True)

    session = spark_session(
        args.master,
        conf=conf,
        python_env=args.python_env,
        env_cache=Path(args.env_cache) if args.env_cache else None,
        log=log,
    )
    try:
        m = run_spark(
            session,
            args.inputs,
            args.out,
            config,
            input_format=args.input_format,
            keep_html=args.keep_html,
            overwrite=args.overwrite,
            previous=args.previous,
            log=log,
        )
    finally:
        session.stop()
    n, c = m["numbers"], m["counts"]
    _say(
        f"wrote {args.out}: {c['pages']:,} pages ({c['errors']:,} records rejected), {c['units']:,} distinct texts, "
        f"{c['pairs']:,} pairs, {n['unique_pages']:,} clusters ({n['redundant_pct']}% redundant) "
        f"in {m['timings_s']['total']:.1f} s; audit it with: neardup open {args.out} --db FILE"
    )
    return 0


def cmd_open(args: argparse.Namespace) -> int:
    """The database over a Spark run's output, its parsed URLs (the URL rules page reads them), the capped
    buckets of a MinHash run (the Audit page's evidence) and the copies' categories at the run's setting
    (the Clusters page reads them)."""
    from .spark import open_output

    m = open_output(args.dir, args.db, copy=args.copy)
    config = Config.from_dict(m["config"])
    with Store(args.db, on_demand=True) as store:
        fp = load_fingerprints(store, config, progress=_tqdm_progress(), jobs=args.jobs)
        # Kept as `report` keeps them: the parsed URLs for the URL rules page and `neardup rules`, the
        # capped buckets for the Audit page's evidence.
        engine.ensure_parsed_urls(store, fp.pages)
        if config.method == "minhash":
            engine.ensure_capped_buckets(store, config)
        if not args.no_categories:
            suggest_copies(store, analyze(fp, config), progress=_tqdm_progress(), jobs=args.jobs)
    how = "copied into" if args.copy else "read in place by"
    _say(
        f"{args.dir} ({m['counts']['pages']:,} pages, {m['fingerprint_key']}) is {how} {args.db}; "
        f"replay: neardup report --db {args.db} --config {args.dir}/dupcheck.yaml"
    )
    return 0


def _shingle_sizes(text: str) -> list[int]:
    """argparse type of `fingerprints --shingle`: one size ("5"), a range ("3-8") or a list ("4,6")."""
    try:
        sizes: list[int] = []
        for part in text.split(","):
            low, sep, high = part.partition("-")
            sizes += range(int(low), int(high) + 1) if sep else [int(low)]
    except ValueError:
        sizes = []
    if not sizes or any(not 1 <= k <= 20 for k in sizes):
        raise argparse.ArgumentTypeError(
            f"--shingle takes sizes from 1 to 20 as 5, 3-8 or 4,6 (low to high), not {text!r}"
        )
    return sorted(set(sizes))


def cmd_fingerprints(args: argparse.Namespace) -> int:
    """Compute and store the fingerprints and candidate pairs of each shingle size and method, so that the
    app and `report` read them instead of computing them when an analyst moves to that setting."""
    base = config_from_args(args)
    methods: list[Method] = (
        ["minhash", "simhash"] if args.methods == "both" else [args.methods or base.method]
    )
    # under a memory limit DuckDB keeps to the step's share of it from the file's first read
    limit = base.memory_limit_bytes
    share = None if limit is None else min(duckdb_memory(limit), parse_memory_limit(DUCKDB_MEMORY))
    with _open(args, duckdb_memory=None if share is None else f"{share}B") as store:
        for method in methods:
            at_method = base if method == base.method else base.with_method(method)
            for k in args.shingle:
                config = at_method.with_shingle_size(k, min_words=base.min_words)
                t = time.perf_counter()
                engine.ensure_fingerprints(store, config, progress=_tqdm_progress(), jobs=args.jobs)
                _say(f"{method}, shingles of {k} words: ready ({time.perf_counter() - t:,.0f} s)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="neardup", description="Audit exact and near duplicates in a web crawl dump.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser(
        "ingest",
        help="load crawl dumps (JSONL[.gz], CSV, Parquet, WARC[.gz], WET, ARC, WACZ) into the database",
    )
    p.add_argument("paths", nargs="+", help="crawl dump files")
    _add_common(p, setting=False, fingerprints=False)
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser(
        "fingerprints",
        help="precompute the fingerprints of the shingle sizes and methods an analyst may try (after ingest)",
    )
    _add_common(p, setting=False)
    p.add_argument(
        "--shingle", type=_shingle_sizes, default=[5], help="shingle sizes: 5, 3-8 or 4,6 (default: 5)"
    )
    p.add_argument(
        "--method", dest="methods", choices=["minhash", "simhash", "both"], help="default: the config's"
    )
    p.set_defaults(func=cmd_fingerprints)

    p = sub.add_parser("report", help="duplicate report at a setting and threshold")
    _add_common(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--top-hosts", type=int, default=10)
    p.add_argument(
        "--fail-over",
        action="append",
        type=_limit,
        metavar="METRIC=LIMIT",
        help="quality gate, repeatable: exit 1 when a number is above its limit. Metrics: "
        "redundant, degenerate, exact, near, byte_identical (percent of all pages, e.g. "
        "redundant=20%%); largest_cluster (pages), duplicate_clusters (count), e.g. "
        "largest_cluster=400. Overrides the same metric in the config's gate:",
    )
    p.add_argument(
        "--no-categories",
        action="store_true",
        help="do not compare the copies with their representatives for their categories (kept in the database "
        "for the app's Clusters page and exports; else computed there, on first use)",
    )
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "export",
        help="cluster assignments CSV, the deduplicated dump, the removed pages, and the "
        "dupcheck.yaml that replays the run",
    )
    _add_common(p)
    p.add_argument("--out", help="cluster assignments CSV, one row per page, e.g. clusters.csv")
    p.add_argument(
        "--kept",
        help="the pages deduplication keeps (each cluster's representative; a unique page is "
        "a cluster of one; degenerate pages are not kept) as they were loaded, plus "
        "cluster_id: kept.jsonl.gz, kept.jsonl or kept.parquet",
    )
    p.add_argument(
        "--removed",
        help="CSV of the removed pages: the representative each duplicates (same "
        "cluster_id in the kept dump), similarity in the threshold's unit, method",
    )
    p.add_argument(
        "--config-out",
        help="YAML path, never overwritten (default: dupcheck.yaml beside the first output, else dupcheck-N.yaml)",
    )
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "rules",
        help="URL rewrite rules learned from the clusters (url_rules for the config, a crawler's list)",
    )
    _add_common(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--out", help="dupcheck.yaml with the setting and its url_rules: section")
    p.add_argument("--crawler-out", help="the rules as a crawler applies them: rules.yaml or rules.json")
    p.add_argument(
        "--min-precision",
        type=float,
        default=rules.MIN_PRECISION,
        help="keep rules at least this precise (default: %(default)s)",
    )
    p.add_argument(
        "--min-support",
        type=int,
        default=rules.MIN_SUPPORT_PAIRS,
        help="keep rules explaining at least this many URL pairs of one cluster (default: %(default)s)",
    )
    p.set_defaults(func=cmd_rules)

    p = sub.add_parser(
        "compare", help="two crawls side by side: numbers, hosts, clusters new/gone/grown, repeated pages"
    )
    _add_common(p)
    p.add_argument("--baseline", required=True, help="source of --db (id or file name), or a database file")
    p.add_argument("--current", required=True, help="source of --db (id or file name), or a database file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--top", type=int, default=10, help="hosts and clusters listed")
    p.add_argument("--repeats-out", help="CSV of the current pages that duplicate a baseline page")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("evaluate", help="pairwise precision/recall against a ground-truth CSV")
    _add_common(p)
    p.add_argument("--truth", required=True, help="CSV url,true_cluster,kind, one row per record")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser(
        "spark", help="the whole audit on Apache Spark; Parquet out (pip install 'neardup[spark]')"
    )
    p.add_argument("inputs", nargs="+", help="JSONL[.gz] / Parquet files or directories (any Hadoop path)")
    p.add_argument(
        "--out", required=True, help="output directory (pages, units, pairs, clusters, _MANIFEST.json)"
    )
    p.add_argument("--config", help="dupcheck.yaml with settings (flags override it)")
    p.add_argument(
        "--normalize", choices=["strip", "main"], help="boilerplate removal: tag stripping or main content"
    )
    p.add_argument(
        "--extractor", choices=["neardup", "resiliparse"], help="main-content extractor (default: neardup)"
    )
    p.add_argument("--method", choices=["simhash", "minhash"])
    p.add_argument("--shingle-size", type=int, help="words per shingle")
    p.add_argument(
        "--threshold", type=float, help="bits (simhash: hamming <= t) or similarity (minhash: >= t)"
    )
    p.add_argument(
        "--similarity", choices=["jaccard", "containment"], help="what a minhash threshold applies to"
    )
    p.add_argument(
        "--master", default="local[*]", help="local[N], spark://HOST:PORT, yarn, ... (default: %(default)s)"
    )
    p.add_argument("--conf", action="append", metavar="KEY=VALUE", help="a Spark setting (repeatable)")
    p.add_argument(
        "--python-env",
        default="auto",
        metavar="auto|ARCHIVE|none",
        help="the executors' Python on a cluster: auto packs this environment and ships it (cached); "
        "ARCHIVE ships a prebuilt venv-pack / conda-pack archive (path or URI); none uses the nodes' own "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--env-cache",
        metavar="DIR",
        help="where packed environments are kept (default: $NEARDUP_CACHE_DIR or ~/.cache/neardup, spark-env/)",
    )
    p.add_argument("--input-format", choices=["auto", "jsonl", "parquet", "warc"], default="auto")
    p.add_argument(
        "--keep-html", action="store_true", help="keep the raw HTML in pages (for the app's HTML view)"
    )
    p.add_argument("--overwrite", action="store_true", help="replace an existing output directory")
    p.add_argument(
        "--previous",
        metavar="DIR",
        help="add INPUTS to this earlier run's output (same settings): only the new records are "
        "fingerprinted and paired; --out gets the output of a run over both",
    )
    p.set_defaults(func=cmd_spark)

    p = sub.add_parser("open", help="a DuckDB file over a `neardup spark` output, for the app and report")
    p.add_argument("dir", help="the --out directory of a finished `neardup spark` run")
    p.add_argument("--db", required=True, help="new DuckDB file to create")
    p.add_argument(
        "--copy",
        action="store_true",
        help="load the Parquet into tables instead of views (lets other methods be computed locally)",
    )
    p.add_argument("--jobs", type=int, help="worker processes (default: all cores)")
    p.add_argument(
        "--no-categories",
        action="store_true",
        help="do not compare the copies with their representatives for their categories (kept in the database "
        "for the app's Clusters page and exports; else computed there, on first use)",
    )
    p.set_defaults(func=cmd_open)

    p = sub.add_parser(
        "app", help="start the audit app (without --db: on the bundled sample if the database is new)"
    )
    _add_common(p, setting=False, fingerprints=False)
    p.set_defaults(db=None)  # whether a database was named decides whether the sample may be loaded
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--address", default="localhost", help="interface to serve on (default: %(default)s)")
    p.add_argument("--headless", action="store_true", help="do not open a browser")
    p.add_argument(
        "--allow-any-path",
        action="store_true",
        help="let the Load page read any file this process can (a personal machine); by default only "
        "files under NEARDUP_DATA_DIR (else the working directory and sample_data/)",
    )
    p.set_defaults(func=cmd_app)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # A reader that stops early (`neardup export --out /dev/stdout | head -1`) ends the output: quietly,
        # with SIGPIPE's exit status, as `yes | head -1` ends.
        _reader_gone(sys.stdout)
        return 128 + signal.SIGPIPE
    except ConfigError as exc:
        _say(f"neardup: error: {exc}", file=sys.stderr)
        return 2
    except NeardupError as exc:
        _say(f"neardup: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _say("neardup: interrupted; nothing half-written was kept", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

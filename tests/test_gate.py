"""The quality gate: limits parsed from options and dupcheck.yaml, checked against the report's numbers,
and `neardup report` as a CI step (exit 0 / 1 / 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Crawl, write_jsonl

from neardup.config import Config, dump_config, load_config
from neardup.errors import ConfigError
from neardup.gate import METRICS, Limit, evaluate, merge, parse_limit, parse_option

# The test crawl at the default setting (tests/test_cli.py pins them): 40 pages, 22 redundant (55%),
# 2 degenerate (5%), 18 exact and 4 near duplicates, 6 duplicate clusters, the largest of 5 pages.
NUMBERS = {
    "total_pages": 40,
    "redundant_pages": 22,
    "degenerate_pages": 2,
    "exact_duplicates": 18,
    "near_duplicates": 4,
    "byte_identical_duplicates": 12,
    "largest_cluster": 5,
    "duplicate_clusters": 6,
}


def test_metric_names_are_report_numbers() -> None:
    assert set(METRICS) == {
        "redundant",
        "degenerate",
        "exact",
        "near",
        "byte_identical",
        "largest_cluster",
        "duplicate_clusters",
    }
    assert {key for key, _ in METRICS.values()} <= set(NUMBERS)


def test_parse_limits() -> None:
    assert parse_option("redundant=20%") == Limit("redundant", 20.0)
    assert parse_option(" degenerate = 2.5% ") == Limit("degenerate", 2.5)
    assert parse_option("largest_cluster=400") == Limit("largest_cluster", 400.0)
    assert parse_limit("duplicate_clusters", 0) == Limit("duplicate_clusters", 0.0)  # a YAML number
    assert str(parse_option("redundant=20%")) == "20%" and str(parse_option("largest_cluster=400")) == "400"


@pytest.mark.parametrize(
    ("option", "needle"),
    [
        ("redundancy=20%", "unknown gate metric 'redundancy'"),
        ("redundant", "METRIC=LIMIT"),
        ("redundant=lots%", "'lots' is not a number"),
        ("redundant=nan%", "from 0% to 100%"),
        ("redundant=120%", "from 0% to 100%"),
        ("redundant=-1%", "from 0% to 100%"),
        ("redundant=20", "write it as 20%"),
        ("largest_cluster=5%", "largest_cluster is a count of pages, not a percentage"),
        ("largest_cluster=2.5", "a whole number of pages"),
        ("duplicate_clusters=-3", "a whole number of clusters"),
        ("largest_cluster=inf", "a whole number"),
    ],
)
def test_bad_limits(option: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=None) as exc:
        parse_option(option)
    assert needle in str(exc.value)


def test_a_limit_is_crossed_only_above_it() -> None:
    limits = (
        Limit("redundant", 55.0),
        Limit("degenerate", 4.99),
        Limit("largest_cluster", 5.0),
        Limit("duplicate_clusters", 5.0),
        Limit("near", 10.0),
    )
    verdict = evaluate(NUMBERS, limits)
    assert [c.passed for c in verdict.checks] == [True, False, True, False, True]
    assert not verdict.passed
    assert [c.limit.metric for c in verdict.failed] == ["degenerate", "duplicate_clusters"]
    assert verdict.failed[0].line() == "degenerate: 5.00% (2 pages) is over the limit 4.99%"
    assert verdict.failed[1].line() == "duplicate_clusters: 6 clusters is over the limit 5"
    d = verdict.as_dict()
    assert d["passed"] is False
    assert d["limits"][0] == {
        "metric": "redundant",
        "value": 55.0,
        "limit": 55.0,
        "unit": "%",
        "count": 22,
        "passed": True,
    }
    assert d["limits"][3] == {
        "metric": "duplicate_clusters",
        "value": 6,
        "limit": 5,
        "unit": "clusters",
        "count": 6,
        "passed": False,
    }
    assert evaluate(NUMBERS, ()).passed


def test_percentages_are_not_rounded_before_the_check() -> None:
    # 1 of 3 pages is 33.333...%: over 33.33%, though the report prints 33.33
    numbers = {**NUMBERS, "total_pages": 3, "degenerate_pages": 1}
    assert not evaluate(numbers, (Limit("degenerate", 33.33),)).passed
    # an empty database crosses no percentage
    assert evaluate({**NUMBERS, "total_pages": 0, "degenerate_pages": 0}, (Limit("degenerate", 0.0),)).passed


def test_options_override_the_config_per_metric() -> None:
    base = (Limit("redundant", 20.0), Limit("largest_cluster", 400.0))
    merged = merge(base, [Limit("redundant", 10.0), Limit("degenerate", 5.0), Limit("redundant", 30.0)])
    assert merged == (Limit("redundant", 30.0), Limit("largest_cluster", 400.0), Limit("degenerate", 5.0))


def test_gate_in_dupcheck_yaml_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "dupcheck.yaml"
    path.write_text("method: simhash\ngate:\n  redundant: 20%\n  largest_cluster: 400\n")
    config = load_config(path)
    assert config.gate == (Limit("redundant", 20.0), Limit("largest_cluster", 400.0))
    assert config.to_dict()["gate"] == {"redundant": "20%", "largest_cluster": 400}
    path.write_text(dump_config(config))
    assert load_config(path) == config
    assert Config().gate == () and Config().to_dict()["gate"] == {}
    path.write_text("gate:\n")  # an empty section: no limits
    assert load_config(path).gate == ()


@pytest.mark.parametrize(
    ("yaml_text", "needle"),
    [
        ("gate:\n  redundant: 20\n", "write it as 20%"),
        ("gate:\n  largest: 400\n", "unknown gate metric 'largest'"),
        ("gate:\n  - redundant: 20%\n", "gate must be a mapping"),
        ("gate:\n  largest_cluster: true\n", "must be a number"),
    ],
)
def test_bad_gate_in_config(tmp_path: Path, yaml_text: str, needle: str) -> None:
    path = tmp_path / "dupcheck.yaml"
    path.write_text(yaml_text)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert needle in str(exc.value)


def test_gate_twice_in_one_config_is_refused() -> None:
    with pytest.raises(ConfigError, match="twice"):
        Config(gate=(Limit("redundant", 20.0), Limit("redundant", 30.0)))


# --- the CLI, as a CI step runs it ----------------------------------------------------------------
CI_STEP = """\
set -u
neardup ingest "$CRAWL" --db "$DB" --jobs 1 >/dev/null
neardup report --db "$DB" --jobs 1 --fail-over redundant=60% --fail-over degenerate=5% \\
    --fail-over largest_cluster=400 >pass.txt 2>pass.err
echo "pass: $?"
neardup report --db "$DB" --jobs 1 --fail-over redundant=20% --fail-over degenerate=5% \\
    --fail-over largest_cluster=4 >fail.txt 2>fail.err
echo "fail: $?"
neardup report --db "$DB" --jobs 1 --config gate.yaml --json >gate.json 2>gate.err
echo "config: $?"
neardup report --db "$DB" --jobs 1 --config gate.yaml --fail-over redundant=56% >/dev/null 2>override.err
echo "override: $?"
neardup report --db "$DB" --jobs 1 --fail-over largest_cluster=5% >/dev/null 2>bad.err
echo "bad: $?"
"""


def test_gate_as_a_ci_step(tmp_path: Path, crawl: Crawl) -> None:
    """A shell script runs the installed `neardup` the way a pipeline step would and reads its exit codes."""
    write_jsonl(tmp_path / "crawl.jsonl", crawl.records)
    (tmp_path / "gate.yaml").write_text("gate:\n  redundant: 50%\n  duplicate_clusters: 10\n")
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "CRAWL": "crawl.jsonl",
        "DB": "ci.duckdb",
    }
    run = subprocess.run(
        ["bash", "-c", CI_STEP], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.stderr == ""
    assert run.stdout.splitlines() == ["pass: 0", "fail: 1", "config: 1", "override: 0", "bad: 2"]

    out = (tmp_path / "pass.txt").read_text()
    assert "quality gate: passed" in out and "redundant: 55.00% (22 pages) is within the limit 60%" in out
    assert (tmp_path / "pass.err").read_text() == ""

    assert (tmp_path / "fail.err").read_text().splitlines() == [
        "neardup: gate failed: redundant: 55.00% (22 pages) is over the limit 20%",
        "neardup: gate failed: largest_cluster: 5 pages is over the limit 4",
    ]
    assert "quality gate: FAILED" in (tmp_path / "fail.txt").read_text()

    # the config's limits, and the verdict in the JSON
    report = json.loads((tmp_path / "gate.json").read_text())
    assert report["gate"]["passed"] is False
    assert [(c["metric"], c["value"], c["limit"], c["passed"]) for c in report["gate"]["limits"]] == [
        ("redundant", 55.0, 50.0, False),
        ("duplicate_clusters", 6, 10, True),
    ]
    assert report["setting"]["gate"] == {"redundant": "50%", "duplicate_clusters": 10}
    assert (tmp_path / "gate.err").read_text().splitlines() == [
        "neardup: gate failed: redundant: 55.00% (22 pages) is over the limit 50%"
    ]
    # a flag overrides the config's limit of the same metric and keeps the others
    assert (tmp_path / "override.err").read_text() == ""

    bad = (tmp_path / "bad.err").read_text().strip().splitlines()
    assert len(bad) == 1 and "largest_cluster is a count of pages, not a percentage" in bad[0]


@pytest.mark.parametrize(
    ("limit", "needle"),
    [
        (Limit("largest", 4.0), "unknown gate metric 'largest'"),
        (Limit("redundant", 101.0), "from 0% to 100%"),
        (Limit("largest_cluster", 2.5), "a whole number of pages"),
    ],
)
def test_a_config_built_in_code_checks_its_limits(limit: Limit, needle: str) -> None:
    with pytest.raises(ConfigError) as exc:
        Config(gate=(limit,))
    assert needle in str(exc.value)

"""Config files that must each fail in one line naming the problem (never a traceback, a silent misread
or a huge message), shared by the config and CLI tests."""

from __future__ import annotations

from neardup.config import MAX_CONFIG_BYTES


def _billion_laughs() -> str:
    """Nine levels of nine aliases each: 387 million strings once expanded, a few hundred bytes as text."""
    lines = ["l0: &l0 [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines) + "\nstrip_tags: *l8\n"


# (file content, what the one-line error names). Each crashed with a traceback, was silently misread
# or produced a huge message before the loader and the type table.
HOSTILE_CONFIGS = [
    (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe binary", "not UTF-8 text"),
    (b"seed: -1\n", "seed must be from 0 to 4294967295, not -1"),
    (b"seed: 1e23\n", "seed must be a whole number, not '1e23'"),
    (b"seed: 100000000000000000000000\n", "seed must be from 0 to 4294967295"),
    (b"seed: abc\n", "seed must be a whole number, not 'abc'"),
    (b"method: simhash\nthreshold: .inf\n", "threshold must be a finite number, not inf"),
    (b"threshold: .nan\n", "threshold must be a finite number, not nan"),
    (b"strip_tags: nav\n", "strip_tags must be a list of tag names, not 'nav'"),
    (b"strip_tags: [nav, 3]\n", "strip_tags must be a list of tag names, not ('nav', 3)"),
    (b"shingle_size: true\n", "shingle_size must be a whole number, not True"),
    (b"num_perm: 128.0\n", "num_perm must be a whole number, not 128.0"),
    (b"threshold: yes\n", "threshold must be a finite number, not True"),
    (b"method: [simhash]\n", "method must be 'simhash' or 'minhash', not ['simhash']"),
    (b"seed: 1\nshingle_size: 4\nseed: 2\n", "duplicate key 'seed' (line 3, column 1)"),
    (_billion_laughs().encode(), "YAML aliases (*l0) are not accepted"),
    (b"strip_tags: " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),
    (b"seed: 1" + b"0" * 5000 + b"\n", "an integer of 5,001 digits is not a setting (line 1, column 7)"),
    (b"strip_tags: [" + b"a b " * 300 + b"]\n", "strip_tags must be a non-empty list of tag names"),
    (b"seed: 1\n" + b"#" * MAX_CONFIG_BYTES, "larger than 64 KB"),
    # a long value is quoted cut, recognisable by its start
    (b"gate:\n  redundant: " + b"9" * 50_000 + b"%\n", "gate limit redundant=9999"),
    (b"gate:\n  largest_cluster: " + b"x" * 50_000 + b"\n", "gate limit largest_cluster=xxxx"),
    (b"gate: [" + b",".join([b"1"] * 25_000) + b"]\n", "gate must be a mapping of metric: limit, not [1, 1"),
    (b"gate:\n  ? '" + b"m" * 50_000 + b"'\n  : 5\n", "unknown gate metric 'mmmm"),
    (b"url_rules:\n  - {host: a.com, kind: '" + b"k" * 50_000 + b"', name: x}\n", "url rule kind must be"),
    (
        b"url_rules:\n  - {host: a.com, kind: drop_param, name: '" + b"n/" * 25_000 + b"'}\n",
        "needs a name without",
    ),
    (
        b"url_rules:\n  - {host: a.com, kind: host_alias, name: '" + b"h" * 50_000 + b"'}\n",
        "host_alias url rule",
    ),
]

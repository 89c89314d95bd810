"""One frozen config for a run; `dupcheck.yaml` is its serialized form and replays the run exactly."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict, get_args

import yaml

from ._html import MAX_STRIP_TAGS  # what the extractor takes
from .errors import SHOWN_VALUE_CHARS as SHOWN_VALUE_CHARS  # quoted values are cut to it (re-exported)
from .errors import ConfigError, show_value
from .gate import Limit, check_limit, parse_limit
from .spill import parse_memory_limit
from .urls import UrlRule, UrlRuleDict

Method = Literal["simhash", "minhash"]
NormalizeMode = Literal["strip", "main"]
Extractor = Literal["neardup", "resiliparse"]
# Bump when neardup's extraction rules change: the cached main text is keyed by it.
EXTRACTOR_VERSION = 1
Similarity = Literal["jaccard", "containment"]
Verify = Literal["exact", "estimate"]
# Criteria of the representative rule, tried in order (the lowest page id breaks what is left):
# a member another member names by rel=canonical, the earliest / newest known fetch, the shortest URL.
REPRESENTATIVE_CRITERIA = ("canonical", "earliest", "newest", "shortest")
DEFAULT_REPRESENTATIVE: tuple[str, ...] = ("canonical", "earliest", "shortest")

# The classic boilerplate recipe: drop these elements, keep the stripped strings.
DEFAULT_STRIP_TAGS: tuple[str, ...] = (
    "nav",
    "footer",
    "script",
    "style",
    "form",
    "header",
    "aside",
    "noscript",
    "iframe",
    "svg",
    "template",
)

# The loosest thresholds the UI offers: pairs are computed once down to these, tighter ones are filters.
# Measured on a 20k-page make_crawl dump (main text, k = 5): pages of one store share a spec-table
# skeleton and shipping text, so 3.4M pairs have Jaccard 0.3-0.5 or containment 0.5-0.7, against
# 9.4k pairs above Jaccard 0.5 and 10k above containment 0.7. Storing the former does not scale
# (~100M pairs at 100k pages) and they are not duplicates, so the floors sit above them.
SIMHASH_MAX_BITS = 8
MINHASH_MIN_SIMILARITY = 0.5
CONTAINMENT_MIN_SIMILARITY = 0.7
DEFAULT_MIN_WORDS = 30  # a page with fewer words of main text is degenerate ("too short")
# Containment also counts when the smaller page holds at least this many shingles, whatever the size ratio:
# a print or syndicated copy of an article whose own page carries a long comment thread is 3-45% of its size.
# Calibrated with bench/studies/size_guard.py (main text, k = 5) on the sample (3,000 pages) and a 5,000-page
# `make_sample.py --profile realsize` crawl: of the pairs of different documents at containment >= 0.7 whose
# smaller side is below half the larger, the largest smaller side holds 38 shingles; of the true copies below
# half, the smallest holds 170 (a cut-short syndicated copy; the smallest print copy 336). The floor sits near
# the copies' end of that gap, since a false merge costs more than a missed teaser. Degenerate pages hold up
# to 203 (sample) and 440 (realsize) shingles when main extraction falls back to the stripped template, so the
# floor alone would not keep them out of a longer page: the degenerate rules set them aside before pairing.
MIN_CONTAINED_SHINGLES = 150
# datasketch seeds numpy's RandomState, which takes 0 .. 2**32 - 1.
MAX_SEED = 2**32 - 1
# A config file is a screenful of settings; anything larger is not one.
MAX_CONFIG_BYTES = 64 * 1024

# The type of every setting, checked before its range: (kind, allowed values of a choice).
# "int" takes integers only (a bool is not one), "float" any finite real number, "tags" a tuple of strings.
_FIELD_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "normalize": ("choice", get_args(NormalizeMode)),
    "extractor": ("choice", get_args(Extractor)),
    "strip_tags": ("tags", ()),
    "comments": ("bool", ()),
    "method": ("choice", get_args(Method)),
    "shingle_size": ("int", ()),
    "threshold": ("float", ()),
    "similarity": ("choice", get_args(Similarity)),
    "verify": ("choice", get_args(Verify)),
    "num_perm": ("int", ()),
    "seed": ("int", ()),
    "min_size_ratio": ("float", ()),
    "min_contained_shingles": ("int", ()),
    "partial_copies": ("bool", ()),
    "min_words": ("int", ()),
    "simhash_max_bits": ("int", ()),
    "minhash_min_similarity": ("float", ()),
    "containment_min_similarity": ("float", ()),
    # checked on their own in __post_init__
    "memory_limit": ("own", ()),
    "representative": ("own", ()),
    "gate": ("own", ()),
    "url_rules": ("own", ()),
}


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


class ConfigDict(TypedDict):
    """A `Config` as dupcheck.yaml and JSON give it (`Config.to_dict`): its fields in order, tuples as
    lists, the gate as a mapping `metric: limit`, a simhash threshold as whole bits."""

    normalize: NormalizeMode
    extractor: Extractor
    strip_tags: list[str]
    comments: bool
    method: Method
    shingle_size: int
    threshold: float
    similarity: Similarity
    verify: Verify
    num_perm: int
    seed: int
    min_size_ratio: float
    min_contained_shingles: int
    partial_copies: bool
    min_words: int
    simhash_max_bits: int
    minhash_min_similarity: float
    containment_min_similarity: float
    memory_limit: str | None
    representative: list[str]
    gate: dict[str, str | int]  # a "%" limit as text ("20%"), a count as a number
    url_rules: list[UrlRuleDict]


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Every setting of a run. Defaults were chosen by measurement on the sample crawl (see README)."""

    normalize: NormalizeMode = "main"
    # Main-content extractor (normalize: main): neardup's C version of resiliparse's rules, or resiliparse itself.
    extractor: Extractor = "neardup"
    strip_tags: tuple[str, ...] = DEFAULT_STRIP_TAGS
    # Main text keeps reader comment threads (normalize: main). Off by default: a thread is not the page's
    # document, changes between fetches, and can be ten times the article, so that a print or syndicated copy
    # of a commented article shares a tenth of its shingles (bench/QUALITY.md, "Comment threads").
    comments: bool = False
    method: Method = "minhash"
    shingle_size: int = 5
    # Bits (0..64) for simhash: a pair is a duplicate when hamming <= threshold.
    # Similarity (0..1) for minhash: a pair is a duplicate when similarity >= threshold.
    threshold: float = 0.8
    similarity: Similarity = "containment"
    # MinHash pairs: "exact" intersects the shingle sets of every pair whose estimate passed the floor
    # and stores exact Jaccard and containment; "estimate" keeps the signature estimates (faster, and
    # biased upwards near the floor: a pair is stored because its estimate came out high).
    verify: Verify = "exact"
    num_perm: int = 128
    seed: int = 1
    # Containment guard: the smaller shingle set must be at least this share of the larger one, or hold at
    # least `min_contained_shingles` shingles (0: the ratio alone decides).
    min_size_ratio: float = 0.5
    min_contained_shingles: int = MIN_CONTAINED_SHINGLES
    # Containment: a second, size-partitioned candidate pass (LSH Ensemble) for copies far shorter than their
    # original (a cut-short syndicated copy at 35-50% of its size), which the one LSH index finds only by
    # chance. It adds 0.003-0.015 CPU-ms/page to the candidate search, 1.1-1.65x (bench/RESULTS.md).
    partial_copies: bool = True
    # Degenerate below this many words of main text (never below the shingle size); a fetch up to a third short
    # of it is content where another fetch of its page reaches it (short_texts.short_fetch_margin).
    min_words: int = DEFAULT_MIN_WORDS
    simhash_max_bits: int = SIMHASH_MAX_BITS
    minhash_min_similarity: float = MINHASH_MIN_SIMILARITY
    containment_min_similarity: float = CONTAINMENT_MIN_SIMILARITY
    # The memory the fingerprint step keeps within ("2GB", "512MB", "40%" of the machine; unset: half the
    # machine): where its estimated in-memory peak is above it, the candidate search and exact verification
    # run out of core (`neardup.spill`), with the same pairs. Not part of any key: it changes how the pairs
    # are computed, never which.
    memory_limit: str | None = None
    # Which page of a cluster is kept: `newest` instead of `earliest` where the latest snapshot matters.
    representative: tuple[str, ...] = DEFAULT_REPRESENTATIVE
    # Quality gate (`neardup report` exits 1 when a limit is crossed); in YAML a mapping `metric: limit`.
    gate: tuple[Limit, ...] = ()
    # Per-host URL rewrites (`neardup rules`) applied after canonicalization; in YAML a list of
    # {host, kind, name} mappings.
    url_rules: tuple[UrlRule, ...] = ()

    def __post_init__(self) -> None:
        for name, (kind, allowed) in _FIELD_KINDS.items():
            value = getattr(self, name)
            if kind == "choice":
                if not isinstance(value, str) or value not in allowed:
                    options = " or ".join(repr(a) for a in allowed)
                    raise ConfigError(f"{name} must be {options}, not {show_value(value)}")
            elif kind == "int":
                if not _is_int(value):
                    raise ConfigError(f"{name} must be a whole number, not {show_value(value)}")
                object.__setattr__(self, name, int(value))  # numpy integers become Python ints
            elif kind == "float":
                if not _is_number(value) or not math.isfinite(value):
                    raise ConfigError(f"{name} must be a finite number, not {show_value(value)}")
                object.__setattr__(self, name, int(value) if _is_int(value) else float(value))
            elif kind == "own":
                continue
            elif kind == "bool":
                if not isinstance(value, bool):
                    raise ConfigError(f"{name} must be true or false, not {show_value(value)}")
                object.__setattr__(self, name, bool(value))
            elif not isinstance(value, tuple) or not all(isinstance(t, str) for t in value):
                raise ConfigError(f"{name} must be a list of tag names, not {show_value(value)}")
        if not 1 <= self.shingle_size <= 20:
            raise ConfigError(
                f"shingle_size must be an integer from 1 to 20, not {show_value(self.shingle_size)}"
            )
        if not 16 <= self.num_perm <= 1024:
            raise ConfigError(f"num_perm must be from 16 to 1024, not {show_value(self.num_perm)}")
        if not 0 <= self.seed <= MAX_SEED:
            raise ConfigError(f"seed must be from 0 to {MAX_SEED}, not {show_value(self.seed)}")
        if not 0 <= self.simhash_max_bits <= 16:
            raise ConfigError(
                f"simhash_max_bits must be from 0 to 16, not {show_value(self.simhash_max_bits)}"
            )
        if not 0.05 <= self.minhash_min_similarity <= 1:
            raise ConfigError(
                f"minhash_min_similarity must be from 0.05 to 1, not {show_value(self.minhash_min_similarity)}"
            )
        if not 0.05 <= self.containment_min_similarity <= 1:
            raise ConfigError(
                f"containment_min_similarity must be from 0.05 to 1, not {show_value(self.containment_min_similarity)}"
            )
        if self.method == "simhash":
            if self.threshold != int(self.threshold) or not 0 <= self.threshold <= self.simhash_max_bits:
                raise ConfigError(
                    f"simhash threshold is a whole number of bits from 0 to {self.simhash_max_bits}, "
                    f"not {show_value(self.threshold)}"
                )
        elif not self.minhash_floor <= self.threshold <= 1:
            raise ConfigError(
                f"minhash threshold is a {self.similarity} from {self.minhash_floor} to 1, "
                f"not {show_value(self.threshold)}"
            )
        if not 0 < self.min_size_ratio <= 1:
            raise ConfigError(f"min_size_ratio must be in (0, 1], not {show_value(self.min_size_ratio)}")
        if not 0 <= self.min_contained_shingles <= 1_000_000:
            raise ConfigError(
                f"min_contained_shingles must be from 0 to 1000000, not {show_value(self.min_contained_shingles)}"
            )
        if self.min_words < self.shingle_size:
            raise ConfigError(
                f"min_words ({self.min_words}) must be at least the shingle size ({self.shingle_size})"
            )
        if not self.strip_tags or not all(t.isidentifier() for t in self.strip_tags):
            raise ConfigError(
                f"strip_tags must be a non-empty list of tag names, not {show_value(self.strip_tags)}"
            )
        if len(self.strip_tags) > MAX_STRIP_TAGS:
            raise ConfigError(
                f"strip_tags may name at most {MAX_STRIP_TAGS} tags, not {len(self.strip_tags)}"
            )
        if self.memory_limit is not None:
            if not isinstance(self.memory_limit, str):
                raise ConfigError(
                    f"memory_limit must be a size such as 2GB or 40%, not {show_value(self.memory_limit)}"
                )
            parse_memory_limit(self.memory_limit)
        rule = self.representative
        if (
            not isinstance(rule, tuple)
            or not rule
            or not all(c in REPRESENTATIVE_CRITERIA for c in rule)
            or len(set(rule)) != len(rule)
            or {"earliest", "newest"} <= set(rule)
        ):
            raise ConfigError(
                f"representative must be a list of distinct criteria from {', '.join(REPRESENTATIVE_CRITERIA)} "
                f"(earliest or newest, not both), not {list(rule) if isinstance(rule, tuple) else rule!r}"
            )
        if not isinstance(self.gate, tuple) or not all(isinstance(g, Limit) for g in self.gate):
            raise ConfigError(f"gate must be a mapping of metric: limit, not {show_value(self.gate)}")
        for limit in self.gate:
            check_limit(limit)
        if len({g.metric for g in self.gate}) != len(self.gate):
            raise ConfigError("gate names a metric twice")
        if not isinstance(self.url_rules, tuple) or not all(isinstance(r, UrlRule) for r in self.url_rules):
            raise ConfigError(
                f"url_rules must be a list of host/kind/name rules, not {show_value(self.url_rules)}"
            )
        if len(set(self.url_rules)) != len(self.url_rules):
            raise ConfigError("url_rules names a rule twice")

    @property
    def minhash_floor(self) -> float:
        """The loosest MinHash threshold offered for the chosen similarity: pairs are stored down to it."""
        return (
            self.minhash_min_similarity if self.similarity == "jaccard" else self.containment_min_similarity
        )

    @property
    def memory_limit_bytes(self) -> int | None:
        """`memory_limit` in bytes; None: in memory."""
        return None if self.memory_limit is None else parse_memory_limit(self.memory_limit)

    @property
    def normalization(self) -> str:
        """The normalization as reports name it: "strip", or "main (<extractor>)"."""
        return f"main ({self.extractor})" if self.normalize == "main" else self.normalize

    # --- keys under which derived data is cached in the store -------------------------------
    @property
    def norm_key(self) -> str:
        """Identifies the normalized text: mode, extractor and whether comment threads are kept, plus the tag
        list (`strip`, and `main`'s fallback for pages without main content). Plain "main" is resiliparse's, as databases before the
        neardup extractor stored it."""
        tags = ",".join(sorted(self.strip_tags))
        if self.normalize == "main":
            if self.extractor == "resiliparse":
                if not self.comments:
                    return f"main:resiliparse-nocomments:{tags}"
                return "main" if self.strip_tags == DEFAULT_STRIP_TAGS else f"main:resiliparse:{tags}"
            return f"main:neardup-{EXTRACTOR_VERSION}{'' if self.comments else '-nocomments'}:{tags}"
        return "strip:" + tags

    @property
    def sketch_key(self) -> str:
        """Identifies the shingle sketches of one word sequence (both SimHash and MinHash)."""
        return f"k={self.shingle_size}|perm={self.num_perm}|seed={self.seed}"

    @property
    def searches_partial_copies(self) -> bool:
        """Whether the candidate search adds the size-partitioned pass: `partial_copies` applies to
        MinHash containment only."""
        return self.partial_copies and self.method == "minhash" and self.similarity == "containment"

    @property
    def fingerprint_key(self) -> str:
        """Identifies fingerprints and candidate pairs: everything but the threshold."""
        parts = [self.norm_key, self.method, f"k={self.shingle_size}"]
        if self.method == "minhash":
            parts += [
                f"perm={self.num_perm}",
                f"seed={self.seed}",
                f"sim={self.similarity}",
                f"floor={self.minhash_floor}",
                f"ratio={self.min_size_ratio}",
                f"min_shingles={self.min_contained_shingles}",
                *(["partial"] if self.searches_partial_copies else []),
                f"verify={self.verify}",
            ]
        else:
            parts.append(f"maxbits={self.simhash_max_bits}")
        if self.min_words != DEFAULT_MIN_WORDS:  # which texts are units (the default: no mention)
            parts.append(f"words={self.min_words}")
        return "|".join(parts)

    def replace(self, **changes: Any) -> Config:
        return dataclasses.replace(self, **changes)

    def with_shingle_size(self, shingle_size: int, *, min_words: int | None = None) -> Config:
        """This setting at `shingle_size`-word shingles. A text shorter than one shingle has no shingle to
        compare, so `min_words` (default: this setting's) is raised to the shingle size where it is below it;
        a front end that lets the user move the shingle size passes the floor the user chose, so a smaller
        shingle size brings that floor back."""
        floor = self.min_words if min_words is None else min_words
        return self.replace(shingle_size=shingle_size, min_words=max(floor, shingle_size))

    def with_method(self, method: Method) -> Config:
        """Switch method and move the threshold to that method's default."""
        return self.replace(method=method, threshold=default_threshold(method))

    def to_dict(self) -> ConfigDict:
        return {
            "normalize": self.normalize,
            "extractor": self.extractor,
            "strip_tags": list(self.strip_tags),
            "comments": self.comments,
            "method": self.method,
            "shingle_size": self.shingle_size,
            "threshold": int(self.threshold) if self.method == "simhash" else self.threshold,
            "similarity": self.similarity,
            "verify": self.verify,
            "num_perm": self.num_perm,
            "seed": self.seed,
            "min_size_ratio": self.min_size_ratio,
            "min_contained_shingles": self.min_contained_shingles,
            "partial_copies": self.partial_copies,
            "min_words": self.min_words,
            "simhash_max_bits": self.simhash_max_bits,
            "minhash_min_similarity": self.minhash_min_similarity,
            "containment_min_similarity": self.containment_min_similarity,
            "memory_limit": self.memory_limit,
            "representative": list(self.representative),
            "gate": {g.metric: str(g) if g.unit == "%" else int(g.value) for g in self.gate},
            "url_rules": [r.as_dict() for r in self.url_rules],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Config:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = [k for k in data if k not in known and k not in ("neardup", "version", "db")]
        if unknown:
            names = ", ".join(sorted(show_value(k) if not isinstance(k, str) else k for k in unknown))
            raise ConfigError(f"unknown setting(s) in config: {show_value(names)[1:-1]}")
        kwargs = {k: v for k, v in data.items() if k in known}
        if isinstance(kwargs.get("strip_tags"), list):  # YAML has lists; a string stays one and is refused
            kwargs["strip_tags"] = tuple(kwargs["strip_tags"])
        if isinstance(kwargs.get("representative"), list | str):
            rule = kwargs["representative"]
            kwargs["representative"] = (rule,) if isinstance(rule, str) else tuple(rule)
        if isinstance(kwargs.get("gate"), dict):
            kwargs["gate"] = tuple(parse_limit(str(m), v) for m, v in kwargs["gate"].items())
        elif kwargs.get("gate") is None:
            kwargs.pop("gate", None)
        if "url_rules" in kwargs:
            kwargs["url_rules"] = _url_rules(kwargs["url_rules"])
        if "method" in kwargs and "threshold" not in kwargs and kwargs["method"] in get_args(Method):
            kwargs["threshold"] = default_threshold(kwargs["method"])
        return cls(**kwargs)


def _url_rules(value: object) -> tuple[UrlRule, ...]:
    """The `url_rules:` list of a config file: mappings with host, kind and (but for fold_case) name."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ConfigError(f"url_rules must be a list of url rules, not {show_value(value)}")
    rules = []
    for item in value:
        if (
            not isinstance(item, dict)
            or not set(item) <= {"host", "kind", "name"}
            or not {"host", "kind"} <= set(item)
        ):
            raise ConfigError(f"a url rule is a mapping of host, kind and name, not {show_value(item)}")
        if not all(isinstance(v, str) for v in item.values()):
            raise ConfigError(f"a url rule's host, kind and name are text, not {show_value(item)}")
        rules.append(UrlRule(item["host"], item["kind"], item.get("name", "")))
    return tuple(rules)


def default_threshold(method: Method) -> float:
    return 6 if method == "simhash" else Config().threshold


class _ConfigLoader(yaml.SafeLoader):
    """YAML for settings: no aliases (a billion-laughs file expands to gigabytes) and no duplicate keys
    (the last one would silently win)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None,
                None,
                f"YAML aliases (*{show_value(event.anchor)[1:-1]}) are not accepted",
                event.start_mark,
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: SafeLoader refuses it below
                continue
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {show_value(key)}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node: Any) -> Any:
        try:
            return super().construct_yaml_int(node)
        except ValueError:  # beyond Python's 4,300-digit conversion limit
            raise yaml.constructor.ConstructorError(
                None, None, f"an integer of {len(node.value):,} digits is not a setting", node.start_mark
            ) from None


_ConfigLoader.add_constructor("tag:yaml.org,2002:int", _ConfigLoader.construct_yaml_int)


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """One line for a YAML error: the problem and where (PyYAML's own text spans lines and quotes the file)."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        where = exc.problem_mark or exc.context_mark
        at = f" (line {where.line + 1}, column {where.column + 1})" if where else ""
        return " ".join(f"{exc.problem}".split())[:200] + at
    return " ".join(str(exc).split())[:200]


def load_config(path: str | Path) -> Config:
    """Settings from a YAML file. Any problem is one ConfigError line naming the file, the key and the value."""
    p = Path(path)
    try:
        if p.is_dir():
            raise ConfigError(f"config file {p} is a directory")
        if p.exists() and not p.is_file():  # a FIFO would block the read until someone writes to it
            raise ConfigError(f"config file {p} is not a regular file (a FIFO, device or socket)")
        with p.open("rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {p}") from None
    except OSError as exc:
        raise ConfigError(f"config file {p} cannot be read: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"config file {p} is larger than {MAX_CONFIG_BYTES // 1024} KB: not a settings file"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {p} is not UTF-8 text (byte {exc.start})") from None
    try:
        data = yaml.load(text, Loader=_ConfigLoader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {p} is not valid YAML: {_yaml_problem(exc)}") from None
    except RecursionError:
        raise ConfigError(f"config file {p} is nested too deeply to be a settings file") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {p} must hold a mapping of settings")
    try:
        return Config.from_dict(data)
    except ConfigError as exc:
        raise ConfigError(f"config file {p}: {exc}") from None


def dump_config(config: Config) -> str:
    header = (
        "# neardup run settings. Replay with: neardup report --config dupcheck.yaml\n"
        "# threshold: bits (hamming <= threshold) for simhash; similarity (>= threshold) for minhash.\n"
    )
    body = {"neardup": 1, **config.to_dict()}
    return header + yaml.safe_dump(body, sort_keys=False)


def save_config(config: Config, path: str | Path) -> None:
    Path(path).write_text(dump_config(config), encoding="utf-8")

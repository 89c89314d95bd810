"""One frozen config for a run; `dupcheck.yaml` is its serialized form and replays the run exactly."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from ._html import MAX_STRIP_TAGS  # what the extractor takes
from .errors import ConfigError

Method = Literal["simhash", "minhash"]
NormalizeMode = Literal["strip", "main"]
Extractor = Literal["neardup", "resiliparse"]
# Bump when neardup's extraction rules change: the cached main text is keyed by it.
EXTRACTOR_VERSION = 1
Similarity = Literal["jaccard", "containment"]
Verify = Literal["exact", "estimate"]

# The classic boilerplate recipe: drop these elements, keep the stripped strings.
DEFAULT_STRIP_TAGS: tuple[str, ...] = (
    "nav", "footer", "script", "style", "form", "header", "aside",
    "noscript", "iframe", "svg", "template",
)

# The loosest thresholds the UI offers: pairs are computed once down to these, tighter ones are filters.
# Measured on a 20k-page make_crawl dump (main text, k = 5): pages of one store share a spec-table
# skeleton and shipping text, so 3.4M pairs have Jaccard 0.3-0.5 or containment 0.5-0.7, against
# 9.4k pairs above Jaccard 0.5 and 10k above containment 0.7. Storing the former does not scale
# (~100M pairs at 100k pages) and they are not duplicates, so the floors sit above them.
SIMHASH_MAX_BITS = 8
MINHASH_MIN_SIMILARITY = 0.5
CONTAINMENT_MIN_SIMILARITY = 0.7
# Containment also counts when the smaller page holds at least this many shingles, whatever the size ratio:
# a print or syndicated copy of an article whose own page carries a long comment thread is 3-45% of its size.
# Calibrated with bench/size_guard.py (main text, k = 5) on the sample (3,000 pages) and a 5,000-page
# `make_sample.py --profile realsize` crawl: of the pairs of different documents at containment >= 0.7 whose
# smaller side is below half the larger, the largest smaller side holds 38 shingles; of the true copies below
# half, the smallest holds 170 (a cut-short syndicated copy; the smallest print copy 336). The floor sits near
# the copies' end of that gap, since a false merge costs more than a missed teaser. Degenerate pages hold up
# to 203 (sample) and 440 (realsize) shingles when main extraction falls back to the stripped template, so the
# floor alone would not keep them out of a longer page: the degenerate rules set them aside before pairing.
MIN_CONTAINED_SHINGLES = 150


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Every setting of a run. Defaults were chosen by measurement on the sample crawl (see README)."""

    normalize: NormalizeMode = "main"
    # Main-content extractor (normalize: main): neardup's C version of resiliparse's rules, or resiliparse itself.
    extractor: Extractor = "neardup"
    strip_tags: tuple[str, ...] = DEFAULT_STRIP_TAGS
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
    # Degenerate below this many words of main text (never below the shingle size).
    min_words: int = 30
    simhash_max_bits: int = SIMHASH_MAX_BITS
    minhash_min_similarity: float = MINHASH_MIN_SIMILARITY
    containment_min_similarity: float = CONTAINMENT_MIN_SIMILARITY

    def __post_init__(self) -> None:
        if self.normalize not in ("strip", "main"):
            raise ConfigError(f"normalize must be 'strip' or 'main', not {self.normalize!r}")
        if self.extractor not in ("neardup", "resiliparse"):
            raise ConfigError(f"extractor must be 'neardup' or 'resiliparse', not {self.extractor!r}")
        if self.method not in ("simhash", "minhash"):
            raise ConfigError(f"method must be 'simhash' or 'minhash', not {self.method!r}")
        if self.similarity not in ("jaccard", "containment"):
            raise ConfigError(f"similarity must be 'jaccard' or 'containment', not {self.similarity!r}")
        if self.verify not in ("exact", "estimate"):
            raise ConfigError(f"verify must be 'exact' or 'estimate', not {self.verify!r}")
        if not isinstance(self.shingle_size, int) or not 1 <= self.shingle_size <= 20:
            raise ConfigError(f"shingle_size must be an integer from 1 to 20, not {self.shingle_size!r}")
        if not 16 <= self.num_perm <= 1024:
            raise ConfigError(f"num_perm must be from 16 to 1024, not {self.num_perm}")
        if not 0 <= self.simhash_max_bits <= 16:
            raise ConfigError(f"simhash_max_bits must be from 0 to 16, not {self.simhash_max_bits}")
        if not 0.05 <= self.minhash_min_similarity <= 1:
            raise ConfigError(f"minhash_min_similarity must be from 0.05 to 1, not {self.minhash_min_similarity}")
        if not 0.05 <= self.containment_min_similarity <= 1:
            raise ConfigError(
                f"containment_min_similarity must be from 0.05 to 1, not {self.containment_min_similarity}"
            )
        if self.method == "simhash":
            if self.threshold != int(self.threshold) or not 0 <= self.threshold <= self.simhash_max_bits:
                raise ConfigError(
                    f"simhash threshold is a whole number of bits from 0 to {self.simhash_max_bits}, "
                    f"not {self.threshold}"
                )
        elif not self.minhash_floor <= self.threshold <= 1:
            raise ConfigError(
                f"minhash threshold is a {self.similarity} from {self.minhash_floor} to 1, not {self.threshold}"
            )
        if not 0 < self.min_size_ratio <= 1:
            raise ConfigError(f"min_size_ratio must be in (0, 1], not {self.min_size_ratio}")
        if not isinstance(self.min_contained_shingles, int) or not 0 <= self.min_contained_shingles <= 1_000_000:
            raise ConfigError(
                f"min_contained_shingles must be a whole number from 0 to 1000000, not {self.min_contained_shingles!r}"
            )
        if self.min_words < self.shingle_size:
            raise ConfigError(
                f"min_words ({self.min_words}) must be at least the shingle size ({self.shingle_size})"
            )
        if not self.strip_tags or not all(isinstance(t, str) and t.isidentifier() for t in self.strip_tags):
            raise ConfigError(f"strip_tags must be a non-empty list of tag names, not {self.strip_tags!r}")
        if len(self.strip_tags) > MAX_STRIP_TAGS:
            raise ConfigError(f"strip_tags may name at most {MAX_STRIP_TAGS} tags, not {len(self.strip_tags)}")

    @property
    def minhash_floor(self) -> float:
        """The loosest MinHash threshold offered for the chosen similarity: pairs are stored down to it."""
        return self.minhash_min_similarity if self.similarity == "jaccard" else self.containment_min_similarity

    @property
    def normalization(self) -> str:
        """The normalization as reports name it: "strip", or "main (<extractor>)"."""
        return f"main ({self.extractor})" if self.normalize == "main" else self.normalize

    # --- keys under which derived data is cached in the store -------------------------------
    @property
    def norm_key(self) -> str:
        """Identifies the normalized text: mode and extractor, plus the tag list (`strip`, and `main`'s
        fallback for pages without main content). Plain "main" is resiliparse's, as databases before the
        neardup extractor stored it."""
        tags = ",".join(sorted(self.strip_tags))
        if self.normalize == "main":
            if self.extractor == "resiliparse":
                return "main" if self.strip_tags == DEFAULT_STRIP_TAGS else f"main:resiliparse:{tags}"
            return f"main:neardup-{EXTRACTOR_VERSION}:{tags}"
        return "strip:" + tags

    @property
    def sketch_key(self) -> str:
        """Identifies the shingle sketches of one word sequence (both SimHash and MinHash)."""
        return f"k={self.shingle_size}|perm={self.num_perm}|seed={self.seed}"

    @property
    def fingerprint_key(self) -> str:
        """Identifies fingerprints and candidate pairs: everything but the threshold."""
        parts = [self.norm_key, self.method, f"k={self.shingle_size}"]
        if self.method == "minhash":
            parts += [
                f"perm={self.num_perm}", f"seed={self.seed}", f"sim={self.similarity}",
                f"floor={self.minhash_floor}", f"ratio={self.min_size_ratio}",
                f"min_shingles={self.min_contained_shingles}", f"verify={self.verify}",
            ]
        else:
            parts.append(f"maxbits={self.simhash_max_bits}")
        return "|".join(parts)

    def replace(self, **changes: Any) -> Config:
        return dataclasses.replace(self, **changes)

    def with_method(self, method: Method) -> Config:
        """Switch method and move the threshold to that method's default."""
        return self.replace(method=method, threshold=default_threshold(method))

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["strip_tags"] = list(self.strip_tags)
        if self.method == "simhash":
            d["threshold"] = int(self.threshold)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Config:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known - {"neardup", "version", "db"}
        if unknown:
            raise ConfigError(f"unknown setting(s) in config: {', '.join(sorted(unknown))}")
        kwargs = {k: v for k, v in data.items() if k in known}
        if "strip_tags" in kwargs:
            kwargs["strip_tags"] = tuple(kwargs["strip_tags"])
        if "method" in kwargs and "threshold" not in kwargs:
            kwargs["threshold"] = default_threshold(kwargs["method"])
        try:
            return cls(**kwargs)
        except TypeError as exc:  # a value of the wrong type
            raise ConfigError(f"bad config value: {exc}") from exc


def default_threshold(method: Method) -> float:
    return 6 if method == "simhash" else Config.__dataclass_fields__["threshold"].default


def load_config(path: str | Path) -> Config:
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {p}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {p} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {p} must hold a mapping of settings")
    return Config.from_dict(data)


def dump_config(config: Config) -> str:
    header = (
        "# neardup run settings. Replay with: neardup report --config dupcheck.yaml\n"
        "# threshold: bits (hamming <= threshold) for simhash; similarity (>= threshold) for minhash.\n"
    )
    body = {"neardup": 1, **config.to_dict()}
    return header + yaml.safe_dump(body, sort_keys=False)


def save_config(config: Config, path: str | Path) -> None:
    Path(path).write_text(dump_config(config), encoding="utf-8")

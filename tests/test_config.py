"""Config: range checks name the bad value; dupcheck.yaml round-trips a run exactly."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml
from hostile_configs import HOSTILE_CONFIGS

from neardup.config import (
    _FIELD_KINDS,
    SHOWN_VALUE_CHARS,
    Config,
    default_threshold,
    dump_config,
    load_config,
    save_config,
)
from neardup.errors import ConfigError, NeardupError


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"normalize": "readability"}, "'readability'"),
        ({"method": "lsh"}, "'lsh'"),
        ({"similarity": "cosine"}, "'cosine'"),
        ({"shingle_size": 0}, "shingle_size must be an integer from 1 to 20, not 0"),
        ({"shingle_size": 21}, "not 21"),
        ({"shingle_size": 2.5}, "not 2.5"),
        ({"num_perm": 8}, "num_perm must be from 16 to 1024, not 8"),
        ({"num_perm": 4096}, "not 4096"),
        ({"simhash_max_bits": 17}, "not 17"),
        ({"minhash_min_similarity": 0.01}, "not 0.01"),
        ({"threshold": 1.5}, "not 1.5"),
        ({"threshold": 0.2}, "not 0.2"),  # below the loosest similarity offered (0.3)
        ({"method": "simhash", "threshold": 2.5}, "not 2.5"),
        ({"method": "simhash", "threshold": 9}, "not 9"),  # beyond simhash_max_bits (8)
        ({"method": "simhash", "threshold": -1}, "not -1"),
        ({"min_size_ratio": 0}, "min_size_ratio must be in (0, 1], not 0"),
        ({"min_size_ratio": 1.2}, "not 1.2"),
        ({"min_contained_shingles": -1}, "min_contained_shingles must be from 0 to 1000000, not -1"),
        ({"min_contained_shingles": 2.5}, "not 2.5"),
        ({"min_words": 3}, "min_words (3) must be at least the shingle size (5)"),
        ({"strip_tags": ()}, "strip_tags"),
        ({"strip_tags": ("nav", "div class")}, "div class"),
    ],
)
def test_range_checks_name_the_bad_value(changes: dict, needle: str) -> None:
    with pytest.raises(ConfigError) as exc:
        Config(**changes)
    assert needle in str(exc.value)
    assert isinstance(exc.value, NeardupError)


def test_valid_edges() -> None:
    Config(method="simhash", threshold=0)
    Config(method="simhash", threshold=8)
    Config(method="simhash", threshold=12, simhash_max_bits=16)
    Config(threshold=1.0)
    Config(similarity="jaccard", threshold=0.5)
    Config(similarity="containment", threshold=0.7)
    Config(shingle_size=20, min_words=20)
    Config(min_size_ratio=1)


def test_containment_floor_is_its_own() -> None:
    """Containment pairs are stored from 0.5 (cost), Jaccard pairs from 0.3: each threshold is checked
    against its own floor, and the floor is part of the fingerprint key."""
    with pytest.raises(ConfigError, match="containment from 0.7 to 1, not 0.6"):
        Config(similarity="containment", threshold=0.6)
    assert Config(similarity="jaccard").minhash_floor == 0.5
    assert Config(similarity="containment").minhash_floor == 0.7
    assert "floor=0.7" in Config().fingerprint_key
    assert Config(containment_min_similarity=0.6, threshold=0.8).fingerprint_key != Config().fingerprint_key


def test_config_is_frozen() -> None:
    c = Config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.threshold = 0.9  # type: ignore[misc]
    assert c.replace(threshold=0.9).threshold == 0.9
    assert c.threshold != 0.9


def test_with_method_moves_the_threshold() -> None:
    c = Config().with_method("simhash")
    assert (c.method, c.threshold) == ("simhash", default_threshold("simhash"))
    assert c.with_method("minhash").threshold == Config().threshold


def test_fingerprint_key_ignores_the_threshold_only() -> None:
    base = Config()
    assert base.replace(threshold=0.9).fingerprint_key == base.fingerprint_key
    for change in (
        {"shingle_size": 4},
        {"num_perm": 64},
        {"seed": 2},
        {"similarity": "jaccard"},
        {"normalize": "strip"},
        {"min_size_ratio": 0.3},
        {"min_contained_shingles": 0},
        {"extractor": "resiliparse"},
        {"strip_tags": ("nav",)},
        {"comments": True},
    ):
        assert base.replace(**change).fingerprint_key != base.fingerprint_key, change
    assert Config(normalize="strip", strip_tags=("nav", "footer")).norm_key == "strip:footer,nav"
    # main text falls back to stripped text on pages without main content: the tag list is part of its key
    assert Config(normalize="main", strip_tags=("nav",)).norm_key == "main:neardup-1-nocomments:nav"
    # main text with comment threads keeps the key that databases made before the comments switch
    assert Config(normalize="main", strip_tags=("nav",), comments=True).norm_key == "main:neardup-1:nav"
    # resiliparse's main text keeps the key that databases made before the neardup extractor gave it
    assert Config(normalize="main", extractor="resiliparse", comments=True).norm_key == "main"
    assert (
        Config(normalize="main", extractor="resiliparse", strip_tags=("nav",), comments=True).norm_key
        == "main:resiliparse:nav"
    )
    assert (
        Config(normalize="main", extractor="resiliparse", strip_tags=("nav",)).norm_key
        == "main:resiliparse-nocomments:nav"
    )
    # nor do comment threads
    assert Config(normalize="strip", comments=True).norm_key == Config(normalize="strip").norm_key
    # the extractor means nothing to tag stripping
    assert Config(normalize="strip", extractor="resiliparse").norm_key == Config(normalize="strip").norm_key


@pytest.mark.parametrize("value", [1, "yes", None])
def test_comments_is_true_or_false(value: object) -> None:
    with pytest.raises(ConfigError, match="comments must be true or false"):
        Config(comments=value)


def test_strip_tags_are_bounded() -> None:
    assert len(Config(strip_tags=tuple(f"t{i}" for i in range(64))).strip_tags) == 64
    with pytest.raises(ConfigError, match="at most 64"):
        Config(strip_tags=tuple(f"t{i}" for i in range(65)))


def test_extractor_is_checked_and_replayed(tmp_path) -> None:
    with pytest.raises(ConfigError, match="extractor must be"):
        Config(extractor="trafilatura")
    save_config(Config(extractor="resiliparse"), tmp_path / "dupcheck.yaml")
    assert load_config(tmp_path / "dupcheck.yaml").extractor == "resiliparse"


@pytest.mark.parametrize(
    "config",
    [
        Config(),
        Config(method="simhash", threshold=5, shingle_size=4),
        Config(
            normalize="strip",
            strip_tags=("nav", "footer", "aside"),
            similarity="jaccard",
            threshold=0.65,
            num_perm=256,
            seed=7,
            min_size_ratio=0.25,
            min_words=12,
            minhash_min_similarity=0.4,
            containment_min_similarity=0.6,
        ),
    ],
)
def test_yaml_round_trip(tmp_path: Path, config: Config) -> None:
    path = tmp_path / "dupcheck.yaml"
    save_config(config, path)
    assert load_config(path) == config
    assert load_config(path).fingerprint_key == config.fingerprint_key
    text = path.read_text()
    assert text.startswith("# neardup run settings")
    data = yaml.safe_load(text)
    assert data["neardup"] == 1
    assert data["strip_tags"] == list(config.strip_tags)


def test_simhash_threshold_is_written_as_whole_bits() -> None:
    data = yaml.safe_load(dump_config(Config(method="simhash", threshold=5.0)))
    assert data["threshold"] == 5
    assert isinstance(data["threshold"], int)


def test_partial_config_file_uses_defaults(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("method: simhash\nshingle_size: 4\n")
    c = load_config(path)
    assert (c.method, c.shingle_size, c.threshold) == ("simhash", 4, default_threshold("simhash"))
    assert c.num_perm == Config().num_perm


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("method: simhash\nthreshold: 99\n", "not 99"),
        ("treshold: 0.5\n", "unknown setting(s) in config: treshold"),
        ("- just\n- a list\n", "must hold a mapping"),
        ("method: [unclosed\n", "not valid YAML"),
        ("shingle_size: five\n", "five"),
        ("num_perm: many\n", "num_perm must be a whole number, not 'many'"),
    ],
)
def test_bad_config_files(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert needle in str(exc.value)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")


def test_representative_rule_setting(tmp_path: Path) -> None:
    path = tmp_path / "dupcheck.yaml"
    path.write_text("representative: [canonical, newest, shortest]\n")
    config = load_config(path)
    assert config.representative == ("canonical", "newest", "shortest")
    assert Config().representative == ("canonical", "earliest", "shortest")
    path.write_text(dump_config(config))
    assert load_config(path) == config
    path.write_text("representative: newest\n")  # one criterion, as a plain string
    assert load_config(path).representative == ("newest",)
    for bad in ("[earliest, newest]", "[canonical, canonical]", "[]", "[latest]"):
        path.write_text(f"representative: {bad}\n")
        with pytest.raises(ConfigError, match="representative must be a list of distinct criteria"):
            load_config(path)


@pytest.mark.parametrize(("content", "needle"), HOSTILE_CONFIGS, ids=range(len(HOSTILE_CONFIGS)))
def test_hostile_config_files_are_one_short_error(tmp_path: Path, content: bytes, needle: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    message = str(exc.value)
    assert needle in message
    assert "\n" not in message
    assert len(message) < len(str(path)) + 300


def test_a_directory_is_not_a_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path)


def test_types_are_checked_strictly() -> None:
    for changes in (
        {"shingle_size": True},
        {"seed": False},
        {"threshold": True},
        {"num_perm": "128"},
        {"strip_tags": "nav"},
        {"min_size_ratio": None},
    ):
        with pytest.raises(ConfigError):
            Config(**changes)
    assert set(_FIELD_KINDS) == {f.name for f in dataclasses.fields(Config)}


def test_numpy_numbers_are_accepted_as_python_numbers() -> None:
    np = pytest.importorskip("numpy")
    c = Config(shingle_size=np.int64(4), threshold=np.float64(0.9))
    assert type(c.shingle_size) is int and type(c.threshold) is float
    assert yaml.safe_load(dump_config(c))["shingle_size"] == 4


def test_long_values_are_cut_in_messages() -> None:
    with pytest.raises(ConfigError) as exc:
        Config(normalize="x" * 10_000)
    assert len(str(exc.value)) < SHOWN_VALUE_CHARS + 100
    assert str(exc.value).endswith("...")


def test_with_shingle_size_keeps_min_words_at_least_the_shingle_size() -> None:
    """The one place of the rule min_words >= shingle_size: the CLI's --shingle-size, the sidebar's slider
    and the link's shingle= all go through it."""
    assert Config().with_shingle_size(10) == Config(shingle_size=10)  # 30 words >= 10: kept
    short = Config(shingle_size=3, min_words=3)
    raised = short.with_shingle_size(8)
    assert (raised.shingle_size, raised.min_words) == (8, 8)
    assert raised.with_shingle_size(4).min_words == 8  # this setting's floor, 8, is kept
    back = raised.with_shingle_size(4, min_words=short.min_words)  # the floor the user chose comes back
    assert (back.shingle_size, back.min_words) == (4, 4)
    with pytest.raises(ConfigError, match="shingle_size must be an integer from 1 to 20, not 0"):
        Config().with_shingle_size(0)


def test_the_readme_config_block_is_the_default_config_with_every_key(tmp_path):
    """The README's dupcheck.yaml block loads as the defaults and names every key `neardup export` writes, in
    its order: a setting added, renamed or given another default fails here until the README says so."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The config file (`dupcheck.yaml`)", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "dupcheck.yaml").write_text(block, encoding="utf-8")
    assert load_config(tmp_path / "dupcheck.yaml") == Config()
    written = yaml.safe_load(dump_config(Config()))
    assert list(yaml.safe_load(block)) == list(written)

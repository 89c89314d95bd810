"""The setting's URL form (`neardup.ui.state`): a link names a setting, or names what is wrong with it."""

from __future__ import annotations

import pytest

from neardup.config import Config
from neardup.errors import ConfigError
from neardup.ui.state import setting_from_params, setting_params


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"method": "simhash", "threshold": "inf"}, "inf"),
        ({"method": "simhash", "threshold": "1e400"}, "inf"),
        ({"method": "simhash", "threshold": "-0.5"}, "-0.5"),
        ({"method": "simhash", "threshold": "8.99"}, "8.99"),
        ({"method": "minhash", "threshold": "-0.5"}, "-0.5"),
        ({"threshold": "nan"}, "nan"),
    ],
)
def test_a_threshold_out_of_range_is_named_not_clamped(params: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match="threshold") as info:
        setting_from_params(Config(), params)
    assert named in str(info.value)


def test_a_setting_round_trips_through_its_link() -> None:
    config = Config().replace(method="simhash", threshold=4)
    assert setting_from_params(Config(), setting_params(config)) == config

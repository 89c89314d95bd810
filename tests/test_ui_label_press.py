"""A label key's press time as the browser sends it (neardup.ui.label_press): checked, and held to the
server's clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from neardup.ui.label_press import PRESS_MAX_AGE, KeyPress, key_press

RECEIVED = datetime(2026, 12, 6, 10, 0, 5)


def ms(at: datetime) -> float:
    return at.replace(tzinfo=UTC).timestamp() * 1000


def test_a_press_gives_its_label_at_its_time_to_the_millisecond() -> None:
    pressed = RECEIVED - timedelta(seconds=2, milliseconds=345)
    assert key_press({"key": "n", "pressed_at": ms(pressed)}, received=RECEIVED) == KeyPress("not", pressed)
    assert key_press({"key": "d", "pressed_at": int(ms(RECEIVED))}, received=RECEIVED) == KeyPress(
        "duplicate", RECEIVED
    )


def test_a_press_time_is_held_to_the_servers_clock() -> None:
    ahead = key_press({"key": "u", "pressed_at": ms(RECEIVED + timedelta(minutes=3))}, received=RECEIVED)
    behind = key_press({"key": "u", "pressed_at": ms(RECEIVED - timedelta(hours=2))}, received=RECEIVED)
    assert ahead == KeyPress("unsure", RECEIVED)  # never after the receive time
    assert behind == KeyPress("unsure", RECEIVED - PRESS_MAX_AGE)
    for far in (1e300, -1e300):  # out of the datetime range: held as well
        held = key_press({"key": "d", "pressed_at": far}, received=RECEIVED)
        assert held is not None and RECEIVED - PRESS_MAX_AGE <= held.pressed_at <= RECEIVED


def test_anything_else_the_browser_sends_is_no_press() -> None:
    for value in (
        None,
        "d",
        ["d", 1],
        {"key": "s", "pressed_at": ms(RECEIVED)},  # skip is no label key
        {"key": "D", "pressed_at": ms(RECEIVED)},
        {"key": ["d"], "pressed_at": ms(RECEIVED)},
        {"key": "d"},
        {"key": "d", "pressed_at": "1765015205000"},
        {"key": "d", "pressed_at": True},
        {"key": "d", "pressed_at": float("nan")},
        {"key": "d", "pressed_at": float("inf")},
    ):
        assert key_press(value, received=RECEIVED) is None, value

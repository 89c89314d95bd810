"""A label key's press time, stamped in the browser and carried to the server with the key.

The page script (`keys.KEYBOARD_SCRIPT`) stamps each label key (d, n, u) with `Date.now()` at its keydown
and sends the key with its stamp through a small component (`mount_label_keys`), instead of the label
button's shortcut; the label is given at the press time (`AuditSession.label(pressed_at=...)`). The store
keeps the label of a pair and labeler given last (`Store.write_labels`): with press times, that is the key
pressed later, whichever tab's message reaches the server first (a busy server or network can reorder two
tabs' messages by tens of milliseconds). A click on a label button, or a key sent before the component's
script has loaded, carries no stamp and is given at the server's receive time.

What a press time means: the clock of the browser's machine. Two tabs (or windows) of one browser read one
clock, so their stamps order their presses exactly (to the millisecond; within one millisecond the label
written first stays). Tabs on two machines compare across the machines' clock skew: a label pressed on a
machine whose clock is behind loses to one pressed up to that skew earlier elsewhere. A stamp is therefore
held to the server's clock: never after the receive time (a clock ahead cannot make a label outlive the
labels given after it, nor store a time in the future), and never more than `PRESS_MAX_AGE` before it (a
clock far behind costs at most that much). One labeler is one person: two presses of one pair on two
machines are seconds apart, while clocks kept by NTP differ by milliseconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import streamlit as st

from .audit_page import LABEL_KEYS
from .state import W_LABEL_KEYS

# The label keys and the labels they give (the label bar's buttons; keys.KEYBOARD_SCRIPT sends these).
LABEL_OF_KEY = {key: label for label, key in LABEL_KEYS}
# How long before its receive time a press may have been: a key waits in the browser for the page's run
# (keys.EARLY_KEY_WAIT_MS, keys.KEY_RUN_WAIT_MS for each key before it).
PRESS_MAX_AGE = timedelta(seconds=60)
PRESS_EVENT = "press"

# The component: the page script calls `window.neardupSendLabelKey(key, pressedAt)` to send a label key
# with its press time (a trigger value that reruns the labeling fragment, as the button would).
LABEL_KEYS_JS = (
    """
export default function(component) {
    const send = (key, pressedAt) => component.setTriggerValue('"""
    + PRESS_EVENT
    + """', {key, pressed_at: pressedAt});
    window.neardupSendLabelKey = send;
    return () => { if (window.neardupSendLabelKey === send) delete window.neardupSendLabelKey; };
}
"""
)
_label_keys = st.components.v2.component("neardup_label_keys", js=LABEL_KEYS_JS)


@dataclass(frozen=True, slots=True)
class KeyPress:
    """A label key as the browser sent it: the label it gives and when it was pressed (naive UTC, as the
    store keeps times)."""

    label: str
    pressed_at: datetime


def key_press(value: object, *, received: datetime) -> KeyPress | None:
    """The press the component sent (`{"key": "d", "pressed_at": ms since the epoch}`), its time held within
    [`received` - PRESS_MAX_AGE, `received`]; None for anything else (the browser's values are not
    trusted)."""
    if not isinstance(value, Mapping):
        return None
    key, ms = value.get("key"), value.get("pressed_at")
    label = LABEL_OF_KEY.get(key) if isinstance(key, str) else None
    if label is None or isinstance(ms, bool) or not isinstance(ms, (int, float)) or not math.isfinite(ms):
        return None
    earliest = received - PRESS_MAX_AGE
    try:
        pressed = datetime.fromtimestamp(ms / 1000, UTC).replace(tzinfo=None)
    except (OverflowError, OSError, ValueError):
        pressed = earliest if ms < 0 else received
    return KeyPress(label, min(max(pressed, earliest), received))


def mount_label_keys(on_press: Callable[[str, datetime], None]) -> None:
    """Draw the component (it takes no room: draw it in a container without gaps) that receives label keys with their press times; `on_press(label,
    pressed_at)` is called in the run the key starts, before the fragment is drawn."""

    def pressed() -> None:
        press = key_press(
            st.session_state[W_LABEL_KEYS].get(PRESS_EVENT), received=datetime.now(UTC).replace(tzinfo=None)
        )
        if press is not None:
            on_press(press.label, press.pressed_at)

    _label_keys(key=W_LABEL_KEYS, on_press_change=pressed)

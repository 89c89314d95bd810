"""Word-level side-by-side diff of two texts, with long equal runs folded.

The output is data (segments), not markup: the app renders it with its own escaping.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

Op = Literal["equal", "delete", "insert", "replace", "fold"]


@dataclass(frozen=True, slots=True)
class Segment:
    op: Op
    left: str  # words of the left text ("" for an insert)
    right: str  # words of the right text ("" for a delete)
    n_words: int  # words folded away (for "fold"), else words in the longer side


_PUNCT = "".join(chr(c) for c in range(0x21, 0x7F) if not chr(c).isalnum()) + "«»„“”‘’‚–—…·"


def _word_key(word: str) -> str:
    """What two words must share to count as equal: punctuation around them ("Netz" = "Netz:") is no change."""
    return word.strip(_PUNCT) or word


def word_diff(left: str, right: str, *, context: int = 12, fold_min: int = 40) -> list[Segment]:
    """Diff on whitespace-separated words. Words equal but for the punctuation around them are equal (each
    side keeps its own spelling). Equal runs longer than `fold_min` keep `context` words on each side and
    fold the middle into one "fold" segment saying how many words it hides."""
    a, b = left.split(), right.split()
    matcher = SequenceMatcher(a=[_word_key(w) for w in a], b=[_word_key(w) for w in b], autojunk=False)
    out: list[Segment] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            run_a, run_b = a[i1:i2], b[j1:j2]
            if len(run_a) > fold_min:
                n_head = context if out else 0
                n_tail = context if i2 < len(a) or j2 < len(b) else 0
                hidden = len(run_a) - n_head - n_tail
                if n_head:
                    out.append(Segment("equal", " ".join(run_a[:n_head]), " ".join(run_b[:n_head]), n_head))
                out.append(Segment("fold", "", "", hidden))
                if n_tail:
                    out.append(Segment("equal", " ".join(run_a[-n_tail:]), " ".join(run_b[-n_tail:]), n_tail))
            else:
                out.append(Segment("equal", " ".join(run_a), " ".join(run_b), len(run_a)))
        else:
            out.append(Segment(op, " ".join(a[i1:i2]), " ".join(b[j1:j2]), max(i2 - i1, j2 - j1)))
    return out


def diff_stats(segments: list[Segment]) -> dict[str, int]:
    changed = sum(s.n_words for s in segments if s.op in ("delete", "insert", "replace"))
    same = sum(s.n_words for s in segments if s.op in ("equal", "fold"))
    return {"changed_words": changed, "equal_words": same}

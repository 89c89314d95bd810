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
    left: str    # words of the left text ("" for an insert)
    right: str   # words of the right text ("" for a delete)
    n_words: int  # words folded away (for "fold"), else words in the longer side


def word_diff(left: str, right: str, *, context: int = 12, fold_min: int = 40) -> list[Segment]:
    """Diff on whitespace-separated words. Equal runs longer than `fold_min` keep `context` words on
    each side and fold the middle into one "fold" segment saying how many words it hides."""
    a, b = left.split(), right.split()
    matcher = SequenceMatcher(a=a, b=b, autojunk=False)
    out: list[Segment] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            run = a[i1:i2]
            if len(run) > fold_min:
                head = run[:context] if out else []
                tail = run[-context:] if i2 < len(a) or j2 < len(b) else []
                hidden = len(run) - len(head) - len(tail)
                if head:
                    out.append(Segment("equal", " ".join(head), " ".join(head), len(head)))
                out.append(Segment("fold", "", "", hidden))
                if tail:
                    out.append(Segment("equal", " ".join(tail), " ".join(tail), len(tail)))
            else:
                text = " ".join(run)
                out.append(Segment("equal", text, text, len(run)))
        else:
            out.append(Segment(op, " ".join(a[i1:i2]), " ".join(b[j1:j2]), max(i2 - i1, j2 - j1)))  # type: ignore[arg-type]
    return out


def diff_stats(segments: list[Segment]) -> dict[str, int]:
    changed = sum(s.n_words for s in segments if s.op in ("delete", "insert", "replace"))
    same = sum(s.n_words for s in segments if s.op in ("equal", "fold"))
    return {"changed_words": changed, "equal_words": same}

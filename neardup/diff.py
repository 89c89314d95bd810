"""Word-level side-by-side diff of two texts, with long equal runs folded.

The output is data (segments), not markup: the app renders it with its own escaping. The alignment is
difflib's (`SequenceMatcher` without junk heuristics); the compiled kernel `_kernels.word_blocks` computes the
same matching blocks, about 30x cheaper, where it is built (tests compare the two).
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

try:
    from . import _kernels as kernels
except ImportError:  # installed without a C compiler: difflib, the same segments, slower
    kernels = None  # type: ignore[assignment]

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


def _opcodes(blocks: list[tuple[int, int, int]]) -> list[tuple[Op, int, int, int, int]]:
    """`SequenceMatcher.get_opcodes` from its matching blocks (the sentinel last)."""
    out: list[tuple[Op, int, int, int, int]] = []
    i = j = 0
    for ai, bj, size in blocks:
        if i < ai and j < bj:
            out.append(("replace", i, ai, j, bj))
        elif i < ai:
            out.append(("delete", i, ai, j, bj))
        elif j < bj:
            out.append(("insert", i, ai, j, bj))
        i, j = ai + size, bj + size
        if size:
            out.append(("equal", ai, i, bj, j))
    return out


def word_blocks(left: str, right: str, *, compiled: bool = True) -> list[tuple[int, int, int]]:
    """The matching blocks (i, j, k) of the two texts' words, compared by `_word_key`: difflib's
    `get_matching_blocks` without junk heuristics, the (len(a), len(b), 0) sentinel last. `compiled=False`
    forces difflib."""
    if compiled and kernels is not None:
        return kernels.word_blocks(left, right, _PUNCT)
    a = [_word_key(w) for w in left.split()]
    b = [_word_key(w) for w in right.split()]
    return [(m.a, m.b, m.size) for m in SequenceMatcher(a=a, b=b, autojunk=False).get_matching_blocks()]


def word_diff(
    left: str, right: str, *, context: int = 12, fold_min: int = 40, compiled: bool = True
) -> list[Segment]:
    """Diff on whitespace-separated words. Words equal but for the punctuation around them are equal (each
    side keeps its own spelling). Equal runs longer than `fold_min` keep `context` words on each side and
    fold the middle into one "fold" segment saying how many words it hides. `compiled=False` aligns with
    difflib rather than the kernel (the same segments)."""
    a, b = left.split(), right.split()
    out: list[Segment] = []
    for op, i1, i2, j1, j2 in _opcodes(word_blocks(left, right, compiled=compiled)):
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


def word_changes(left: str, right: str, *, compiled: bool = True) -> list[Segment]:
    """`word_diff`'s segments as a reader of its changes needs them (a copy's category): the changed ones with
    their words, and each equal run one "equal" segment of its word count, without its words and unfolded.
    Cheaper than `word_diff` on long texts: only the changed words are joined."""
    ops = _opcodes(word_blocks(left, right, compiled=compiled))
    if all(op == "equal" for op, *_ in ops):
        return [Segment("equal", "", "", i2 - i1) for _, i1, i2, _, _ in ops]
    a, b = left.split(), right.split()
    return [
        Segment("equal", "", "", i2 - i1)
        if op == "equal"
        else Segment(op, " ".join(a[i1:i2]), " ".join(b[j1:j2]), max(i2 - i1, j2 - j1))
        for op, i1, i2, j1, j2 in ops
    ]


def diff_stats(segments: list[Segment]) -> dict[str, int]:
    changed = sum(s.n_words for s in segments if s.op in ("delete", "insert", "replace"))
    same = sum(s.n_words for s in segments if s.op in ("equal", "fold"))
    return {"changed_words": changed, "equal_words": same}

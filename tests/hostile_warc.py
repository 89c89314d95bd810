"""Hostile WARC records for property tests: one record's bytes, well formed or broken in one of the ways real
and hostile files are (`hostile_record`), for the compiled loops' tests and the revisit tests."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

HTML = b"<html><head><title>t</title></head><body><p>words of a page</p></body></html>"
_DIGESTS = ["sha1:AAAA", "sha1:BBBB", "sha1:CCCC"]
_IDS = ["<urn:uuid:1>", "<urn:uuid:2>", "<urn:uuid:3>"]


def _lower_names(lines: list[bytes]) -> list[bytes]:
    return [ln.lower() if ln.startswith((b"Content-", b"WARC-Type")) else ln for ln in lines]


# A header's flaws (a record's header lines -> them flawed); "lf only" is in the line ends
_FLAWS: dict[str | None, Any] = {
    "lower name": _lower_names,
    "twice": lambda ls: [*ls, ls[0]],
    "folded": lambda ls: [ls[0], b"  continued", *ls[1:]],
    "no colon": lambda ls: [b"no colon here", *ls],
    "non-ascii": lambda ls: [*ls, "WARC-Warcinfo-ID: <urn:\u00fc>".encode()],
    "no length": lambda ls: [ln for ln in ls if not ln.startswith(b"Content-Length")],
    "tab": lambda ls: [*ls, b"X-Note:\tvalue\t"],
    "empty": lambda ls: [*ls, b"WARC-Truncated:"],
}


@st.composite
def hostile_record(draw: st.DrawFn) -> bytes:
    """One WARC record's bytes, well formed or broken in one of the ways real and hostile files are."""
    rtype = draw(
        st.sampled_from(["response", "resource", "revisit", "request", "metadata", "warcinfo", "conversion"])
    )
    rtype = draw(st.sampled_from([rtype, rtype, rtype.capitalize(), "bogus"]))
    if rtype in ("response", "revisit"):
        http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
        block = http + draw(st.sampled_from([HTML, b"", b"\xff\xfe bytes", HTML * 3]))
        ctype = "application/http; msgtype=response"
    else:
        block = draw(st.sampled_from([HTML, b"plain words", b""]))
        ctype = draw(st.sampled_from(["text/html", "text/plain", "application/warc-fields"]))
    uri = draw(
        st.sampled_from(
            ["http://a.example/x", "<http://a.example/y>", " http://b.example/ ", "", "<>", "http://c/\u00e9"]
        )
    )
    fields: list[tuple[str, str]] = [("WARC-Type", rtype), ("WARC-Target-URI", uri)]
    fields += [("WARC-Date", "2026-01-01T00:00:00Z"), ("WARC-Record-ID", draw(st.sampled_from(_IDS)))]
    fields += [("Content-Type", ctype), ("WARC-Payload-Digest", draw(st.sampled_from(_DIGESTS)))]
    if rtype == "revisit":
        fields += [
            ("WARC-Refers-To", draw(st.sampled_from(_IDS))),
            ("WARC-Profile", "identical-payload-digest"),
        ]
        fields += [("WARC-Refers-To-Target-URI", "<http://a.example/x>")]
    if draw(st.booleans()):
        fields.append(("WARC-Truncated", "length"))
    length = str(len(block) + draw(st.sampled_from([0, 0, 0, 0, -1, 1, 7])))
    fields.append(
        ("Content-Length", draw(st.sampled_from([length, length, " " + length, "x1", "+" + length])))
    )
    draw(st.randoms()).shuffle(fields)
    flaw = draw(
        st.sampled_from(
            [None] * 6
            + [
                "lower name",
                "twice",
                "folded",
                "no colon",
                "lf only",
                "non-ascii",
                "no length",
                "tab",
                "empty",
            ]
        )
    )
    lines = _FLAWS.get(flaw, lambda ls: ls)([f"{k}: {v}".encode() for k, v in fields])
    eol = b"\n" if flaw == "lf only" else b"\r\n"
    version = draw(st.sampled_from([b"WARC/1.0", b"WARC/1.1", b"WARC/0.17", b"WARC/2.0"]))
    tail = draw(st.sampled_from([b"\r\n\r\n"] * 4 + [b"\r\n", b"", b"\r\n\r\n\r\n"]))
    return version + eol + eol.join(lines) + eol + eol + block + tail

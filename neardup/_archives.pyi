# Types of the compiled web archive readers (neardup/_archives.c and its parts; their docstrings say what they do).
from collections.abc import Callable
from typing import Any

class MemberReader:
    def __init__(self) -> None: ...
    def read(
        self,
        buffer: Any,
        start: int,
        max_records: int,
        max_bytes: int,
        make: Callable[..., Any],
        warc_file: str,
        offset_in: str,
        /,
    ) -> tuple[list[Any], int, int, int]: ...
    def feed(self, data: Any, base: int, /) -> None: ...
    def read_stream(
        self,
        final: bool,
        max_records: int,
        max_bytes: int,
        make: Callable[..., Any],
        warc_file: str,
        offset_in: str,
        /,
    ) -> tuple[list[Any], int, int, int]: ...

def utf8_html(block: Any, limit: int, /) -> tuple[int, str, str] | None: ...

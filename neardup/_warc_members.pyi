# Types of the compiled WARC.gz member reader (neardup/_warc_members.c; its docstrings say what it does).
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

# Types of the compiled HTML extractor over lexbor (neardup/_html.c; each function's docstring says what it does).

PATTERNS: object
MAX_STRIP_TAGS: int
MAX_OPEN_ELEMENTS: int
MAX_ATTRIBUTES: int
MAX_ATTRIBUTE_SQUARES: int
MAX_RULE_VALUE_BYTES: int
RULE_EVAL_BYTES: int
MAX_RULE_BYTES: int

class PageTooComplex(Exception): ...

def extract(
    html: str | bytes,
    main: bool,
    strip_tags: tuple[str, ...] | list[str],
    min_words: int,
    max_depth_sum: int = 0,
    max_elements: int = 0,
    max_names: int = 0,
    comments: bool = True,
    /,
) -> tuple[str, str, int]: ...
def stripped_parts(
    html: str | bytes, strip_tags: tuple[str, ...] | list[str], /
) -> list[tuple[str, str]]: ...
def collapse(s: str, /) -> str: ...
def utf8_md5(s: str, /) -> tuple[str, int]: ...
def rule_flags(cls: str, id: str, style: str, /) -> int: ...

"""A bot's debug text for one decision (`Decision.debug`), made fit to keep and show to its owner.

A bot may explain a decision in a short text of its own; the gateway cleans it as it reads the answer and
the referee keeps it in `MatchRecord.debug` by step. It is its owner's alone: never part of the replay, its
frames or its hashes, and never shown to anyone else (see `MatchRecord.to_json`).

`clean_debug` keeps text and line breaks: control characters (C0 but tab and newline, DEL, C1), Unicode
direction overrides and lone surrogates go, and a NUL too (PostgreSQL refuses it in text); a text over
MAX_DEBUG_BYTES in UTF-8 is cut at a character boundary, with a marker saying how long it was, within the
limit. It never fails, and cleaning a cleaned text changes nothing.

Layer: pure (standard library only): no I/O, no logging of the text.
"""

from __future__ import annotations

import re

MAX_DEBUG_BYTES = 2048
_DROPPED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _marker(size: int) -> str:
    return f" [... cut: {size} bytes, over the {MAX_DEBUG_BYTES}-byte limit]"


def clean_debug(text: str) -> str:
    """`text` without control characters, cut to MAX_DEBUG_BYTES of UTF-8 (marker included)."""
    if not text:
        return ""
    text = _DROPPED.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    encoded = text.encode("utf-8")
    if len(encoded) <= MAX_DEBUG_BYTES:
        return text
    marker = _marker(len(encoded))
    room = MAX_DEBUG_BYTES - len(marker.encode("utf-8"))
    return encoded[:room].decode("utf-8", "ignore") + marker

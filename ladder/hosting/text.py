"""What a hosted bot writes, made fit to keep and show: the one function every place that stores a bot's log
text (the bot host's ring, the ladder's status row) runs it through.

A bot's output is arbitrary bytes. PostgreSQL refuses a NUL in text and any database or JSON encoder refuses
invalid UTF-8 or a lone surrogate; each becomes U+FFFD (the replacement character), so one bot's output can
never make the report that carries it, or the host's loop, fail.

Layer: pure (standard library only): no Django, no I/O.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def clean_text(text: str | bytes) -> str:
    """`text` with NUL, invalid UTF-8 and lone surrogates replaced by U+FFFD; everything else kept."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return _UNSTORABLE.sub(REPLACEMENT, text)

"""Replay writes: the live progress of a match being played. Layer: services (keyword-only writes).

The stored replay itself is written with the match's result (`matches.services.match_record_result`), which
also removes the live progress.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ladder.matches.models import Match, MatchStatus
from ladder.replays.models import LiveProgress


def live_progress_publish(
    *,
    match_id: int,
    actions: Sequence[tuple[int, str]],
    clocks: Mapping[int, Sequence[float | None]] | None = None,
) -> bool:
    """Store the actions played so far in a RUNNING match, and the clocks of those decisions (the record's
    `clocks`: per step, the seconds charged and the bank left); False (nothing stored) when it is not
    running."""
    if not Match.objects.filter(pk=match_id, status=MatchStatus.RUNNING).exists():
        return False
    LiveProgress.objects.update_or_create(
        match_id=match_id,
        defaults={
            "steps": len(actions),
            "actions": [[seat, action] for seat, action in actions],
            "clocks": {
                str(step): list(clock)
                for step, clock in sorted((clocks or {}).items())
                if step < len(actions)
            },
        },
    )
    return True

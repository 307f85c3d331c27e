"""The game registry loads once and whole: threads that ask for a game while it loads (a bot deciding
several matches at once, in a fresh process) all see every game."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import threading, time
from engine_service.games.registry import get_game
found, failed = [], []
def ask(game_id):
    try:
        found.append(get_game(game_id).game_id)
    except Exception as exc:
        failed.append(repr(exc))
games = ["mp2-v1", "dragonda-v1", "voyages-v1", "expedition-v1"] * 4
threads = [threading.Thread(target=ask, args=(g,)) for g in games]
for t in threads:  # one after another, while the first is still loading the games
    t.start()
    time.sleep(0.005)
for t in threads: t.join()
print(len(found), failed)
"""


def test_threads_asking_during_the_first_load_all_see_every_game() -> None:
    for _ in range(3):  # a fresh interpreter each time: the first load is the race
        out = subprocess.run(
            [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
        ).stdout.strip()
        assert out == "16 []", out

"""The demo's hosted bots (`make demo`): `demo-hosted-python` and `demo-hosted-node`, and next to them
`demo-hostile` (the hostile example: it spins, forks and allocates in its sandbox, and plays), registered
for the demo owner and given the hosted example archives (`bot_host.examples`) through the upload service,
once; the bot host started by the demo then runs them in their sandboxes and they play rated matches.

Layer: demo set-up over `ladder.bots` and `ladder.hosting` services (Django set up by the caller).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence

from django.contrib.auth.models import User

from bot_host.examples import VERSION, example_archive, hostile_archive
from ladder.bots.models import Bot
from ladder.bots.services import bot_create
from ladder.hosting.models import HostedVersion
from ladder.hosting.services import hosted_version_upload

NAMES = {"python": "demo-hosted-python", "node": "demo-hosted-node"}
HOSTILE = "demo-hostile"
DESCRIPTIONS = {
    "python": "The hosted python example (a sandbox).",
    "node": "The hosted node example (a sandbox).",
    "hostile": "A hostile hosted bot: it spins, forks and allocates to its limits in its sandbox, and plays.",
}


def hosting_possible() -> str:
    """Why this machine cannot run the bot host (the demo then skips it), or '' when it can. The machine
    check (`python -m bot_host --check`) runs in a process of its own: finding the control groups may move
    the process that looks into a group of its own."""
    if os.geteuid() != 0:
        return "the bot host runs as root (it drops each bot to its own uid)"
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (make install)"
    checked = subprocess.run(
        [sys.executable, "-m", "bot_host", "--check"], capture_output=True, text=True, timeout=60
    )
    if checked.returncode != 0:
        return (
            checked.stderr.strip().removeprefix("bot_host: ")
            or f"the machine check exited {checked.returncode}"
        )
    return ""


def demo_hosted_bots(
    *, owner: User, games: Sequence[str], runtimes: Sequence[str], hostile: bool = True
) -> list[str]:
    """The hosted demo bots for `runtimes` (and the hostile one), each with its example uploaded; names."""
    wanted = [(NAMES[runtime], runtime) for runtime in runtimes]
    if hostile:
        wanted.append((HOSTILE, "hostile"))
    for name, example in wanted:
        bot = Bot.objects.filter(name=name).first()
        if bot is None:
            bot, _token = bot_create(
                owner=owner, name=name, games=list(games), description=DESCRIPTIONS[example]
            )  # the host makes its own token
        if not HostedVersion.objects.filter(bot=bot, name=VERSION).exists():
            data = hostile_archive() if example == "hostile" else example_archive(example)
            hosted_version_upload(bot_id=bot.pk, user=owner, data=data)
    return [name for name, _example in wanted]

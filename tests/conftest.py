"""Where a test runs under pytest-xdist (`pytest -n N`): suite-wide scheduling, nothing else.

A test module that uses `pytest.mark.xdist_group(...)` (in its `pytestmark`) shares an expensive module-scoped fixture
(a cluster, a stack of processes, a deployment, a set of seeded games): all its tests go to one xdist
process, so the fixture is set up once instead of once in each process that happens to receive one of its
tests (and two copies do not load the machine at once). This is xdist's own `--dist loadgroup` contract;
xdist 3.8 cannot honour it under pytest 9 (it renames `item._nodeid`, which pytest 9 no longer reads), so the
scheduler below reads the mark from the module's source instead, for plain `-n N` runs. Grouped modules are
sent first (the largest first), then the tests of the modules in SLOW_FIRST (each a minute or so on its
own), then every other test one by one: a long test started last would leave the other processes idle.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling


class ModuleGroupScheduling(LoadScopeScheduling):
    """Load scheduling with every test as its own unit, except that a marked module is one unit."""

    def __init__(self, config: pytest.Config, log: object = None) -> None:
        super().__init__(config, log)  # type: ignore[arg-type]
        self.root = Path(config.rootpath)

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid, self.root)


def unit_of(nodeid: str, root: Path) -> str:
    """The unit of work a test belongs to: its module's path if the module uses xdist_group, else itself."""
    path = nodeid.split("::", 1)[0]
    return path if _grouped(root / path) else nodeid


@cache
def _grouped(path: Path) -> bool:
    try:
        source = path.read_text()
    except OSError:
        return False
    return "pytest.mark.xdist_group(" in source


# Modules whose single tests run longest (whole demos, deployments, Celery fleets through restarts).
SLOW_FIRST = (
    "tests/infra/test_demo.py",
    "tests/infra/test_deployment_start.py",
    "tests/workers/test_redis_restart.py",
    "tests/workers/test_concurrent_runner.py",
    "tests/workers/test_database_outage.py",
    "tests/ladder/web/test_replay_viewer.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """SLOW_FIRST's tests first, in their order; the others keep theirs (xdist's scheduler then puts the
    grouped modules before both, a stable sort by size)."""
    rank = {path: i for i, path in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> LoadScopeScheduling | None:
    if config.getvalue("dist") != "load":
        return None  # an explicit --dist other than the default keeps xdist's own scheduler
    return ModuleGroupScheduling(config, log)

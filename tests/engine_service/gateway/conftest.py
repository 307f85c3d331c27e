from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_service.gateway.harness import Stack, start_stack


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    s = start_stack(Path(tmp_path_factory.mktemp("gateway")), metrics=True)
    yield s
    s.gateway.stop()

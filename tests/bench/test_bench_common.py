"""Every benchmark's results say the load the machine was under: the 1, 5 and 15-minute load averages when
the benchmark began (`mark_start`, which `python -m bench` calls before each module) and when it wrote."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from bench import common


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch, tmp_path) -> Iterator[list[tuple[float, float, float]]]:
    """The load averages the machine reports next, in order; results are written under `tmp_path`."""
    queue = [(3.0, 2.5, 1.25), (9.126, 6.0, 2.0)]
    monkeypatch.setattr(common, "RESULTS", tmp_path)
    monkeypatch.setattr(common.os, "getloadavg", lambda: queue.pop(0))
    yield queue
    assert queue == []


def test_results_give_the_load_at_the_start_and_at_the_end(loads):
    common.mark_start()
    path = common.write_results("probe", {"figure": 1})
    written = json.loads(path.read_text())
    assert written["benchmark"] == "probe" and written["figure"] == 1
    assert written["machine"]["load_average_at_start"] == [3.0, 2.5, 1.25]
    assert written["machine"]["load_average_at_end"] == [9.13, 6.0, 2.0]


def test_python_m_bench_marks_the_start_of_each_benchmark(monkeypatch):
    marked: list[str] = []
    monkeypatch.setattr(common, "mark_start", lambda: marked.append("start"))
    from bench.__main__ import main

    def capacity() -> int:
        marked.append("capacity")
        return 0

    monkeypatch.setattr("bench.bench_capacity.main", capacity)
    assert main(["capacity"]) == 0
    assert marked == ["start", "capacity"]

"""The suite's xdist scheduler (tests/conftest.py): a module that uses `xdist_group` is one unit of work, so
its module fixture is set up in one process; every other test is a unit of its own."""

from __future__ import annotations

import pytest

from tests.conftest import SLOW_FIRST, unit_of


def test_a_marked_module_is_one_unit_and_other_tests_are_their_own(pytestconfig: pytest.Config) -> None:
    root = pytestconfig.rootpath
    marked = "tests/scale/test_scale_out.py"
    assert unit_of(f"{marked}::test_a", root) == unit_of(f"{marked}::test_b[x]", root) == marked
    plain = "tests/test_import_layers.py::test_the_layers_are_kept"
    assert unit_of(plain, root) == plain
    assert unit_of("tests/no_such_file.py::test_x", root) == "tests/no_such_file.py::test_x"


def test_the_slow_modules_exist_and_their_tests_run_before_the_others(request: pytest.FixtureRequest) -> None:
    root = request.config.rootpath
    assert all((root / path).is_file() for path in SLOW_FIRST), SLOW_FIRST
    slow = [item.nodeid.split("::", 1)[0] in SLOW_FIRST for item in request.session.items]
    assert slow == sorted(slow, reverse=True)  # every slow one before the first other

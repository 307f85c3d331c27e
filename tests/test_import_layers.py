"""The layer rules of ARCHITECTURE.md as an import graph check: import-linter's contracts in pyproject.toml
([tool.importlinter]: games and referee import no Django, gRPC, Celery, ladder or workers; engine_service
imports no ladder, workers, Django or Celery; the ladder imports no workers; bot_host imports no workers;
the pure maths imports no framework). A broken contract fails with import-linter's report, which names each
offending import and its line."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(cwd: Path, *, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)} if pythonpath else dict(os.environ)
    env["NO_COLOR"] = "1"
    env["COLUMNS"] = "200"  # one offending import a line in the report
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def report(output: str) -> str:
    """The broken contracts' part of import-linter's report (what names the offending imports)."""
    marker = "Broken contracts"
    return output[output.index(marker) :] if marker in output else output


def test_the_layers_import_only_what_architecture_allows() -> None:
    done = lint_imports(ROOT)
    if done.returncode != 0:
        raise AssertionError(
            "an import crosses a layer rule (pyproject.toml [tool.importlinter]):\n"
            + report(done.stdout + done.stderr)
        )
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    names = {c["id"] for c in contracts}
    assert {
        "pure-engine",
        "engine-knows-no-ladder",
        "ladder-knows-no-workers",
        "bot-host-knows-no-workers",
    } <= names
    assert f"Contracts: {len(contracts)} kept, 0 broken." in done.stdout


def test_a_crossing_import_fails_naming_the_import(tmp_path: Path) -> None:
    """The same kind of contract over a small tree that breaks it: a gateway module importing the ladder
    inside a function (as `django_auth` once did) is caught, and the report names the module and line."""
    (tmp_path / "fake_engine" / "gateway").mkdir(parents=True)
    (tmp_path / "fake_ladder").mkdir()
    (tmp_path / "fake_engine" / "__init__.py").write_text("")
    (tmp_path / "fake_engine" / "gateway" / "__init__.py").write_text("")
    (tmp_path / "fake_engine" / "gateway" / "auth.py").write_text(
        '"""A verifier."""\n\n\ndef lookup():\n    from fake_ladder.bots import identity\n\n    return identity\n'
    )
    (tmp_path / "fake_ladder" / "__init__.py").write_text("")
    (tmp_path / "fake_ladder" / "bots.py").write_text("identity = None\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.importlinter]\nroot_packages = ["fake_engine", "fake_ladder"]\n\n'
        '[[tool.importlinter.contracts]]\nname = "the engine imports no ladder"\ntype = "forbidden"\n'
        'source_modules = ["fake_engine"]\nforbidden_modules = ["fake_ladder"]\n'
    )
    done = lint_imports(tmp_path, pythonpath=tmp_path)
    assert done.returncode != 0
    assert "the engine imports no ladder BROKEN" in done.stdout
    assert "fake_engine.gateway.auth -> fake_ladder.bots (l.5)" in report(done.stdout)

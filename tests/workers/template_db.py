"""Fresh, migrated databases for the suite's process stacks, copied from a template migrated once.

Migrating a new database runs every migration (about 3 CPU-s of Django and a database server's worth of DDL,
15-20 s on a loaded machine); the stacks, clusters and deployments of one run need a dozen. The first stack
migrates a template, and each later one copies it: PostgreSQL's `CREATE DATABASE ... TEMPLATE` (a file copy
on the server), or a copy of the SQLite file. A template is named by a digest of everything migrating
depends on (the migration files and Django's version), so a changed migration gets a new template, and
concurrent test processes build it once between them (a PostgreSQL advisory lock, a file lock for SQLite).
Older templates are dropped when a new one is made.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import django

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_PREFIX = "cvs_test_template_"
LOCK_KEY = 0x63767374  # the advisory lock held while a template is built


def migrations_digest() -> str:
    """What migrating depends on: every migration file's path and bytes, and Django's version."""
    digest = hashlib.sha256(django.get_version().encode())
    for path in sorted((ROOT / "ladder").glob("*/migrations/*.py")):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def migrate(env: dict[str, str]) -> None:
    """`manage.py migrate` in `env` (its DATABASE_URL, or the SQLite file under CARAVANSERAI_VAR_DIR)."""
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _with_db(url: str, name: str) -> str:
    return urlunparse(urlparse(url)._replace(path=f"/{name}"))


def create_postgres_database(server_url: str, name: str, env: dict[str, str]) -> None:
    """Database `name` on `server_url`'s server, migrated: a copy of the current template."""
    import psycopg

    template = TEMPLATE_PREFIX + migrations_digest()
    with psycopg.connect(_with_db(server_url, "postgres"), autocommit=True) as admin:
        admin.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))
        try:
            if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (template,)).fetchone():
                _build_postgres_template(admin, server_url, template, env)
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        finally:
            admin.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))


def _build_postgres_template(admin: object, server_url: str, template: str, env: dict[str, str]) -> None:
    building = f"{TEMPLATE_PREFIX}building_{uuid.uuid4().hex[:8]}"
    admin.execute(f'CREATE DATABASE "{building}"')  # type: ignore[attr-defined]
    try:
        migrate({**env, "DATABASE_URL": _with_db(server_url, building)})
        admin.execute(f'ALTER DATABASE "{building}" RENAME TO "{template}"')  # type: ignore[attr-defined]
    except BaseException:
        admin.execute(f'DROP DATABASE IF EXISTS "{building}" WITH (FORCE)')  # type: ignore[attr-defined]
        raise
    stale = admin.execute(  # type: ignore[attr-defined]
        "SELECT datname FROM pg_database WHERE datname LIKE %s AND datname <> %s",
        (TEMPLATE_PREFIX.replace("_", r"\_") + "%", template),
    ).fetchall()
    for (old,) in stale:
        with contextlib.suppress(Exception):  # in use by a run of an older checkout: left for later
            admin.execute(f'DROP DATABASE IF EXISTS "{old}"')  # type: ignore[attr-defined]


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def create_sqlite_database(path: Path, env: dict[str, str]) -> None:
    """The SQLite database file `path`, migrated: a copy of the current template file."""
    templates = Path(tempfile.gettempdir()) / "caravanserai-test-templates"
    templates.mkdir(exist_ok=True)
    template = templates / f"ladder-{migrations_digest()}.sqlite3"
    with _file_lock(templates / "lock"):
        if not template.exists():
            building = Path(tempfile.mkdtemp(prefix="building-", dir=templates))
            try:
                migrate({**env, "CARAVANSERAI_VAR_DIR": str(building)})
                os.replace(building / "ladder.sqlite3", template)
            finally:
                shutil.rmtree(building, ignore_errors=True)
            for old in templates.glob("ladder-*.sqlite3"):
                if old != template:
                    old.unlink(missing_ok=True)
    shutil.copyfile(template, path)

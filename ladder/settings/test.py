"""Settings for the test suite: the base settings with fast password hashing, a key of its own, a
per-process SQLite file (so real threads share one database) or a per-run PostgreSQL database, a per-process
cache prefix on Redis, and generous throttles (the throttling tests lower them explicitly)."""

from __future__ import annotations

import os

from ladder.settings.base import *  # noqa: F403
from ladder.settings.base import CACHES, DATABASES, REST_FRAMEWORK, VAR_DIR

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DEBUG = False
SECRET_KEY = "caravanserai-test-settings-key-used-only-by-the-suite"

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-ladder-{os.getpid()}.sqlite3")}
else:  # a name per run (pytest-xdist adds `_gw<N>`): two runs on one server never drop each other's database
    RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID", f"p{os.getpid()}")[:12]
    DATABASES["default"]["TEST"] = {"NAME": f"test_ladder_{RUN}"}

CACHES["default"]["KEY_PREFIX"] = f"ladder-test-{os.getpid()}"

REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] = {"auth": "1000/min", "writes": "1000/min", "reads": "100000/min"}
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}

# Threads (the live server's, the concurrency tests') must not keep connections past their work, or the
# test database cannot be dropped at the end of the run.
DATABASES["default"]["CONN_MAX_AGE"] = 0

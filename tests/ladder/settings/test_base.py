"""The production settings (`ladder.settings.base`, every entry point's default): they refuse the public
development key, `check --deploy` is clean with the documented environment, pages carry a CSP, and the
gateway started exactly as infra/Procfile says authenticates a bot against the ladder."""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine_service.gateway.harness import RawBot, wait_for
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[3]
PRODUCTION = {
    "DJANGO_SECRET_KEY": "x7Kq9-production-like-key-for-the-suite-only-0a1b2c3d4e5f6g7h8i9j",
    "DJANGO_ALLOWED_HOSTS": "ladder.example.org",
    "DJANGO_SECURE_SSL_REDIRECT": "1",
    "DJANGO_SECURE_HSTS_SECONDS": "31536000",
    "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "DJANGO_SECURE_HSTS_PRELOAD": "1",
    "DJANGO_SECURE_COOKIES": "1",
    "DJANGO_SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
    "LADDER_NUM_PROXIES": "1",
}


def base_env(var: Path, **extra: str) -> dict[str, str]:
    """The environment of a fresh deployment: no settings module named, SQLite and the registry under `var`."""
    drop = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "DJANGO_DEBUG")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("CARAVANSERAI_")}
    env.update(CARAVANSERAI_VAR_DIR=str(var), PYTHONPATH=str(ROOT), **extra)
    return env


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_development_key_is_refused_outside_debug_and_demo(tmp_path):
    refused = manage(base_env(tmp_path), "check")
    assert refused.returncode != 0 and "DJANGO_SECRET_KEY is not set" in refused.stderr
    placeholder = manage(base_env(tmp_path, DJANGO_SECRET_KEY="change-me-in-production"), "check")
    assert placeholder.returncode != 0 and "DJANGO_SECRET_KEY is not set" in placeholder.stderr
    assert manage(base_env(tmp_path, CARAVANSERAI_DEMO="1"), "check").returncode == 0
    assert manage(base_env(tmp_path, DJANGO_DEBUG="1"), "check").returncode == 0


def test_check_deploy_is_clean_in_the_production_profile(tmp_path):
    result = manage(base_env(tmp_path, **PRODUCTION), "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.django_db
def test_pages_carry_a_content_security_policy(client):
    for address in ("/", "/api/v1/", "/api/v1/docs/"):
        policy = client.get(address)["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-eval" not in policy, address


def procfile_command(name: str) -> list[str]:
    for line in (ROOT / "infra" / "Procfile").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return shlex.split(line.split(":", 1)[1])
    raise AssertionError(f"no {name} in infra/Procfile")


@pytest.mark.slow
def test_the_procfile_gateway_authenticates_a_bot(tmp_path):
    bot_port = free_port()
    env = base_env(
        tmp_path,
        DJANGO_SECRET_KEY=PRODUCTION["DJANGO_SECRET_KEY"],
        CARAVANSERAI_REGISTRY_PATH=str(tmp_path / "registry.sqlite3"),
        CARAVANSERAI_GATEWAY_ADDR=f"127.0.0.1:{bot_port}",
        CARAVANSERAI_RELAY_ADDR=f"127.0.0.1:{free_port()}",
    )
    made = manage(  # the database migrated and a bot registered, in one process
        env,
        "shell",
        "-c",
        "from django.core.management import call_command; call_command('migrate', verbosity=0); "
        "from django.contrib.auth.models import User; from ladder.bots.services import bot_create; "
        "print(bot_create(owner=User.objects.create_user('op'), name='Procfile', games=['expedition-v1'])[1])",
    )
    assert made.returncode == 0, made.stdout + made.stderr
    token = made.stdout.strip().splitlines()[-1]
    gateway = subprocess.Popen(
        procfile_command("gateway"), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        bot = wait_for(lambda: _welcomed(f"127.0.0.1:{bot_port}", token), 30, "a Welcome from the gateway")
        assert bot.messages("welcome")[0].bot_name == "Procfile" or bot.messages("welcome")
        bot.close()
    finally:
        gateway.terminate()
        gateway.wait(10)


def _welcomed(target: str, token: str) -> RawBot | None:
    bot = RawBot(target, token).connect(wait=False)
    with contextlib.suppress(AssertionError, TimeoutError):
        wait_for(lambda: bot.messages("welcome") or bot._done.is_set(), 3, "Welcome")
    if bot.messages("welcome"):
        return bot
    bot.close()
    return None


def test_a_malformed_setting_stops_django_with_the_variable_named(tmp_path):
    result = manage(base_env(tmp_path, DJANGO_DEBUG="1", LADDER_MATCH_MAX_ATTEMPTS="three"), "check")
    assert result.returncode != 0
    assert "LADDER_MATCH_MAX_ATTEMPTS must be a whole number, not 'three'" in result.stderr

"""Project settings, driven by environment variables (one module for every deployment, and the default
DJANGO_SETTINGS_MODULE of every entry point: manage.py, wsgi/asgi, Celery, the gateway).

- DATABASE_URL: PostgreSQL (or any dj-database-url URL); unset: SQLite at `var/ladder.sqlite3`.
- REDIS_URL: the cache (leaderboards, throttling); unset: local memory.
- DJANGO_SECRET_KEY: required unless DJANGO_DEBUG=1 or CARAVANSERAI_DEMO=1 (the process refuses to start
  with the public development key otherwise: `ladder.core.apps`). CARAVANSERAI_SEED_SECRET: the key of
  derived seeds (default: derived from the secret key).
- DJANGO_DEBUG ("1" to enable), DJANGO_ALLOWED_HOSTS (comma separated), DJANGO_CSRF_TRUSTED_ORIGINS (comma
  separated).
- Behind TLS (see infra/README.md): DJANGO_SECURE_SSL_REDIRECT, DJANGO_SECURE_HSTS_SECONDS,
  DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS, DJANGO_SECURE_HSTS_PRELOAD, DJANGO_SECURE_COOKIES (secure
  session and CSRF cookies), DJANGO_SECURE_PROXY_SSL_HEADER ("HTTP_X_FORWARDED_PROTO,https": the header
  your proxy sets), LADDER_NUM_PROXIES (trusted reverse proxies in front; 0: X-Forwarded-For is ignored).
- LADDER_THROTTLE_AUTH / LADDER_THROTTLE_WRITES / LADDER_THROTTLE_READS / LADDER_THROTTLE_DATASET (DRF
  rates such as "20/min"; the last, pages of a ladder's dataset export per client, 30/min),
  LADDER_TOKEN_DAYS (user API tokens' lifetime), LADDER_CSP (the Content-Security-Policy header).
- LADDER_GATEWAY_PUBLIC_ADDR: the engine gateway's address as bots reach it (host:port), shown on a bot's
  token page in its connect commands (default "127.0.0.1:50051", the local gateway).
- LADDER_PRACTICE_MAX_OPEN (unfinished practice matches per user, 3), LADDER_PRACTICE_HOUSE_POLICIES
  (the house bots a practice match may seat: random,greedy,search), LADDER_PRACTICE_MAX_WAIT_SECONDS (how
  long a practice match waits for a free slot of its bots before it is called off, 3600).
- Match analysis (`ladder.analysis`, the `analysis` queue's worker): per match, LADDER_ANALYSIS_MAX_DECISIONS
  (decisions searched, the first ones of the match, 300), LADDER_ANALYSIS_CPU_SECONDS (CPU time, 300) and
  LADDER_ANALYSIS_TIME_LIMIT (wall seconds, the task's soft time limit, 600); per user,
  LADDER_ANALYSIS_MAX_OPEN (queued or running at once, 1), LADDER_ANALYSIS_PER_DAY (asked for in 24 hours,
  10) and LADDER_ANALYSIS_CPU_SECONDS_PER_DAY (CPU time of those, 1800); LADDER_ANALYSIS_MAX_QUEUED (queued
  or running on the whole site, 20); LADDER_ANALYSIS_RESEND_SECONDS (a queued or running analysis with no
  progress for this long is sent again when asked for again, 900).

Every variable is read by `engine_service.settings_env` (typed, blank means the default, a malformed value
stops the process with an error naming the variable), each default written once, here.

Layer: configuration only; imports no project code but the pure `engine_service.settings_env`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import dj_database_url

from engine_service.settings_env import env_bool, env_float, env_int, env_list, env_str

env = os.environ  # lower case: not a setting
BASE_DIR = Path(__file__).resolve().parents[2]
VAR_DIR = Path(env_str(env, "CARAVANSERAI_VAR_DIR", str(BASE_DIR / "var")))  # local data (SQLite, broker)

INSECURE_SECRET_KEY = "caravanserai-insecure-development-key-change-me"
SECRET_KEY = env_str(env, "DJANGO_SECRET_KEY", INSECURE_SECRET_KEY)
DEBUG = env_bool(env, "DJANGO_DEBUG", False)
CARAVANSERAI_DEMO = env_bool(
    env, "CARAVANSERAI_DEMO", False
)  # the local demo: the development key is allowed
ALLOWED_HOSTS = env_list(env, "DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list(env, "DJANGO_CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "ladder.core",
    "ladder.accounts",
    "ladder.bots",
    "ladder.ladders",
    "ladder.matches",
    "ladder.ratings",
    "ladder.replays",
    "ladder.web",
    "ladder.tournaments",
    "ladder.hosting",
    "ladder.analysis",
]

MIDDLEWARE = [
    "ladder.core.middleware.PlainNotFoundMiddleware",
    "ladder.core.middleware.ContentSecurityPolicyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "ladder.core.middleware.ApiBodyLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "ladder.urls"
WSGI_APPLICATION = "ladder.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def database_config() -> dict[str, Any]:
    url = env_str(env, "DATABASE_URL", "")
    if url:
        conn_max_age = env_int(env, "DATABASE_CONN_MAX_AGE", 60, minimum=0)
        config: dict[str, Any] = dict(dj_database_url.parse(url, conn_max_age=conn_max_age))
        config.setdefault("TEST", {})
        return config
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(VAR_DIR / "ladder.sqlite3"),
        # IMMEDIATE: a writing transaction takes the write lock at BEGIN, so concurrent writers queue (up to
        # `timeout` seconds) instead of failing on a lock upgrade; WAL lets readers run beside a writer.
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
        "TEST": {},
    }


DATABASES = {"default": database_config()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def cache_config() -> dict[str, Any]:
    url = env_str(env, "REDIS_URL", "")
    if url:
        return {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": env_str(env, "LADDER_CACHE_PREFIX", "ladder"),
            "TIMEOUT": 300,
        }
    return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "ladder", "TIMEOUT": 300}


CACHES = {"default": cache_config()}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"  # `collectstatic` target; whitenoise also serves straight from the apps
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
WHITENOISE_USE_FINDERS = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

LOGIN_URL = "web:login"
LOGIN_REDIRECT_URL = "web:home"
LOGOUT_REDIRECT_URL = "web:home"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "ladder.accounts.authentication.UserTokenAuthentication",  # first: a 401 names the Token scheme
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_THROTTLE_CLASSES": ["ladder.core.throttles.WriteThrottle", "ladder.core.throttles.ReadThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "auth": env_str(env, "LADDER_THROTTLE_AUTH", "20/min"),
        "writes": env_str(env, "LADDER_THROTTLE_WRITES", "120/min"),
        "reads": env_str(env, "LADDER_THROTTLE_READS", "600/min"),
        "dataset": env_str(env, "LADDER_THROTTLE_DATASET", "30/min"),
    },
    "NUM_PROXIES": env_int(env, "LADDER_NUM_PROXIES", 0, minimum=0),
    "DEFAULT_PARSER_CLASSES": [
        "ladder.core.parsers.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "ladder.core.schema.LadderAutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "EXCEPTION_HANDLER": "ladder.core.exceptions.api_exception_handler",
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Caravanserai ladder API",
    "DESCRIPTION": "Games, ladders, bots, leaderboards, matches, replays and rating history.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",  # pinned, installed assets (drf-spectacular-sidecar): works offline
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "MatchStatusEnum": "ladder.matches.models.MatchStatus",
        "TournamentStatusEnum": "ladder.tournaments.models.TournamentStatus",
        "TournamentFormatEnum": "ladder.tournaments.models.TournamentFormat",
        "GameIdEnum": "ladder.core.schema.GAME_IDS",
    },
}

# Transport security: off by default (plain HTTP on localhost); infra/README.md has the production values.
SECURE_SSL_REDIRECT = env_bool(env, "DJANGO_SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int(env, "DJANGO_SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool(env, "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool(env, "DJANGO_SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool(env, "DJANGO_SECURE_COOKIES", False)
_proxy_header = env_list(env, "DJANGO_SECURE_PROXY_SSL_HEADER", "")
SECURE_PROXY_SSL_HEADER = (_proxy_header[0], _proxy_header[1]) if len(_proxy_header) == 2 else None
# Pages load only our own scripts (no inline script anywhere); the replay viewer and the API docs set
# element styles, hence 'unsafe-inline' for styles only.
CONTENT_SECURITY_POLICY = env_str(
    env,
    "LADDER_CSP",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; "
    "base-uri 'self'; frame-ancestors 'none'; form-action 'self'",
)

# Ladder behaviour.
LADDER_MATCH_MAX_ATTEMPTS = env_int(env, "LADDER_MATCH_MAX_ATTEMPTS", 3, minimum=1)
LADDER_LEADERBOARD_CACHE_SECONDS = env_int(env, "LADDER_LEADERBOARD_CACHE_SECONDS", 300, minimum=0)
LADDER_VERIFY_RECORDS = env_bool(env, "LADDER_VERIFY_RECORDS", True)
LADDER_METRICS_TOKEN = env_str(env, "LADDER_METRICS_TOKEN", "")  # set: /metrics needs it as a bearer token
LADDER_TOKEN_DAYS = env_int(env, "LADDER_TOKEN_DAYS", 30, minimum=1)  # user API tokens expire after this
LADDER_TOKENS_PER_USER = 10  # a new token beyond this many live ones revokes the oldest
LADDER_GATEWAY_PUBLIC_ADDR = env_str(env, "LADDER_GATEWAY_PUBLIC_ADDR", "127.0.0.1:50051")
# Practice matches (`ladder.matches.practice`): how many one user may have unfinished, and the house bots
# they may seat.
LADDER_PRACTICE_MAX_OPEN = env_int(env, "LADDER_PRACTICE_MAX_OPEN", 3, minimum=0)
LADDER_PRACTICE_MAX_WAIT_SECONDS = env_int(env, "LADDER_PRACTICE_MAX_WAIT_SECONDS", 3600, minimum=60)
LADDER_PRACTICE_HOUSE_POLICIES = tuple(
    env_list(env, "LADDER_PRACTICE_HOUSE_POLICIES", "random,greedy,search")
)
# Match analysis (`ladder.analysis`): what one analysis may cost, and how many one user may ask for.
LADDER_ANALYSIS_MAX_DECISIONS = env_int(env, "LADDER_ANALYSIS_MAX_DECISIONS", 300, minimum=1)
LADDER_ANALYSIS_CPU_SECONDS = env_float(env, "LADDER_ANALYSIS_CPU_SECONDS", 300.0, minimum=1)
LADDER_ANALYSIS_TIME_LIMIT = env_int(env, "LADDER_ANALYSIS_TIME_LIMIT", 600, minimum=10)
LADDER_ANALYSIS_MAX_OPEN = env_int(env, "LADDER_ANALYSIS_MAX_OPEN", 1, minimum=0)
LADDER_ANALYSIS_PER_DAY = env_int(env, "LADDER_ANALYSIS_PER_DAY", 10, minimum=0)
LADDER_ANALYSIS_CPU_SECONDS_PER_DAY = env_float(env, "LADDER_ANALYSIS_CPU_SECONDS_PER_DAY", 1800.0, minimum=0)
LADDER_ANALYSIS_MAX_QUEUED = env_int(env, "LADDER_ANALYSIS_MAX_QUEUED", 20, minimum=0)
LADDER_ANALYSIS_RESEND_SECONDS = env_int(env, "LADDER_ANALYSIS_RESEND_SECONDS", 900, minimum=60)
# Hosted bots (`ladder.hosting`, the `bot_host` service; infra/README.md, "Hosted bots"): the upload limits,
# then the bot host's: processes per machine, the sandbox tool, each process's limits, the gateway's socket.
HOSTING_ARCHIVE_MAX_BYTES = env_int(env, "HOSTING_ARCHIVE_MAX_BYTES", 2 << 20, minimum=1024)
HOSTING_ARCHIVE_MAX_UNPACKED_BYTES = env_int(
    env, "HOSTING_ARCHIVE_MAX_UNPACKED_BYTES", 16 << 20, minimum=1024
)
HOSTING_ARCHIVE_MAX_FILES = env_int(env, "HOSTING_ARCHIVE_MAX_FILES", 200, minimum=2)
BOT_HOST_PROCESSES = env_int(env, "CARAVANSERAI_BOT_HOST_PROCESSES", 8, minimum=1)
BOT_HOST_SANDBOX = env_str(env, "CARAVANSERAI_BOT_HOST_SANDBOX", "/usr/bin/bwrap")
BOT_HOST_CPU_SECONDS = env_int(env, "CARAVANSERAI_BOT_HOST_CPU_SECONDS", 3600, minimum=1)
BOT_HOST_MEMORY_MB = env_int(env, "CARAVANSERAI_BOT_HOST_MEMORY_MB", 1024, minimum=64)
# the CPU a hosted bot's whole process tree may use at once (its control group's quota), in cores
BOT_HOST_CPU_CORES = env_float(env, "CARAVANSERAI_BOT_HOST_CPU_CORES", 1.0, minimum=0.01)
BOT_HOST_PROCESS_LIMIT = env_int(env, "CARAVANSERAI_BOT_HOST_NPROC", 64, minimum=4)
BOT_HOST_FILE_MB = env_int(env, "CARAVANSERAI_BOT_HOST_FILE_MB", 16, minimum=1)
BOT_HOST_TMP_MB = env_int(env, "CARAVANSERAI_BOT_HOST_TMP_MB", 64, minimum=1)
BOT_HOST_UID_BASE = env_int(env, "CARAVANSERAI_BOT_HOST_UID_BASE", 61000, minimum=1000)
BOT_HOST_STATE_DIR = Path(env_str(env, "CARAVANSERAI_BOT_HOST_STATE_DIR", str(VAR_DIR / "bot_host")))
BOT_HOST_GATEWAY_SOCKET = env_str(env, "CARAVANSERAI_GATEWAY_UDS", str(VAR_DIR / "gateway" / "bot.sock"))
# Set (host:port of a gateway or the balancer): the bot host serves that socket itself, relayed there.
BOT_HOST_GATEWAY_ADDR = env_str(env, "CARAVANSERAI_BOT_HOST_GATEWAY_ADDR", "")
# The key of every derived seed (house bots', tournament tables'): `ladder.matches.seeds`.
CARAVANSERAI_SEED_SECRET = env_str(
    env, "CARAVANSERAI_SEED_SECRET", hashlib.sha256(f"caravanserai-seeds:{SECRET_KEY}".encode()).hexdigest()
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str(env, "LADDER_LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}

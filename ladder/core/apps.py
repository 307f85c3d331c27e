"""The core app: at start-up, refuse the public development SECRET_KEY (or any key under 32 characters)
outside debug and the demo."""

from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

MIN_KEY_LENGTH = 32  # shorter keys are placeholders (compose.yaml's "change-me-in-production"), not secrets


def check_secret_key() -> None:
    key = settings.SECRET_KEY
    weak = key == getattr(settings, "INSECURE_SECRET_KEY", None) or len(key) < MIN_KEY_LENGTH
    if weak and not (settings.DEBUG or settings.CARAVANSERAI_DEMO):
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is not set (or shorter than 32 characters): set it to a long random value "
            "(python -c 'import secrets; print(secrets.token_urlsafe(50))'), or DJANGO_DEBUG=1 / "
            "CARAVANSERAI_DEMO=1 on a development machine. See infra/README.md."
        )


class CoreConfig(AppConfig):
    name = "ladder.core"
    label = "core"

    def ready(self) -> None:
        check_secret_key()

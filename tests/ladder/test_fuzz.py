"""Property-based fuzzing of the served OpenAPI schema (schemathesis): for every operation, generated
requests, valid and invalid, as an anonymous reader and as a signed-in operator, never get a 5xx, and every
response matches the schema (status code, content type, body). Examples are bounded to keep the suite fast.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from ladder.accounts.services import user_token_issue
from ladder.ladders.services import ladder_create

schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", WSGIHandler())
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def operator_headers(db, staff_user, house_bots):
    """A ladder and house bots to act on, and the token of a staff user (who may create matches)."""
    ladder_create(game_id="expedition-v1", num_players=2)
    _, token = user_token_issue(user=staff_user)
    # The in-process WSGI calls share the test's connection and transaction: keep Django from closing it.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield {"Authorization": f"Token {token}"}
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(
    max_examples=5,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_no_operation_errors_or_breaks_its_schema(case, operator_headers):
    case.call_and_validate(checks=CHECKS)
    case.call_and_validate(headers=operator_headers, checks=CHECKS)

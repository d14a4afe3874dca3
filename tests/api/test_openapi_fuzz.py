"""schemathesis against the OpenAPI document: generated requests to every operation, checking
that none answers with a server error and that responses match their declared schemas.

(schemathesis's pytest plugin does not load under this pytest; the operations are driven with
hypothesis directly, which is what the plugin does.)"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

EXAMPLES_PER_OPERATION = 25


def test_no_operation_answers_with_a_server_error(app, clean_db):
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 8, [op.label for op in operations]
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck))
        def check(case):
            case.call_and_validate(checks=[not_a_server_error, response_schema_conformance])

        check()

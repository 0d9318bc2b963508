"""schemathesis hooks for Herald's REST API (loaded through schemathesis.toml)."""

import re

import schemathesis

# The 422 messages a request valid by the OpenAPI document may still earn, by operation: each
# rule depends on data a JSON Schema cannot carry (the numbering plan of a number, duplicates
# after normalization, the workspace's providers, routes, services, templates and senders, the
# right code, an Idempotency-Key's earlier body, the workspace's fraud guard) or on SMS segment
# counting.
KEY_REUSED = r"This Idempotency-Key was already used with a different request body\."
STATEFUL_REFUSALS = {
    "POST /api/v1/messages": [
        r"The recipients\.\d+ field must be a valid E\.164 phone number\.",
        r"The recipients\.\d+ field has a duplicate value\.",
        r"The recipients\.\d+ field must be a number in a country the selected (provider|failover route) serves\.",
        r"The selected (provider slug|failover route slug)( \(from the API key\))? is invalid\.",
        r"The sender id field is required for the selected (provider|failover route)\.",
        r"The selected sender id is not an approved sender of the own provider\.",
        # The workspace's fraud guard: its blocked ranges and allowed countries.
        r"The recipients\.\d+ field is in a blocked number range \(\+\d+\) for SMS\.",
        r"The recipients\.\d+ field is in a country this workspace does not send to for SMS\.",
        # send_at is read against the clock; and an RFC 3339 date-time the ISO 8601 reading
        # refuses (a lowercase t or z, second 60).
        r"The send at field must be a date between 1 minute and 35 days from now\.",
        r"The send at field must be a valid ISO 8601 date and time with a time zone offset\.",
        # personalization: its keys against the recipients, its values against the message.
        r"The personalization\.\S+ field must be one of the recipients\.",
        r"The personalization\.\S+ field repeats a recipient given before\.",
        r"The personalization\.\S+ field has no value for .+, used in the message\.",
        r"The personalization\.\S+ field makes the message (blank|longer than 1600 characters)\.",
        r"The message field has .+, which is not a variable name: .+",
        KEY_REUSED,
    ],
    "POST /api/v1/otp/send": [
        r"The recipient field must be a valid E\.164 phone number\.",
        r"The recipient field must be an Australian mobile number for the selected provider\.",
        r"The recipient field must be a number in a country the selected provider serves\.",
        r"The selected (service slug|template slug|provider slug|sender id) is invalid\.",
        r"The selected template .+\.",
        r"The message template field must fit in one SMS segment with the code\.",
        r"The recipient field is in a blocked number range \(\+\d+\) for OTP\.",
        r"The recipient field is in a country this workspace does not send to for OTP\.",
        KEY_REUSED,
    ],
    "POST /api/v1/otp/verify": [
        r"The recipient field must be a valid E\.164 phone number\.",
        r"The code is invalid or has expired\.",
    ],
    # A cursor is one Herald issued (a page's next_cursor), which its pattern cannot say.
    "GET /api/v1/messages/{campaign}/recipients": [
        r"The cursor field format is invalid\.",
    ],
}


@schemathesis.check
def refused_only_for_what_the_document_cannot_say(ctx, response, case):
    """A 422 to a request the document accepts must name a rule the document cannot carry."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    allowed = [re.compile(p) for p in STATEFUL_REFUSALS.get(f"{case.method.upper()} {case.path}", [])]
    body = response.json()
    messages = [m for ms in (body.get("errors") or {}).values() for m in ms] or [body.get("message", "")]
    unexplained = [m for m in messages if not any(p.fullmatch(m) for p in allowed)]
    if unexplained:
        raise AssertionError(
            "A request valid by the OpenAPI document was refused for a rule the document could state: "
            + "; ".join(unexplained)
        )
    return True

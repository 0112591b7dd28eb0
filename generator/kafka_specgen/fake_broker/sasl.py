"""SaslHandshake and SaslAuthenticate where no authentication is under way: on a listener
without SASL, or after the client has authenticated. Kafka answers both with
ILLEGAL_SASL_STATE there (apache/kafka ``KafkaApis.handleSaslHandshakeRequest``,
``handleSaslAuthenticateRequest``); the exchange itself is ``authenticate``'s."""

from __future__ import annotations

from typing import Any

from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler

AFTER_AUTHENTICATION = "SaslAuthenticate request received after successful authentication"


def sasl_handshake(call: Call) -> Any:
    return call.respond(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])


def sasl_authenticate(call: Call) -> Any:
    return call.respond(
        error_code=ErrorCode.ILLEGAL_SASL_STATE,
        error_message=AFTER_AUTHENTICATION,
        auth_bytes=b"",
    )


HANDLERS = (
    Handler(ApiKey.SASL_HANDSHAKE, (0, 1), sasl_handshake),
    Handler(ApiKey.SASL_AUTHENTICATE, (0, 2), sasl_authenticate),
)

"""Every error toolfront raises to a caller or a tool author, under one base class.

ToolfrontError
├── ToolDefinitionError              a tool declaration breaks a rule of the tool definition (``.errors``)
├── ConfigurationError               a setting is missing or malformed (names the variable)
├── DryRunWriteError                 a danger check tried to write (it runs as a dry run)
├── RegistryError                    the set of tools cannot be served
│   └── DuplicateToolError           two tools share a name
├── ToolError                        raised by a handler: its own code and a 4xx status
└── CallRefusedError                 the call pipeline refuses a call
    ├── CredentialInUrlError         400 credential_in_url
    ├── InvalidJsonError             400 invalid_json
    ├── InvalidFormError             400 invalid_form (an HTML form's body: not a form, a field repeated)
    ├── InvalidDecisionError         400 invalid_decision
    ├── UnauthenticatedError         401 unauthenticated
    ├── MissingScopeError            403 missing_scope
    ├── MissingPermissionError       403 missing_permission
    ├── InvalidConfirmationError     403 invalid_confirmation (wrong code or client token)
    ├── ApproverRequiredError        403 approver_required (a signed-in approver, not the requester)
    ├── UnknownToolError             404 unknown_tool
    ├── NotFoundError                404 not_found (an approval: unknown or another requester's)
    ├── MethodNotAllowedError        405 method_not_allowed (Allow)
    ├── IdempotencyInProgressError   409 idempotency_in_progress (Retry-After)
    ├── IdempotencyOutcomeUnknownError 409 idempotency_outcome_unknown (ran, but no answer was kept)
    ├── ApprovalClosedError          409 approval_closed (decided, cancelled or expired)
    ├── PayloadTooLargeError         413 payload_too_large
    ├── UnsupportedMediaTypeError    415 unsupported_media_type
    ├── TooManyItemsError            422 too_many_items
    ├── InvalidInputError            422 invalid_input (details: every input error)
    ├── ClientTokenRequiredError     422 client_token_required
    ├── IdempotencyKeyReusedError    422 idempotency_key_reused
    ├── IdempotencyNotSupportedError 422 idempotency_not_supported
    ├── InvalidIdempotencyKeyError   422 invalid_idempotency_key
    ├── RateLimitedError             429 rate_limited (Retry-After)
    ├── TooManyPendingApprovalsError 429 too_many_pending_approvals (Retry-After)
    ├── InternalError                500 internal_error (never carries detail)
    ├── ConfirmationUnavailableError 501 confirmation_unavailable
    └── StoreUnavailableError        503 unavailable

Errors that reach a caller carry a stable ``code`` and an ``http_status``; they are mapped to
HTTP by the edge (adapters/http.py), each route in its own form: the REST envelope, JSON-RPC (the MCP
adapter), an OAuth error (oauth/facade.py) or a page (the approvals function). Two kinds of exception stay
outside the tree on purpose, because no caller ever sees them: the DynamoDB signals a store
handles itself (``aws.dynamodb.ConditionFailedError``, ``TransactionCanceledError``), and the MCP
adapter's ``RpcError``, which is a JSON-RPC answer rather than a tool call's refusal.
"""

from __future__ import annotations

from typing import Any


class ToolfrontError(Exception):
    """Base of every toolfront error."""

    code: str = "internal_error"
    http_status: int = 500

    def __init__(self, message: str, *, details: Any = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        self.headers = dict(headers or {})  # HTTP headers the refusal carries (Retry-After, RateLimit)

    def to_dict(self) -> dict[str, Any]:
        """The error object REST and MCP both answer: ``{code, message, details}``."""
        return {"code": self.code, "message": self.message, "details": self.details}


class ToolDefinitionError(ToolfrontError):
    """A tool declaration breaks one or more rules; ``errors`` lists every problem at once."""

    code = "invalid_tool_definition"

    def __init__(self, errors: list[str], *, name: object = None) -> None:
        label = f"tool {name!r}" if isinstance(name, str) else "tool"
        super().__init__(f"{label} is invalid: " + "; ".join(errors), details=list(errors))
        self.errors = list(errors)
        self.tool = name if isinstance(name, str) else None


class ConfigurationError(ToolfrontError):
    """A setting is missing or malformed; the message names the environment variable."""

    code = "configuration_error"


class DryRunWriteError(ToolfrontError):
    """A write was attempted during a dry run (a danger check may only read)."""

    code = "dry_run_write"


class RegistryError(ToolfrontError):
    """The registry cannot serve the tools it was given."""

    code = "registry_error"


class DuplicateToolError(RegistryError):
    """Two tools were declared under one name."""

    code = "duplicate_tool"


class ToolError(ToolfrontError):
    """A handler's refusal: its own snake_case code, a message for the caller and a 4xx status.

    Example: ``raise ToolError("not_found", "no product with sku 'X-1'", 404)``.
    """

    def __init__(self, code: str, message: str, status: int = 400, *, details: Any = None) -> None:
        if not 400 <= status <= 499:
            raise ValueError(f"a tool error's status must be a 4xx, got {status}")
        super().__init__(message, details=details)
        self.code = code
        self.http_status = status


class CallRefusedError(ToolfrontError):
    """The call pipeline refuses a call; ``code`` and ``http_status`` say how."""


class CredentialInUrlError(CallRefusedError):
    code, http_status = "credential_in_url", 400


class InvalidJsonError(CallRefusedError):
    code, http_status = "invalid_json", 400


class InvalidFormError(CallRefusedError):
    code, http_status = "invalid_form", 400


class MethodNotAllowedError(CallRefusedError):
    """405: the address exists, not for this method (``Allow`` names the ones it has)."""

    code, http_status = "method_not_allowed", 405


class InvalidDecisionError(CallRefusedError):
    code, http_status = "invalid_decision", 400


class UnauthenticatedError(CallRefusedError):
    code, http_status = "unauthenticated", 401


class MissingScopeError(CallRefusedError):
    code, http_status = "missing_scope", 403


class MissingPermissionError(CallRefusedError):
    code, http_status = "missing_permission", 403


class InvalidConfirmationError(CallRefusedError):
    code, http_status = "invalid_confirmation", 403


class ApproverRequiredError(CallRefusedError):
    """Deciding this approval needs a signed-in approver other than the requester (ApproverSignIn)."""

    code, http_status = "approver_required", 403


class QuorumIdentityRequiredError(ApproverRequiredError):
    """A decision by a link's code alone on a call that needs several approvers: it names nobody."""


class NotFoundError(CallRefusedError):
    code, http_status = "not_found", 404


class ApprovalClosedError(CallRefusedError):
    code, http_status = "approval_closed", 409


class AlreadyVotedError(CallRefusedError):
    """One person approving a call that needs several people, a second time (any channel)."""

    code, http_status = "already_voted", 409


class UnknownToolError(CallRefusedError):
    code, http_status = "unknown_tool", 404


class IdempotencyInProgressError(CallRefusedError):
    code, http_status = "idempotency_in_progress", 409


class IdempotencyOutcomeUnknownError(CallRefusedError):
    code, http_status = "idempotency_outcome_unknown", 409


class PayloadTooLargeError(CallRefusedError):
    code, http_status = "payload_too_large", 413


class UnsupportedMediaTypeError(CallRefusedError):
    code, http_status = "unsupported_media_type", 415


class TooManyItemsError(CallRefusedError):
    code, http_status = "too_many_items", 422


class InvalidInputError(CallRefusedError):
    code, http_status = "invalid_input", 422


class ClientTokenRequiredError(CallRefusedError):
    code, http_status = "client_token_required", 422


class IdempotencyKeyReusedError(CallRefusedError):
    code, http_status = "idempotency_key_reused", 422


class IdempotencyNotSupportedError(CallRefusedError):
    code, http_status = "idempotency_not_supported", 422


class InvalidIdempotencyKeyError(CallRefusedError):
    code, http_status = "invalid_idempotency_key", 422


class RateLimitedError(CallRefusedError):
    code, http_status = "rate_limited", 429


class TooManyPendingApprovalsError(CallRefusedError):
    code, http_status = "too_many_pending_approvals", 429


class InternalError(CallRefusedError):
    code, http_status = "internal_error", 500

    def __init__(self) -> None:
        super().__init__("the tool failed; the request id identifies it in the logs")


class ConfirmationUnavailableError(CallRefusedError):
    code, http_status = "confirmation_unavailable", 501


class StoreUnavailableError(CallRefusedError):
    code, http_status = "unavailable", 503

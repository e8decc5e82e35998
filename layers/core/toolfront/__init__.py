"""toolfront: a serverless tool API for AWS (the core that every function's layer carries)."""

from toolfront.errors import (
    DuplicateToolError,
    RegistryError,
    ToolDefinitionError,
    ToolError,
    ToolfrontError,
)
from toolfront.registry import Registry
from toolfront.tools import Annotations, Audience, CallContext, Tool
from toolfront.validation import InputError

__all__ = [
    "Annotations",
    "Audience",
    "CallContext",
    "DuplicateToolError",
    "InputError",
    "Registry",
    "RegistryError",
    "Tool",
    "ToolDefinitionError",
    "ToolError",
    "ToolfrontError",
]

"""A Cognito user pool's password policy, as the local stack checks the seed's passwords against it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The characters Cognito counts as symbols in a password policy.
_SYMBOLS = frozenset("^$*.[]{}()?\"!@#%&/\\,><':;|_~`=+- ")


@dataclass(frozen=True, slots=True)
class PasswordPolicy:
    """A user pool's ``Policies.PasswordPolicy``; Cognito's defaults for whatever it leaves out."""

    minimum_length: int = 8
    require_uppercase: bool = True
    require_lowercase: bool = True
    require_numbers: bool = True
    require_symbols: bool = True

    @classmethod
    def of_pool(cls, properties: Mapping[str, Any]) -> PasswordPolicy:
        """The policy of an ``AWS::Cognito::UserPool``'s resolved properties."""
        policies = properties.get("Policies")
        raw = policies.get("PasswordPolicy") if isinstance(policies, Mapping) else None
        raw = raw if isinstance(raw, Mapping) else {}
        default = cls()

        def flag(name: str, fallback: bool) -> bool:
            return str(raw.get(name, fallback)).lower() == "true"  # YAML's true or a parameter's "true"

        return cls(
            minimum_length=int(raw.get("MinimumLength", default.minimum_length)),
            require_uppercase=flag("RequireUppercase", default.require_uppercase),
            require_lowercase=flag("RequireLowercase", default.require_lowercase),
            require_numbers=flag("RequireNumbers", default.require_numbers),
            require_symbols=flag("RequireSymbols", default.require_symbols),
        )

    def missing(self, password: str) -> list[str]:
        """What ``password`` lacks, in words that never quote it."""
        lacks = [f"at least {self.minimum_length} characters"] if len(password) < self.minimum_length else []
        wanted = (
            (self.require_uppercase, "an uppercase letter", any("A" <= c <= "Z" for c in password)),
            (self.require_lowercase, "a lowercase letter", any("a" <= c <= "z" for c in password)),
            (self.require_numbers, "a digit", any("0" <= c <= "9" for c in password)),
            (self.require_symbols, "a symbol", any(c in _SYMBOLS for c in password)),
        )
        lacks += [what for required, what, present in wanted if required and not present]
        if password != password.strip():
            lacks.append("no blank at its start or end")  # Cognito refuses those too
        return lacks

"""IAM on the local stack: each function's policy from template.yaml, enforced on its requests."""

from toolfront_dev.iam.enforcement import Enforcement, RunsAs, enforce, running_as
from toolfront_dev.iam.policies import role_policies, stack_enforcement

__all__ = ["Enforcement", "RunsAs", "enforce", "role_policies", "running_as", "stack_enforcement"]

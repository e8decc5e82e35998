"""The template's Cognito user pools, domains, resource servers and app clients, created in moto; the
seed's users created in the pool.

A ``Ref`` to one of them then resolves to moto's id, so TOOLFRONT_COGNITO_* point at a local pool.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from toolfront_dev.aws import moto_client
from toolfront_dev.intrinsics import Intrinsics
from toolfront_dev.seeds import SeedUser
from toolfront_dev.template import ResourceSpec

logger = logging.getLogger(__name__)

USER_POOL = "AWS::Cognito::UserPool"
USER_POOL_DOMAIN = "AWS::Cognito::UserPoolDomain"
RESOURCE_SERVER = "AWS::Cognito::UserPoolResourceServer"
USER_POOL_CLIENT = "AWS::Cognito::UserPoolClient"
# Creation order: a domain and a client name their pool, a client may ask for a resource server's scopes.
EMULATED_TYPES = (USER_POOL, USER_POOL_DOMAIN, RESOURCE_SERVER, USER_POOL_CLIENT)

# Properties whose CloudFormation shape is the API's; the others do not matter locally.
_POOL_PROPERTIES = (
    "AdminCreateUserConfig",
    "AliasAttributes",
    "AutoVerifiedAttributes",
    "MfaConfiguration",
    "Policies",
    "UsernameAttributes",
)
# moto keeps the domain and ignores ManagedLoginVersion; the local managed login is toolfront_dev's own.
_DOMAIN_PROPERTIES = ("UserPoolId", "Domain", "CustomDomainConfig", "ManagedLoginVersion")
_SERVER_PROPERTIES = ("UserPoolId", "Identifier", "Name", "Scopes")
_CLIENT_PROPERTIES = (
    "UserPoolId",
    "ClientName",
    "GenerateSecret",
    "ExplicitAuthFlows",
    "AllowedOAuthFlows",
    "AllowedOAuthFlowsUserPoolClient",
    "AllowedOAuthScopes",
    "CallbackURLs",
    "LogoutURLs",
    "SupportedIdentityProviders",
    "PreventUserExistenceErrors",
    "AccessTokenValidity",
    "IdTokenValidity",
    "RefreshTokenValidity",
    "TokenValidityUnits",
)


def jwks_url(moto_endpoint: str, user_pool_id: str) -> str:
    """Where moto serves a pool's signing keys (the issuer URL's JWKS would be real AWS)."""
    return f"{moto_endpoint}/{user_pool_id}/.well-known/jwks.json"


def create_user_pools(
    endpoint: str, resources: Iterable[ResourceSpec], intrinsics: Intrinsics, *, stage: str
) -> dict[str, str]:
    """Create every emulated Cognito resource in moto.

    Args:
        endpoint: the moto endpoint.
        resources: the template's resources whose condition holds; other types are ignored.
        intrinsics: resolves the properties (a client's ``UserPoolId: !Ref UserPool``...).
        stage: names pools without a UserPoolName ``toolfront-<stage>-<LogicalId>``.

    Returns:
        What a ``Ref`` to each created resource gives: pool id, domain prefix (or custom domain),
        client id, or server identifier.
    """
    cognito: Any = None
    created: dict[str, str] = {}
    wanted = [r for r in resources if r.type in EMULATED_TYPES]
    for kind in EMULATED_TYPES:
        for resource in (r for r in wanted if r.type == kind):
            cognito = cognito or moto_client(endpoint, "cognito-idp")
            props = intrinsics.with_refs(created).value(dict(resource.properties), where=resource.logical_id)
            created[resource.logical_id] = _create(cognito, kind, resource.logical_id, props, stage)
            logger.debug("created %s %s", kind, created[resource.logical_id])
    return created


def create_users(endpoint: str, user_pool_id: str, users: Iterable[SeedUser]) -> dict[str, str]:
    """Create each seed user in the pool, confirmed with its own password, in its groups.

    As an administrator would: no invitation (``MessageAction=SUPPRESS``), the e-mail verified, the
    password permanent, so the user signs in at once. A group is created when it is missing.

    Returns:
        moto's username of each user (the pool signs in by e-mail, its usernames are the subs), by
        the seed's username.
    """
    cognito = moto_client(endpoint, "cognito-idp")
    pages = cognito.get_paginator("list_groups").paginate(UserPoolId=user_pool_id)
    groups = {group["GroupName"] for page in pages for group in page["Groups"]}
    created: dict[str, str] = {}
    for user in users:
        attributes = [{"Name": "email", "Value": user.username}, {"Name": "email_verified", "Value": "true"}]
        answer = cognito.admin_create_user(
            UserPoolId=user_pool_id,
            Username=user.username,
            MessageAction="SUPPRESS",
            UserAttributes=attributes,
        )
        cognito.admin_set_user_password(
            UserPoolId=user_pool_id, Username=user.username, Password=user.password, Permanent=True
        )
        for group in user.groups:
            if group not in groups:
                cognito.create_group(UserPoolId=user_pool_id, GroupName=group)
                groups.add(group)
            cognito.admin_add_user_to_group(UserPoolId=user_pool_id, Username=user.username, GroupName=group)
        created[user.username] = str(answer["User"]["Username"])
        logger.debug("created user %s in %s", user.username, user_pool_id)
    return created


def _create(cognito: Any, kind: str, logical_id: str, props: Mapping[str, Any], stage: str) -> str:
    if kind == USER_POOL:
        name = props.get("UserPoolName") or f"toolfront-{stage}-{logical_id}"
        pool = cognito.create_user_pool(PoolName=name, **_pick(props, _POOL_PROPERTIES))
        return str(pool["UserPool"]["Id"])
    if kind == USER_POOL_DOMAIN:
        cognito.create_user_pool_domain(**_pick(props, _DOMAIN_PROPERTIES))
        return str(props["Domain"])  # CloudFormation's Ref: the prefix, or the custom domain name
    if kind == RESOURCE_SERVER:
        cognito.create_resource_server(**_pick(props, _SERVER_PROPERTIES))
        return str(props["Identifier"])
    client = cognito.create_user_pool_client(**_pick(props, _CLIENT_PROPERTIES))
    return str(client["UserPoolClient"]["ClientId"])


def _pick(props: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    return {name: props[name] for name in names if name in props}

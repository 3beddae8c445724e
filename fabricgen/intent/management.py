"""The intent's `management` section: how every switch is managed and secured on day 0.

One section for the cluster, overridable per network (`backend.management`, `frontend.management`,
`storage.management`, `oob.management`) and per switch role (`backend.leaf.management`, ...): an
override replaces the sub-sections it sets (`ntp`, `tacacs`, ...) and inherits the rest
(`Management.merged`). `bgp_security` in each routed network says how its BGP sessions are secured.

Keys and password hashes are secret *names* (fabricgen.build.secrets): the values come from the
environment or a secrets file, never from the intent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, Field, WithJsonSchema, create_model, field_validator, model_validator

from fabricgen.basics.models import InputModel
from fabricgen.basics.trust import SAYS, Host, Text, quoted
from fabricgen.basics.units import Address, Network
from fabricgen.build.secrets import SecretName
from fabricgen.nos import registry

MAX_SERVERS = 8  # per AAA group, NTP or syslog: NX-OS and SONiC take a handful
MAX_USERS = 32
MAX_BANNER_LINES = 20
USERNAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")  # Linux (SONiC) and NX-OS alike
# Names SONiC, Linux or NX-OS keep for themselves: a local user of that name would replace theirs.
RESERVED_USERS = {"root", "daemon", "bin", "sys", "nobody", "sshd", "ntp", "redis", "frr", "snmp", "_apt", "lldpd"}


class AaaServers(InputModel):
    """A TACACS+ or RADIUS server group, reached through the management VRF."""

    servers: list[Address] = Field(min_length=1, max_length=MAX_SERVERS, description="server IPv4 addresses, tried in order")
    key: SecretName = Field(description="secret name of the shared key")
    timeout_s: int = Field(5, ge=1, le=60, description="seconds to wait for a server before the next")


class LocalUser(InputModel):
    """A local account: the fallback when no AAA server answers."""

    name: str = Field(
        # [*sorted(...)]: a list display, which mypy types as the list of JSON values json_schema_extra takes
        json_schema_extra={
            "pattern": f"^{USERNAME.pattern}$",
            SAYS: "a lower-case letter or '_', then lower-case letters, digits, '_' and '-', at most 32 characters",
            "not": {"enum": [*sorted(RESERVED_USERS)]},
        },
        description="1-32 lower-case letters, digits, '_' or '-'; not a name the NOS keeps for itself, such as root",
    )
    role: Literal["network-admin", "network-operator"] = Field("network-admin", description="network-admin: full access; network-operator: read-only")
    password_hash: SecretName = Field(description="secret name of the SHA-512 crypt hash ($6$...), never a clear password")

    @field_validator("name")
    @classmethod
    def _username(cls, value: str) -> str:
        if not USERNAME.fullmatch(value):
            raise ValueError(f"user name {value!r} must be 1-32 lower-case letters, digits, '_' or '-', not starting with a digit or '-'")
        if value in RESERVED_USERS:
            raise ValueError(f"user name {value!r} belongs to the NOS; choose another")
        return value


class Ntp(InputModel):
    """Time from NTP servers through the management VRF."""

    servers: list[Host] = Field(min_length=1, max_length=MAX_SERVERS, description="NTP servers: addresses or DNS names")
    key_id: int = Field(1, ge=1, le=65535, description="the authentication key's number, as the servers know it")
    key: SecretName | None = Field(None, description="secret name of the MD5 key; set: NTP authentication on")


class Syslog(InputModel):
    """Log messages to remote syslog servers through the management VRF."""

    servers: list[Host] = Field(min_length=1, max_length=MAX_SERVERS, description="syslog servers: addresses or DNS names")
    severity: Literal["emergencies", "alerts", "critical", "errors", "warnings", "notifications", "informational", "debugging"] = Field(
        "informational", description="the least severe messages sent (this level and the ones above it)"
    )


class SnmpUser(InputModel):
    """An SNMPv3 user, always authPriv."""

    name: str = Field(
        pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,31}$",
        json_schema_extra={SAYS: "a letter, then letters, digits, '_' and '-', at most 32 characters"},
        description="SNMPv3 user name, as the poller knows it",
    )
    auth: Literal["sha", "sha-256"] = Field("sha", description="authentication protocol (HMAC-SHA-1 or HMAC-SHA-256)")
    auth_key: SecretName = Field(description="secret name of the authentication key")
    privacy: Literal["aes-128"] = Field("aes-128", description="privacy (encryption) protocol")
    privacy_key: SecretName = Field(description="secret name of the privacy key")
    access: Literal["read-only"] = Field("read-only", description="monitoring reads; fabricgen writes no SNMP write access")


class Snmp(InputModel):
    """SNMP monitoring: SNMPv3 users (authPriv), trap receivers, optional v2c communities."""

    users: list[SnmpUser] = Field(min_length=1, max_length=8, description="SNMPv3 users")
    trap_hosts: list[Address] = Field([], max_length=MAX_SERVERS, description="addresses that receive SNMPv3 traps")
    communities: list[SecretName] = Field([], max_length=4, description="SNMPv2c read-only communities (secret names): only when a poller cannot do v3")
    location: Text = Field("", description="sysLocation, e.g. the hall and row")
    contact: Text = Field("", description="sysContact, e.g. the NOC's mail address")


class Access(InputModel):
    """Who may reach the switches' management plane, and how."""

    management_networks: list[Network] = Field(min_length=1, max_length=32, description="sources allowed to SSH, NX-API, SNMP and NTP on the switches")
    nxapi: bool = Field(True, description="NX-API over HTTPS in the management VRF (push uses it); false: feature off")
    exec_timeout_min: int = Field(10, ge=1, le=1440, description="idle SSH sessions end after this")
    login_attempts: int = Field(
        3, ge=1, le=10, description="login attempts allowed per session (SONiC authentication retries; NX-OS: not written, the build notes it)"
    )


class PasswordPolicy(InputModel):
    """What a local password must be."""

    min_length: int = Field(12, ge=8, le=127, description="shortest password accepted")
    strength_check: bool = Field(True, description="refuse weak passwords (NX-OS password strength-check)")


class Timezone(InputModel):
    """How the switches show time: NX-OS takes an abbreviation and an offset, SONiC an IANA name."""

    iana: str = Field(
        "Etc/UTC",
        pattern=r"^[A-Za-z_]{1,32}(/[A-Za-z0-9_+-]{1,32}){0,2}$",
        json_schema_extra={SAYS: "an IANA zone name such as Europe/Paris: up to three parts between '/', of letters, digits and _ + -"},
        description="IANA time zone name (SONiC), e.g. Europe/Paris",
    )
    abbreviation: str = Field(
        "UTC", pattern=r"^[A-Z]{3,8}$", json_schema_extra={SAYS: "3 to 8 capital letters, such as CET"}, description="zone abbreviation (NX-OS), e.g. CET"
    )
    utc_offset: str = Field(
        "+00:00",
        pattern=r"^[+-](0\d|1[0-4]):(00|30|45)$",
        json_schema_extra={SAYS: "+ or -, hours 00 to 14, ':', minutes 00, 30 or 45, such as +01:00 or -09:30"},
        description="offset from UTC (NX-OS), e.g. +01:00",
    )


class BootImages(InputModel):
    """The NOS image each switch must run, pinned so a config replace keeps the boot setting."""

    def image(self, nos: str) -> str | None:
        """The image a switch running `nos` must run; None when the intent pins none."""
        return getattr(self, nos, None) if nos in type(self).model_fields else None


def _image_name(pattern: str, example: str, says: str) -> Any:
    """An image name of one NOS (its BOOT_IMAGE): a string its pattern takes, as the schema says."""
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise ValueError(f"{quoted(value)} is not an image name like {example}")
        return value

    return Annotated[str, AfterValidator(check), WithJsonSchema({"type": "string", "pattern": pattern, **({SAYS: says} if says else {})})]


def _with_nos_images(images: type[BootImages]) -> type[BootImages]:
    """The boot section with a field per NOS package, named after it (`boot: {nxos: ..., eos: ...}`),
    each an image name as the package's BOOT_IMAGE describes it; the registry's NOSes when the
    intent's models are defined."""
    fields: dict[str, Any] = {
        name: (
            _image_name(package.BOOT_IMAGE.pattern, package.BOOT_IMAGE.example, package.BOOT_IMAGE.pattern_says) | None,
            Field(None, description=package.BOOT_IMAGE.description),
        )
        for name, package in registry.plugins().items()
    }
    return create_model(images.__name__, __base__=images, __module__=__name__, __doc__=images.__doc__, **fields)


if not TYPE_CHECKING:  # mypy knows the section's methods; pydantic validates a field per NOS
    BootImages = _with_nos_images(BootImages)


class Management(InputModel):
    """Day-0 management and security of every switch. Every sub-section may be overridden per
    network and per role; an override replaces the sub-sections it sets."""

    domain_name: Host | None = Field(None, description="DNS domain of the switches, e.g. ai.example.net")
    dns_servers: list[Address] = Field([], max_length=3, description="DNS resolvers, reached through the management VRF")
    ntp: Ntp | None = Field(None, description="NTP servers (and authentication)")
    syslog: Syslog | None = Field(None, description="remote logging")
    tacacs: AaaServers | None = Field(None, description="TACACS+ servers for login, authorization and accounting")
    radius: AaaServers | None = Field(None, description="RADIUS servers for login and accounting")
    accounting: bool = Field(True, description="command accounting to the AAA group")
    users: list[LocalUser] = Field([], max_length=MAX_USERS, description="local accounts, the fallback when no AAA server answers")
    access: Access | None = Field(None, description="who may reach the management plane (ACLs, SSH, NX-API)")
    snmp: Snmp | None = Field(None, description="SNMP monitoring")
    banner: list[Text] = Field([], max_length=MAX_BANNER_LINES, description="login banner, one entry per line")
    timezone: Timezone = Field(Timezone(), description="how the switches show time")
    lldp: bool = Field(True, description="LLDP on every port (fabricgen verify uses it to check the cabling)")
    password_policy: PasswordPolicy = Field(PasswordPolicy(), description="what a local password must be")
    copp_profile: Literal["strict", "moderate", "lenient", "dense"] = Field("strict", description="NX-OS control-plane policing (CoPP) profile")
    boot: BootImages = Field(BootImages(), description="the NOS image each switch must boot")

    @model_validator(mode="after")
    def _banner_safe(self) -> Management:
        # NX-OS ends a banner at its delimiter character; fabricgen uses ^ (nxos/management.j2)
        for line in self.banner:
            if "^" in line:
                raise ValueError("banner lines may not contain '^' (it delimits the NX-OS banner)")
        return self

    def merged(self, override: Management | None) -> Management:
        """This section with the sub-sections `override` sets replacing its own."""
        if override is None:
            return self
        return self.model_copy(update={name: getattr(override, name) for name in override.model_fields_set})

    @classmethod
    def effective(cls, levels: Iterable[Management | None]) -> Management | None:
        """The outermost level's settings with each inner level's sub-sections over them (cluster,
        network, role); None when no level has a management section."""
        present = [level for level in levels if level is not None]
        if not present:
            return None
        result = present[0]
        for level in present[1:]:
            result = result.merged(level)
        return result

    def secret_names(self, with_ntp_key: bool = True) -> set[str]:
        """The secrets the section names; `with_ntp_key` False: all but the NTP key (a switch whose
        release cannot write it: DeviceConfig.ntp_key)."""
        names = {user.password_hash for user in self.users}
        for group in (self.tacacs, self.radius):
            if group is not None:
                names.add(group.key)
        if with_ntp_key and self.ntp is not None and self.ntp.key is not None:
            names.add(self.ntp.key)
        if self.snmp is not None:
            names.update(self.snmp.communities)
            for user in self.snmp.users:
                names.update((user.auth_key, user.privacy_key))
        return names


class BgpSecurity(InputModel):
    """How a routed network's eBGP sessions are secured. Inbound and outbound prefix policy on
    every session is always written (RFC 8212); these settings add authentication, GTSM and the
    maximum-prefix margin."""

    password: SecretName | None = Field(None, description="secret name of the TCP-MD5 key of every session")
    tier_passwords: dict[Literal["leaf-spine", "spine-core"], SecretName] = Field({}, description="a key per tier of links, where it differs from `password`")
    tcp_ao: bool = Field(False, description="TCP-AO (RFC 5925) instead of MD5: NX-OS only")
    gtsm: bool = Field(True, description="TTL security (RFC 5082) on the directly connected sessions")
    maximum_prefix_margin_percent: int = Field(100, ge=10, le=1000, description="above the most prefixes the plan lets a peer send")
    maximum_prefix_restart_min: int | None = Field(
        5, ge=1, le=1440, description="a session over its maximum comes back after this; null: warn only, never tear down"
    )

    def key_for(self, tier: str) -> str | None:
        return self.tier_passwords.get(tier, self.password)  # type: ignore[call-overload]

    def secret_names(self) -> set[str]:
        return ({self.password} if self.password else set()) | set(self.tier_passwords.values())

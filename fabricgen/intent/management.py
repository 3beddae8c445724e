"""The intent's `management` section: how every switch is managed and secured on day 0.

One section for the cluster, overridable per network (`backend.management`, `frontend.management`,
`storage.management`, `oob.management`) and per switch role (`backend.leaf.management`, ...): an
override replaces the sub-sections it sets (`ntp`, `tacacs`, ...) and inherits the rest
(`Management.merged`). `bgp_security` in each routed network says how its BGP sessions are secured.

Keys and password hashes are secret *names* (fabricgen.secrets): the values come from the
environment or a secrets file, never from the intent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from fabricgen.secrets import SecretName
from fabricgen.trust import Host, Text, Token
from fabricgen.units import Address, Network

MAX_SERVERS = 8  # per AAA group, NTP or syslog: NX-OS and SONiC take a handful
MAX_USERS = 32
MAX_BANNER_LINES = 20
USERNAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")  # Linux (SONiC) and NX-OS alike
# Names SONiC, Linux or NX-OS keep for themselves: a local user of that name would replace theirs.
RESERVED_USERS = {"root", "daemon", "bin", "sys", "nobody", "sshd", "ntp", "redis", "frr", "snmp", "_apt", "lldpd"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class AaaServers(_Strict):
    """A TACACS+ or RADIUS server group, reached through the management VRF."""

    servers: list[Address] = Field(min_length=1, max_length=MAX_SERVERS)
    key: SecretName = Field(description="secret name of the shared key")
    timeout_s: int = Field(5, ge=1, le=60)


class LocalUser(_Strict):
    """A local account: the fallback when no AAA server answers."""

    name: str
    role: Literal["network-admin", "network-operator"] = "network-admin"
    password_hash: SecretName = Field(description="secret name of the SHA-512 crypt hash ($6$...), never a clear password")

    @field_validator("name")
    @classmethod
    def _username(cls, value: str) -> str:
        if not USERNAME.fullmatch(value):
            raise ValueError(f"user name {value!r} must be 1-32 lower-case letters, digits, '_' or '-', not starting with a digit or '-'")
        if value in RESERVED_USERS:
            raise ValueError(f"user name {value!r} belongs to the NOS; choose another")
        return value


class Ntp(_Strict):
    servers: list[Host] = Field(min_length=1, max_length=MAX_SERVERS)
    key_id: int = Field(1, ge=1, le=65535)
    key: SecretName | None = Field(None, description="secret name of the MD5 key; set: NTP authentication on")


class Syslog(_Strict):
    servers: list[Host] = Field(min_length=1, max_length=MAX_SERVERS)
    severity: Literal["emergencies", "alerts", "critical", "errors", "warnings", "notifications", "informational", "debugging"] = "informational"


class SnmpUser(_Strict):
    """An SNMPv3 user, always authPriv."""

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")
    auth: Literal["sha", "sha-256"] = "sha"
    auth_key: SecretName
    privacy: Literal["aes-128"] = "aes-128"
    privacy_key: SecretName
    access: Literal["read-only"] = Field("read-only", description="monitoring reads; fabricgen writes no SNMP write access")


class Snmp(_Strict):
    users: list[SnmpUser] = Field(min_length=1, max_length=8)
    trap_hosts: list[Address] = Field([], max_length=MAX_SERVERS)
    communities: list[SecretName] = Field(
        [], max_length=4, description="SNMPv2c read-only communities (secret names): only when a poller cannot do v3"
    )
    location: Text = ""
    contact: Text = ""


class Access(_Strict):
    """Who may reach the switches' management plane, and how."""

    management_networks: list[Network] = Field(
        min_length=1, max_length=32, description="sources allowed to SSH, NX-API, SNMP and NTP on the switches"
    )
    nxapi: bool = Field(True, description="NX-API over HTTPS in the management VRF (push uses it); false: feature off")
    exec_timeout_min: int = Field(10, ge=1, le=1440, description="idle SSH sessions end after this")
    login_attempts: int = Field(3, ge=1, le=10)


class PasswordPolicy(_Strict):
    min_length: int = Field(12, ge=8, le=127)
    strength_check: bool = True


class Timezone(_Strict):
    """How the switches show time: NX-OS takes an abbreviation and an offset, SONiC an IANA name."""

    iana: str = Field("Etc/UTC", pattern=r"^[A-Za-z_]{1,32}(/[A-Za-z0-9_+-]{1,32}){0,2}$")
    abbreviation: str = Field("UTC", pattern=r"^[A-Z]{3,8}$")
    utc_offset: str = Field("+00:00", pattern=r"^[+-](0\d|1[0-4]):(00|30|45)$")


class BootImages(_Strict):
    """The NOS image each switch must run, pinned so a config replace keeps the boot setting."""

    nxos: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.bin$", description="image file on bootflash:")
    sonic: Token | None = Field(None, description="the image name `sonic-installer list` shows, e.g. SONiC-OS-202405.0")


class Management(_Strict):
    """Day-0 management and security of every switch. Every sub-section may be overridden per
    network and per role; an override replaces the sub-sections it sets."""

    domain_name: Host | None = None
    dns_servers: list[Address] = Field([], max_length=3)
    ntp: Ntp | None = None
    syslog: Syslog | None = None
    tacacs: AaaServers | None = None
    radius: AaaServers | None = None
    accounting: bool = Field(True, description="command accounting to the AAA group")
    users: list[LocalUser] = Field([], max_length=MAX_USERS)
    access: Access | None = None
    snmp: Snmp | None = None
    banner: list[Text] = Field([], max_length=MAX_BANNER_LINES, description="login banner, one entry per line")
    timezone: Timezone = Timezone()
    lldp: bool = True
    password_policy: PasswordPolicy = PasswordPolicy()
    copp_profile: Literal["strict", "moderate", "lenient", "dense"] = Field("strict", description="NX-OS CoPP profile")
    boot: BootImages = BootImages()

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

    def secret_names(self) -> set[str]:
        names = {user.password_hash for user in self.users}
        for group in (self.tacacs, self.radius):
            if group is not None:
                names.add(group.key)
        if self.ntp is not None and self.ntp.key is not None:
            names.add(self.ntp.key)
        if self.snmp is not None:
            names.update(self.snmp.communities)
            for user in self.snmp.users:
                names.update((user.auth_key, user.privacy_key))
        return names


class BgpSecurity(_Strict):
    """How a routed network's eBGP sessions are secured. Inbound and outbound prefix policy on
    every session is always written (RFC 8212); these settings add authentication, GTSM and the
    maximum-prefix margin."""

    password: SecretName | None = Field(None, description="secret name of the TCP-MD5 key of every session")
    tier_passwords: dict[Literal["leaf-spine", "spine-core"], SecretName] = Field(
        {}, description="a key per tier of links, where it differs from `password`"
    )
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

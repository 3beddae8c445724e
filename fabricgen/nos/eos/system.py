"""The EOS management baseline of a switch: the text of its intent `management` section (users
and AAA, SSH, the management ACL, NTP, logging, SNMP, the boot image, eAPI, services in the
management VRF), one block of `configs/<device>.cfg` after `hostname`.

This module writes none of it yet: `system_text` answers "" for every switch, and the adapter's
`unrendered` names the section's settings in the build notes.
"""

from __future__ import annotations

from fabricgen.compiler.device_config import DeviceConfig


def system_text(config: DeviceConfig) -> str:
    """The switch's management baseline as EOS CLI lines ("" when there is none to write)."""
    return ""

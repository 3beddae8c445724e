"""What verify reports: one `Finding` per thing a device does differently from the build."""

from __future__ import annotations

from dataclasses import dataclass, field

ERROR, WARNING, INFO = "error", "warning", "info"


@dataclass(frozen=True)
class Finding:
    check: str  # cabling, ports, routing, lossless, drift, reach
    severity: str  # error, warning, info
    device: str
    port: str
    message: str
    planned: str = ""
    found: str = ""
    detail: dict = field(default_factory=dict, hash=False, compare=False)

    def as_dict(self) -> dict:
        return {
            "check": self.check,
            "severity": self.severity,
            "device": self.device,
            "port": self.port,
            "message": self.message,
            "planned": self.planned,
            "found": self.found,
            "detail": self.detail,
        }

"""The ports of a NOS's lab image, and the map from a switch's cabled build ports onto them.

A NOS image that names its ports after a fixed hardware SKU (SONiC-VS: Force10-S6000, 32 ports)
holds only so many, under its own names and lanes. `lab_image(path, key)` reads such an image's
facts from its NOS package's data file (`fabricgen/nos/sonic/lab_images.yaml`), validated here;
`image_port_map(device, ports, image)` pairs a switch's cabled ports, in natural order, with the
image's first ports, or raises `PortsBeyondImage` naming the switch, its port count and the
image's, which the export turns into an FRR twin or a refusal (fabricgen/export/containerlab.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import Field, StringConstraints, model_validator

from fabricgen.basics.models import InputModel
from fabricgen.basics.sorting import natural_key

MAX_IMAGE_PORTS = 1024
PortName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9]{0,31}$")]  # a SONiC port name (Ethernet124)
Wire = Annotated[str, StringConstraints(pattern=r"^eth[1-9][0-9]{0,3}$")]  # the container's interface a link names
Lanes = Annotated[str, StringConstraints(pattern=r"^[0-9]{1,4}(,[0-9]{1,4}){0,15}$")]
ContainerPath = Annotated[str, StringConstraints(pattern=r"^(/[A-Za-z0-9][A-Za-z0-9._-]{0,63}){1,8}$")]
ImageReference = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}$")]


class ImagePort(InputModel):
    """One front-panel port of the image, as its port_config.ini and lanemap.ini give it."""

    wire: Wire  # the container's interface behind it (lanemap.ini: eth<i>)
    name: PortName
    lanes: Lanes
    alias: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9/._-]{0,63}$")]
    index: int = Field(ge=0, le=MAX_IMAGE_PORTS)
    speed: int = Field(ge=1_000, le=1_600_000, description="Mb/s, as config_db's PORT speed")


class LabImage(InputModel):
    """A NOS's lab image: what it is, the config path it boots from, its ports in wire order."""

    image: ImageReference
    kind: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]  # containerlab's kind
    platform: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
    hwsku: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
    config_db: ContainerPath
    source: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    ports: list[ImagePort] = Field(min_length=1, max_length=MAX_IMAGE_PORTS)

    @model_validator(mode="after")
    def _wires_in_order(self) -> LabImage:
        # eth1, eth2, ... in order, every name once: the map below pairs by position
        wires = [port.wire for port in self.ports]
        if wires != [f"eth{number}" for number in range(1, len(self.ports) + 1)]:
            raise ValueError("the ports' wires must be eth1, eth2, ... in order")
        if len({port.name for port in self.ports}) != len(self.ports):
            raise ValueError("a port name is listed twice")
        return self


class PortsBeyondImage(Exception):
    """A switch with more cabled ports than its NOS's lab image holds."""

    def __init__(self, device: str, ports: int, image: LabImage) -> None:
        self.device, self.ports, self.image = device, ports, image
        super().__init__(f"{device} has {ports} cabled ports; {image.image} ({image.hwsku}) holds {len(image.ports)}")


@cache
def lab_image(path: Path, key: str) -> LabImage:
    """The image `key` of a NOS package's lab image file (shipped with fabricgen, validated)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return LabImage.model_validate(data[key])


def image_port_map(device: str, ports: Iterable[str], image: LabImage) -> dict[str, ImagePort]:
    """Build port -> the image's port that stands for it: the switch's cabled ports in natural
    order on the image's ports in wire order (eth1, eth2, ...). PortsBeyondImage when the image
    holds fewer."""
    ordered = sorted(set(ports), key=natural_key)
    if len(ordered) > len(image.ports):
        raise PortsBeyondImage(device, len(ordered), image)
    return dict(zip(ordered, image.ports, strict=False))


def rename_ports(text: str, names: dict[str, str]) -> str:
    """`text` with every whole-word occurrence of a name in `names` replaced by its new name, all at
    once (Ethernet8 -> Ethernet4 and Ethernet4 -> Ethernet0 do not chain)."""
    if not names:
        return text
    pattern = re.compile(r"(?<![A-Za-z0-9/._:-])(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")(?![A-Za-z0-9/._:-])")
    return pattern.sub(lambda match: names[match.group(1)], text)

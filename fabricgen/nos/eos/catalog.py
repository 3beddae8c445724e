"""EOS's section of a catalog switch entry (`eos: {tx_queue: uc-tx-queue}`): what EOS's CLI needs
of a switch model beyond its ports. The package's CATALOG_PLATFORM
(fabricgen.nos.interface.CatalogPlatform); no catalog module is imported here (the registry loads
this package while the catalog's models are being defined).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from fabricgen.basics.trust import Text
from fabricgen.nos.interface import CatalogPlatform

if TYPE_CHECKING:
    from fabricgen.catalog.model import SwitchModel


class EosPlatform(CatalogPlatform):
    """What EOS's CLI needs of a switch model beyond its ports: the transmit queue sub-mode its
    chip exposes (Arista's QoS chapter is per chip family: Broadcom XGS switches take their
    queue settings under `uc-tx-queue`, Jericho-based ones under `tx-queue`)."""

    tx_queue: Literal["tx-queue", "uc-tx-queue"] = Field("tx-queue", description="the interface / qos profile sub-mode of a transmit queue")
    source: Text | None = Field(None, description="where this is written down")


def platform_of(model: SwitchModel) -> EosPlatform:
    """The EOS section of a catalog switch entry (`eos:`)."""
    return model.platform("eos", EosPlatform)

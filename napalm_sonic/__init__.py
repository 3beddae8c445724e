"""NAPALM's name for fabricgen's SONiC driver: `napalm.get_network_driver("sonic")` imports
`napalm_sonic` and takes the first NetworkDriver subclass it finds here."""

from fabricgen.nos.sonic.driver import SonicDriver

__all__ = ["SonicDriver"]

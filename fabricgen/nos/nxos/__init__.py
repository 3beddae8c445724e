"""Cisco NX-OS (Nexus 9000, the nxos64-cs image)."""

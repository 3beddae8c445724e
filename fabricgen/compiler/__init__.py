"""The compiler: an intent and a catalog in, a validated fabric and its device configs out.

The stages in the order data flows (pipeline.py runs them): `design/` sizes the fabric and draws
its graph (racks and media included), `addressing.py` gives addresses and ASNs, `checks.py` holds
the graph and the plans to their invariants, `device_config.py` (with `qos.py` and, for servers,
`host_config.py`) is the NOS-neutral contract each NOS package renders, and `config_checks.py`
checks those configs hop by hop. `compiled.py` is what every stage after the design reads.
"""

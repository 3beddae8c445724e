"""The NOSes fabricgen writes for, one package each: its adapter (device config -> files), its
templates, its releases and features, its push driver, verify readings and export names.
"""

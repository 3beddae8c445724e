"""Fabric analysis."""

"""Pushing a build to switches: NAPALM drivers, inventory and rollout."""

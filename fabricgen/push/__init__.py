"""Rolling a build out to the switches with NAPALM: inventory, credentials, staged rollout, and a SONiC driver."""

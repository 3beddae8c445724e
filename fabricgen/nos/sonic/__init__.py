"""SONiC (community and vendor builds): config_db.json and frr.conf."""

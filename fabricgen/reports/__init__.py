"""Reports about the compiled fabric, each a plain function of it returning file contents."""

from fabricgen.reports.bom import bom_rows, render_bom
from fabricgen.reports.cabling import render_cabling
from fabricgen.reports.ip_plan import render_ip_plan
from fabricgen.reports.manifest import render_manifest
from fabricgen.reports.summary import render_summary
from fabricgen.reports.topology import render_topology

__all__ = ["bom_rows", "render_bom", "render_cabling", "render_ip_plan", "render_manifest", "render_summary", "render_topology"]

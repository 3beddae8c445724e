"""`fabricgen export FORMAT BUILD_DIR [-o DIR]`: a verified build as the files other tools read.

One module per format, each a plain function from a verified build (`source.open_build`) to
{relative path: text}; `files.write_export` writes them all or nothing:

    render_containerlab(build, network, images)  <lab>.clab.yml + frr/<switch>/, sonic/<switch>/, ceos/<switch>/
    render_batfish(build)                         configs/, sonic_configs/, batfish/layer1_topology.json
    render_nornir(build)                          hosts.yaml, groups.yaml, defaults.yaml
    render_ansible(build)                         inventory.yaml
    render_netbox(build)                          NetBox bulk-import CSV files (and push_plan for --push)
    render_diagram(build)                         Graphviz, D2 and Mermaid per network, rack elevations (SVG)
"""

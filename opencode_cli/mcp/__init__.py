"""MCP servers: config, connections, tools and resource tools."""

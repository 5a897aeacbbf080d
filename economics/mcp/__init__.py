"""The MCP server (``python -m economics mcp``): the HTTP API's computations as Model Context Protocol tools, over
stdio or streamable HTTP, for AI assistants. Its tools' input schemas are generated from the scenario schema
(:mod:`economics.mcp.schemas`); each call runs in the HTTP API's worker pools, with its time limits and errors.
"""

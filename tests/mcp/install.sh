#!/usr/bin/env bash
# Installs the MCP client the tests use (package.json: the official SDK at a
# pinned version, package-lock.json: everything it pulls in) into
# tests/mcp/node_modules, from the npm registry, unless it is there already.
# Never fails the build: when npm or the registry is missing it says why
# and tests/integration/test_mcp.sh skips.
cd "$(dirname "$0")" || exit 0
want=$(sed -n 's/.*"@modelcontextprotocol\/sdk": *"\([^"]*\)".*/\1/p' package.json)
have=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' node_modules/@modelcontextprotocol/sdk/package.json 2>/dev/null | head -n 1)
if [ -n "$want" ] && [ "$have" = "$want" ]; then
	echo "mcp-client: @modelcontextprotocol/sdk $have is installed (tests/mcp/node_modules)"
	exit 0
fi
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	echo "mcp-client: node and npm are needed for the MCP client test (apt-get install nodejs npm); it will be skipped"
	exit 0
fi
echo "mcp-client: installing @modelcontextprotocol/sdk $want into tests/mcp/node_modules"
if ! timeout 300 npm ci --no-audit --no-fund --loglevel=error >npm.log 2>&1; then
	echo "mcp-client: npm ci failed (the test will be skipped): $(grep -m1 -iE 'err|fail' npm.log)"
	exit 0
fi
rm -f npm.log
echo "mcp-client: installed"

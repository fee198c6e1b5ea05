#!/bin/sh
# npm start's stand-in for workerd while the configuration is assembled (scripts/lib/worker-prepare.mjs): Miniflare
# writes the binary workerd configuration to our stdin; keep it for the real workerd and exit.
exec cat > "$WORKERD_CONFIG_CAPTURE"

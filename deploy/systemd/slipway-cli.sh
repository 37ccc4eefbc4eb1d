#!/bin/sh
# /usr/local/bin/slipway (deploy/install-debian.sh installs it): the `slipway` command with the
# settings of the installed service, as root: `sudo slipway token create --email ... --name ...`.
set -e
set -a
. /etc/slipway/slipway.env
set +a
export SLIPWAY_DATA_DIR=/var/lib/slipway
cd /opt/slipway
exec /usr/bin/node /opt/slipway/bin/slipway.js "$@"

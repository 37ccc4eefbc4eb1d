#!/usr/bin/env bash
# Installs Slipway as a systemd service on Debian 12 or 13, from the checkout this script is in:
# the packages the sandbox needs, the kernel modules it uses, an unprivileged user for tenant code,
# the code in /opt/slipway, the units in /etc/systemd/system, the settings in
# /etc/slipway/slipway.env (made once, never overwritten), then starts the service and waits for it.
# docs/operating.md#install-as-a-service walks through it; test/deploy/install-debian.test.ts runs it.
#
#   sudo deploy/install-debian.sh                      everything in one process (slipway.service)
#   sudo deploy/install-debian.sh --roles api,edge     one unit per role instead
#   deploy/install-debian.sh --dry-run                 print what it would do, change nothing
#   deploy/install-debian.sh --root /tmp/r             write the files under /tmp/r; print the
#                                                      commands that change the running system
#   --no-start                                         install and enable, do not start
set -euo pipefail

SOURCE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=""
DRY_RUN=0
START=1
ROLES="all"

usage() { sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "install-debian: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --root) [ $# -ge 2 ] || die "--root needs a directory"; ROOT=$(realpath -m "$2"); shift ;;
    --roles) [ $# -ge 2 ] || die "--roles needs a list such as api,worker,edge"; ROLES=$2; shift ;;
    --no-start) START=0 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift
done

UNITS=()
if [ "$ROLES" = "all" ]; then
  UNITS=(slipway.service)
else
  IFS=',' read -r -a wanted <<<"$ROLES"
  for role in "${wanted[@]}"; do
    case "$role" in
      api | worker | edge | bot) UNITS+=("slipway-$role.service") ;;
      *) die "--roles: \"$role\" is not a role; expected all, or a comma-separated list of api, worker, edge, bot" ;;
    esac
  done
fi

# Three kinds of step: `say` explains; `system` changes the running machine (printed, not run, in
# --dry-run and --root); `files` writes under $ROOT (printed, not run, in --dry-run).
say() { echo "==> $*"; }
system() {
  if [ "$DRY_RUN" = 1 ] || [ -n "$ROOT" ]; then echo "+ $*"; else "$@"; fi
}
files() {
  if [ "$DRY_RUN" = 1 ]; then echo "+ $*"; else "$@"; fi
}

if [ "$DRY_RUN" = 0 ] && [ -z "$ROOT" ]; then
  [ "$(id -u)" = 0 ] || die "run it as root (sudo $0), or with --dry-run to see what it would do"
  [ -f /etc/debian_version ] || die "this script is for Debian (and Debian-based systems with apt-get)"
fi

say "Packages: the sandbox (bubblewrap, passt, nftables), its disk limit (e2fsprogs, mount), git, Node.js"
system apt-get update -qq
system env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  ca-certificates curl git bubblewrap passt nftables e2fsprogs mount util-linux python3 make g++
NODE_OK='const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'
if command -v node >/dev/null 2>&1 && node -e "$NODE_OK"; then
  say "Node.js $(node --version) is recent enough (20.19 or later)"
elif apt-cache policy nodejs 2>/dev/null | grep -Eq 'Candidate: (2[1-9]|20\.(19|[2-9][0-9]))'; then
  system env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm
elif [ "$DRY_RUN" = 1 ] || [ -n "$ROOT" ]; then
  echo "+ (Node.js 20.19 or later is needed: Debian 13 has it; on Debian 12 see docs/operating.md)"
else
  die "Node.js 20.19 or later is needed and this Debian offers none: install it (docs/operating.md#install-as-a-service) and run this again"
fi

say "Kernel: loop devices (the disk limit), nftables, tun (pasta), now and at every boot"
system modprobe -a loop nf_tables tun
files mkdir -p "$ROOT/etc/modules-load.d"
if [ "$DRY_RUN" = 1 ]; then
  echo "+ write $ROOT/etc/modules-load.d/slipway.conf"
else
  printf 'loop\nnf_tables\ntun\n' >"$ROOT/etc/modules-load.d/slipway.conf"
fi
# pasta opens /dev/net/tun as the sandbox's user; Debian's udev makes it 0666, some images do not.
system chmod 0666 /dev/net/tun

say "User: slipway-sandbox, unprivileged, owns nothing: tenant code runs as it"
if [ -n "$ROOT" ] && [ "$DRY_RUN" = 0 ] && [ -f "$ROOT/etc/passwd" ]; then
  grep -q '^slipway-sandbox:' "$ROOT/etc/passwd" ||
    useradd --prefix "$ROOT" --system --user-group --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin slipway-sandbox
elif [ -n "$ROOT" ] || [ "$DRY_RUN" = 1 ]; then
  echo "+ useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin slipway-sandbox"
elif ! getent passwd slipway-sandbox >/dev/null; then
  useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin slipway-sandbox
fi

say "Code: $SOURCE -> $ROOT/opt/slipway"
# Staged next to the running copy, its dependencies installed there, then swapped in: a running
# service keeps reading a complete tree until it is restarted below.
files rm -rf "$ROOT/opt/slipway.new" "$ROOT/opt/slipway.old"
files mkdir -p "$ROOT/opt/slipway.new"
# Everything of the checkout but what is this machine's own (dependencies, data, git history).
files tar -C "$SOURCE" --exclude=./node_modules --exclude=./.git --exclude=./.slipway -cf "$ROOT/opt/slipway.tar" .
files tar -C "$ROOT/opt/slipway.new" -xf "$ROOT/opt/slipway.tar"
files rm -f "$ROOT/opt/slipway.tar"
system sh -c "cd /opt/slipway.new && npm ci --omit=dev --no-audit --no-fund"
if [ -d "$ROOT/opt/slipway" ]; then files mv "$ROOT/opt/slipway" "$ROOT/opt/slipway.old"; fi
files mv "$ROOT/opt/slipway.new" "$ROOT/opt/slipway"
files rm -rf "$ROOT/opt/slipway.old"

say "Units: all five -> $ROOT/etc/systemd/system (${UNITS[*]} enabled below)"
files mkdir -p "$ROOT/etc/systemd/system"
for unit in slipway.service slipway-api.service slipway-worker.service slipway-edge.service slipway-bot.service; do
  files install -m 0644 "$SOURCE/deploy/systemd/$unit" "$ROOT/etc/systemd/system/$unit"
done

ENV_FILE="$ROOT/etc/slipway/slipway.env"
say "Settings: $ENV_FILE"
if [ -f "$ENV_FILE" ]; then
  echo "    kept as it is (delete it to start from the example again)"
elif [ "$DRY_RUN" = 1 ]; then
  echo "+ write $ENV_FILE (mode 0600) from deploy/systemd/slipway.env, with a new encryption key and metrics token"
else
  mkdir -p "$ROOT/etc/slipway"
  chmod 0700 "$ROOT/etc/slipway"
  key=$(head -c 32 /dev/urandom | base64)
  token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  ids=$( (getent passwd slipway-sandbox || grep '^slipway-sandbox:' "$ROOT/etc/passwd" 2>/dev/null || true) | awk -F: 'NR == 1 { print $3 ":" $4 }')
  (umask 077 && sed -e "s|^SLIPWAY_ENCRYPTION_KEY=.*|SLIPWAY_ENCRYPTION_KEY=$key|" \
    -e "s|^SLIPWAY_METRICS_TOKEN=.*|SLIPWAY_METRICS_TOKEN=$token|" \
    -e "s|^SLIPWAY_SANDBOX_USER=.*|SLIPWAY_SANDBOX_USER=${ids:-65534:65534}|" \
    "$SOURCE/deploy/systemd/slipway.env" >"$ENV_FILE")
  echo "    new encryption key, metrics token and sandbox user written; set your names in it"
fi

say "Data: $ROOT/var/lib/slipway (systemd's StateDirectory=)"
files mkdir -p "$ROOT/var/lib/slipway"
files chmod 0711 "$ROOT/var/lib/slipway"

say "Command: $ROOT/usr/local/bin/slipway (the CLI with the service's settings: sudo slipway token create ...)"
files mkdir -p "$ROOT/usr/local/bin"
files install -m 0755 "$SOURCE/deploy/systemd/slipway-cli.sh" "$ROOT/usr/local/bin/slipway"

if [ "$START" = 1 ]; then say "Service: enable and start ${UNITS[*]}"; else say "Service: enable ${UNITS[*]}"; fi
system systemctl daemon-reload
if [ "$START" = 1 ]; then
  system systemctl enable "${UNITS[@]}"
  # Started, or restarted on the new code when it already ran.
  system systemctl restart "${UNITS[@]}"
else
  system systemctl enable "${UNITS[@]}"
fi

if [ "$START" = 1 ] && [ "$DRY_RUN" = 0 ] && [ -z "$ROOT" ] && [[ " ${UNITS[*]} " =~ \ slipway(-api)?\.service\  ]]; then
  say "Waiting for http://127.0.0.1:3000/readyz"
  for _ in $(seq 1 60); do
    if curl -fsS http://127.0.0.1:3000/readyz >/dev/null 2>&1; then
      say "Slipway is running. Next: TLS in front (docs/operating.md#nginx), then a token:"
      echo "    sudo slipway token create --email you@example.com --name laptop"
      exit 0
    fi
    sleep 1
  done
  die "the API did not answer within 60 s: see journalctl -u ${UNITS[0]}"
fi
say "Done"

#!/usr/bin/env sh
# Make sure the browser tests have Debian's Chromium (never `playwright install`).
# Installs it with apt-get when running as root; otherwise prints one line saying how.
CHROMIUM="${CONCIERGE_CHROMIUM:-/usr/bin/chromium}"
[ "${CONCIERGE_SKIP_BROWSER:-}" = "1" ] && exit 0
[ -x "$CHROMIUM" ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Chromium not found at $CHROMIUM: installing Debian's chromium with apt-get (browser tests need it)"
  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; then
    [ -x "$CHROMIUM" ] && exit 0
  fi
fi
echo "Chromium not found at $CHROMIUM: run \`sudo apt-get install -y chromium\` (or set CONCIERGE_CHROMIUM=/path/to/chromium, or CONCIERGE_SKIP_BROWSER=1 to skip the browser tests)." >&2
exit 0

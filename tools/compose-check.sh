#!/usr/bin/env bash
# `npm run check:compose`: validates docker-compose.yml and the Dockerfile without Docker, with the
# libraries Docker uses (tools/compose-check/main.go). The tool is built once with Go into the
# binaries' cache. Compose is loaded twice: with .env.example's empty secrets (it must refuse, naming
# them) and with every empty value filled in (it must load).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:$HOME/go/bin"
bin="${PLATFORM_BIN_DIR:-$HOME/.cache/loyalty-platform/bin}/compose-check"
src=tools/compose-check
if [ ! -x "$bin" ] || [ -n "$(find "$src" -newer "$bin" -type f | head -1)" ]; then
  mkdir -p "$(dirname "$bin")"
  (cd "$src" && go build -o "$bin" .)
fi
refused="$("$bin" docker-compose.yml .env.example Dockerfile 2>&1 || true)"
# every variable compose requires (${NAME:?…}) that .env.example leaves empty
empty="$(sed -nE 's/^([A-Z0-9_]+)=$/\1/p' .env.example)"
required="$(grep -oE '\$\{[A-Z0-9_]+:\?' docker-compose.yml | sed -E 's/^\$\{([A-Z0-9_]+):\?$/\1/' | sort -u)"
secrets="$(comm -12 <(sort -u <<<"$empty") <(sort -u <<<"$required"))"
[ -n "$secrets" ] || { echo "compose-check: .env.example leaves no required secret empty" >&2; exit 1; }
for secret in $secrets; do
  if ! grep -q "required variable $secret is missing" <<<"$refused"; then
    echo "compose-check: with .env.example's empty secrets compose must refuse, naming $secret:" >&2
    echo "$refused" >&2
    exit 1
  fi
done
filled="$(mktemp)"
trap 'rm -f "$filled"' EXIT
sed -E 's/^([A-Z0-9_]+)=$/\1=check-value-0123/' .env.example > "$filled"
"$bin" docker-compose.yml "$filled" Dockerfile

#!/bin/sh
# The container's entry point (docker/Dockerfile, docs/container.md).
#   (no arguments) | serve [OPTIONS] | OPTIONS   threeds-harness serve with the container's configuration
#   COMMAND ...                                  any other threeds-harness command: simulate, pki export, spec, scenarios
# Environment:
#   THREEDS_HARNESS_CONFIG          the configuration file (default /harness/config/harness.yaml)
#   THREEDS_HARNESS_CHALLENGE_URL   accessControlServer.challengeURL, the acsURL SDKs post CReqs to; set it
#                                   when clients reach the harness by another name than localhost, e.g.
#                                   http://harness:8080/acs/challenge on a CI network (docs/ci.md)
#   THREEDS_HARNESS_TLS_NAMES       tls.names, comma-separated: names the TLS server certificate must carry (e.g.
#                                   harness on a CI network); serve issues it anew under the committed TLS root
#   THREEDS_HARNESS_ADMIN_TOKEN     read by threeds-harness itself: every /admin path asks for this bearer token
set -eu

say() { echo "threeds-harness-entrypoint: $*" >&2; }

if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then
    set -- serve "$@"
fi
if [ "$1" != serve ]; then
    exec threeds-harness "$@"
fi
shift

for argument in "$@"; do
    case "$argument" in
        --config | --config=*)
            # The caller chose the file: it is used as it is.
            if [ -n "${THREEDS_HARNESS_CHALLENGE_URL:-}" ]; then
                say "THREEDS_HARNESS_CHALLENGE_URL is not applied to a file given with --config: set accessControlServer.challengeURL in it, or give the file as THREEDS_HARNESS_CONFIG"
                exit 2
            fi
            exec threeds-harness serve "$@"
            ;;
    esac
done

config="${THREEDS_HARNESS_CONFIG:-/harness/config/harness.yaml}"
if [ ! -r "$config" ]; then
    say "cannot read the configuration file $config (THREEDS_HARNESS_CONFIG)"
    exit 2
fi

# add_section VARIABLE SECTION KEY YAML VALUE: the file as given plus `SECTION:\n  KEY: YAML`, in a file of
# this run (the image's files are read-only to the harness user); refused when the file has SECTION.
add_section() {
    if grep -q "^$2:" "$config"; then
        say "$1: $config has a $2 section already; set $3 there instead"
        exit 2
    fi
    effective="$(mktemp "${TMPDIR:-/tmp}/threeds-harness-config.XXXXXX")"
    { cat "$config"; printf '\n%s:\n  %s: %s\n' "$2" "$3" "$4"; } > "$effective"
    say "$2.$3: $5 ($1)"
    config="$effective"
}

challenge="${THREEDS_HARNESS_CHALLENGE_URL:-}"
if [ -n "$challenge" ]; then
    case "$challenge" in
        http://?* | https://?*) ;;
        *)
            say "THREEDS_HARNESS_CHALLENGE_URL: \"$challenge\" is not an http:// or https:// URL"
            exit 2
            ;;
    esac
    add_section THREEDS_HARNESS_CHALLENGE_URL accessControlServer challengeURL "'$(printf '%s' "$challenge" | sed "s/'/''/g")'" "$challenge"
fi

names="${THREEDS_HARNESS_TLS_NAMES:-}"
if [ -n "$names" ]; then
    case "$names" in
        *[!A-Za-z0-9.:,-]*)
            say "THREEDS_HARNESS_TLS_NAMES: \"$names\" is not a comma-separated list of DNS names and IP addresses"
            exit 2
            ;;
    esac
    add_section THREEDS_HARNESS_TLS_NAMES tls names "[\"$(printf '%s' "$names" | sed 's/,/", "/g')\"]" "$names"
fi

if [ -z "${THREEDS_HARNESS_ADMIN_TOKEN:-}" ] && grep -Eq '^[[:space:]]*openOnNetwork:[[:space:]]*true' "$config"; then
    say "/admin is open to every client that reaches this container (admin.openOnNetwork); set THREEDS_HARNESS_ADMIN_TOKEN to require a token"
fi

exec threeds-harness serve --config "$config" "$@"

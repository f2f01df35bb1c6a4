#!/bin/sh
# Entry point of the pgcloud image (deploy/Dockerfile).
#
# With no arguments it starts the app named by APP, a folder under apps/ with a compiled
# dist/main.js (api-gateway, auth-service, project-service, database-provisioner,
# backup-service, pitr-worker, notification-service). With arguments it runs them
# instead, for an operator's command in the same image and settings:
#
#   docker compose run --rm auth-service node apps/auth-service/dist/admin.js set-tier alice pro
set -eu

ROOT=/app

if [ "$#" -gt 0 ]; then
  exec "$@"
fi

# The apps this image can run, separated by spaces.
available() {
  names=''
  for main in "$ROOT"/apps/*/dist/main.js; do
    [ -f "$main" ] || continue
    app=${main#"$ROOT"/apps/}
    names="$names ${app%%/*}"
  done
  echo "${names# }"
}

APP=${APP:-}
case "$APP" in
  '')
    echo "pgcloud: APP is not set; set it to the app to run: $(available)" >&2
    exit 64
    ;;
  */* | .*)
    echo "pgcloud: APP='$APP' is not an app name; this image runs: $(available)" >&2
    exit 64
    ;;
esac
if [ ! -f "$ROOT/apps/$APP/dist/main.js" ]; then
  echo "pgcloud: unknown APP '$APP'; this image runs: $(available)" >&2
  exit 64
fi

exec node "$ROOT/apps/$APP/dist/main.js"

#!/bin/sh
# One-shot of docker compose (service minio-init, the minio/mc image): the platform's own MinIO
# user, allowed its bucket and nothing else (minio-platform-policy.json). It is the only process
# besides minio itself that holds the root credentials. Every step may repeat: it runs at every
# `docker compose up`, on a new volume or an old one.
set -eu
: "${MINIO_ROOT_USER:?}" "${MINIO_ROOT_PASSWORD:?}" "${MINIO_ACCESS_KEY:?}" "${MINIO_SECRET_KEY:?}" "${MINIO_BUCKET:?}"
if [ "$MINIO_ACCESS_KEY" = "$MINIO_ROOT_USER" ]; then
  echo "minio-init: MINIO_ACCESS_KEY must not be the root user" >&2
  exit 1
fi
mc alias set root http://minio:9000 "$MINIO_ROOT_USER" "$MINIO_ROOT_PASSWORD" >/dev/null
mc mb --ignore-existing "root/$MINIO_BUCKET"
sed "s/@BUCKET@/$MINIO_BUCKET/g" /init/minio-platform-policy.json > /tmp/policy.json
mc admin policy create root platform-bucket /tmp/policy.json
mc admin user add root "$MINIO_ACCESS_KEY" "$MINIO_SECRET_KEY"
# attach refuses a policy already attached: what counts is the user's policy afterwards
mc admin policy attach root platform-bucket --user "$MINIO_ACCESS_KEY" >/dev/null 2>&1 || true
mc admin user info root "$MINIO_ACCESS_KEY" | grep -q 'platform-bucket' || { echo "minio-init: the policy is not attached" >&2; exit 1; }
echo "minio-init: $MINIO_ACCESS_KEY may use the bucket $MINIO_BUCKET only"

#!/usr/bin/env bash
# Printed beside goal 1 (issue 25; its baseline in issue 12): the rotation a careful shell script does, one token after the
# other, with curl and jq. OAuth client credentials (the token endpoint from discovery), then per
# token: GET its metadata, decide with jq whether it is due (expiry within 7 days), POST a regenerate
# (the old token ends in 1 h or at its own expiry, the new one lives 30 days), write the secret to a
# 0600 file by rename, and record the new id. No fsync, no journal, no retries: a lower bound on what
# such a script costs, not a robust tool.
#
# Usage: baseline-curl-jq.sh TOKENS_FILE OUT_DIR   (TOKENS_FILE: "name id" per line)
# Environment: ROTATOR_API_URL ROTATOR_OAUTH_ISSUER ROTATOR_OAUTH_CLIENT_ID ROTATOR_OAUTH_CLIENT_SECRET
set -euo pipefail
tokens_file=$1
out=$2
mkdir -p "$out"
umask 077

token_endpoint=$(curl -sSf "$ROTATOR_OAUTH_ISSUER/.well-known/openid-configuration" | jq -r .token_endpoint)
access_token=$(curl -sSf -u "$ROTATOR_OAUTH_CLIENT_ID:$ROTATOR_OAUTH_CLIENT_SECRET" -d grant_type=client_credentials "$token_endpoint" |
  jq -r .access_token)

renew_before=$((7 * 86400))
while read -r name id; do
  printf -v now '%(%s)T' -1
  # "rotate <end of the old token>" or "skip", from the token's metadata.
  decision=$(curl -sSf -H "Authorization: Bearer $access_token" "$ROTATOR_API_URL/v2/tokens/$id" |
    jq -r --argjson now "$now" --argjson renew "$renew_before" '
      if .expiresAt == null then "skip"
      else (.expiresAt | sub("\\.[0-9]+"; "") | fromdateiso8601) as $e
        | if $e - $now < $renew then "rotate " + ([$e, $now + 3600] | min | todate) else "skip" end
      end')
  [[ $decision == rotate* ]] || continue
  TZ=UTC printf -v new_expiry '%(%Y-%m-%dT%H:%M:%SZ)T' $((now + 30 * 86400))
  {
    read -r new_id
    read -r secret
  } < <(curl -sSf -X POST -H "Authorization: Bearer $access_token" -H 'content-type: application/json' \
    -d "{\"existingTokenExpiresAt\":\"${decision#rotate }\",\"newTokenExpiresAt\":\"$new_expiry\"}" \
    "$ROTATOR_API_URL/v2/tokens/$id/regenerate" | jq -r '.id, .token')
  printf '%s' "$secret" >"$out/$name.token.tmp"
  mv "$out/$name.token.tmp" "$out/$name.token"
  echo "$name $new_id" >>"$out/state"
done <"$tokens_file"

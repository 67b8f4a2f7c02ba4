#!/usr/bin/env bash
# An exec KRM function (generator) for ply's golden tests: reads the ResourceList on stdin and
# prints a ResourceList holding one ConfigMap with the functionConfig's `spec.value`, the
# GREETING variable given with -e, and how many items it received.
set -euo pipefail
input=$(cat)
value=$(printf '%s\n' "$input" | sed -n 's/^ *value: *//p' | head -n 1)
items=$(printf '%s\n' "$input" | grep -c '^- ' || true)
cat <<YAML
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: from-function
    annotations:
      config.kubernetes.io/index: "0"
  data:
    value: "${value}"
    greeting: "${GREETING:-unset}"
    items-in: "${items}"
YAML

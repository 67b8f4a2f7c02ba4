#!/usr/bin/env bash
# An exec KRM function (transformer) for ply's golden tests: writes the ResourceList back with
# `image: nginx:1.25` replaced by `image: nginx:1.27` (items keep their id annotations).
set -euo pipefail
sed 's|image: nginx:1.25$|image: nginx:1.27|'

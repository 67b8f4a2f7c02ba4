#!/bin/sh
# The plugin's generate command: writes the Application the repo server was asked to render
# (from ARGOCD_APP_* and ARGOCD_ENV_KUSTOMIZE) and renders it with ply from the repository root.
set -eu
app_dir=$(pwd)
src_path=${ARGOCD_APP_SOURCE_PATH:-.}
# The repository root: the working directory without the source path.
root=$(cd "$app_dir" && p="$src_path"; r=.; while [ "$p" != "." ] && [ -n "$p" ]; do r="$r/.."; p=$(dirname "$p"); done; cd "$r" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  echo "apiVersion: argoproj.io/v1alpha1"
  echo "kind: Application"
  echo "metadata:"
  echo "  name: \"${ARGOCD_APP_NAME}\""
  echo "spec:"
  echo "  project: \"${ARGOCD_APP_PROJECT_NAME:-default}\""
  echo "  destination:"
  echo "    namespace: \"${ARGOCD_APP_NAMESPACE:-}\""
  echo "  source:"
  echo "    repoURL: \"${ARGOCD_APP_SOURCE_REPO_URL}\""
  echo "    path: \"${src_path}\""
  echo "    targetRevision: \"${ARGOCD_APP_SOURCE_TARGET_REVISION:-}\""
  echo "    kustomize:"
  if [ -n "${ARGOCD_ENV_KUSTOMIZE:-}" ]; then
    # Indented under `kustomize:`; YAML or JSON (a flow map).
    printf '%s\n' "$ARGOCD_ENV_KUSTOMIZE" | sed 's/^/      /'
  else
    echo "      {}"
  fi
} > "$tmp/application.yaml"
exec ply render "$root" --argo-application "$tmp/application.yaml" \
  --argo-revision "${ARGOCD_APP_REVISION:-}" --argo-repo-url "${ARGOCD_APP_SOURCE_REPO_URL}" \
  ${ARGOCD_ENV_BUILD_OPTIONS:+--build-options "$ARGOCD_ENV_BUILD_OPTIONS"}

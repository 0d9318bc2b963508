#!/usr/bin/env bash
# Installs what the Helm chart's tests (test/unit/helm-chart.test.ts) need into .tools/helm/
# (git-ignored); each part is skipped when present:
#   bin/helm, bin/kubeconform   built from the Go module proxy (helm.sh/helm/v3, yannh/kubeconform)
#   schemas/v1.X.0-local-strict Kubernetes' JSON schemas for the oldest version the chart supports
#                               and the newest bundled: taken from the PyPI package
#                               kubernetes-validate, the one registry package that ships them (no
#                               other download is possible offline)
#   schemas/monitoring.coreos.com/servicemonitor_v1.json
#                               the ServiceMonitor CRD of prometheus-operator's Go module, converted
#                               by kubeconform's own openapi2jsonschema.py (strict: unknown fields fail)
# Builds take minutes on a small machine; they run at low priority.
set -euo pipefail
cd "$(dirname "$0")/.."
# One build at a time: .ci/run starts this in the background, and the test command's pretest
# then waits here for it rather than building a second copy.
mkdir -p .tools
exec 9>.tools/helm.lock
flock 9

HELM_VERSION=v3.22.0
KUBECONFORM_VERSION=v0.8.0
KUBERNETES_VALIDATE_VERSION=1.37.0
KUBERNETES_VERSIONS=(1.25.0 1.37.0)
PROMETHEUS_OPERATOR_VERSION=v0.85.0

tools="$PWD/.tools/helm"
mkdir -p "$tools/bin" "$tools/schemas"
go_bin="$(command -v go || echo /usr/local/go/bin/go)"
# A module may want a newer Go than the installed one: let the go command fetch that toolchain.
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" GOBIN="$tools/bin"

if [ ! -x "$tools/bin/helm" ]; then
  echo "Building helm $HELM_VERSION from the Go module proxy into $tools/bin"
  # The version stamps helm's Makefile sets: its own version, and the Kubernetes version of its
  # client-go, which `helm template` and `helm lint` assume the cluster runs (else v1.20).
  helm_dir="$("$go_bin" mod download -json "helm.sh/helm/v3@$HELM_VERSION" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
  client_go_minor="$(sed -nE 's#^\s*k8s.io/client-go v0\.([0-9]+)\..*#\1#p' "$helm_dir/go.mod")"
  nice "$go_bin" install -ldflags "-w -s \
    -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
    -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 \
    -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$client_go_minor \
    -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 \
    -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$client_go_minor" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
fi
if [ ! -x "$tools/bin/kubeconform" ]; then
  echo "Building kubeconform $KUBECONFORM_VERSION from the Go module proxy into $tools/bin"
  nice "$go_bin" install "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION"
fi

missing_versions=()
for version in "${KUBERNETES_VERSIONS[@]}"; do
  [ -f "$tools/schemas/v$version-local-strict/_definitions.json" ] ||
    missing_versions+=("$version")
done
if [ ${#missing_versions[@]} -gt 0 ]; then
  echo "Unpacking Kubernetes ${missing_versions[*]} JSON schemas from kubernetes-validate $KUBERNETES_VALIDATE_VERSION"
  download="$(mktemp -d)"
  trap 'rm -rf "$download"' EXIT
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$download" \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
  python3 - "$download"/kubernetes_validate-*.whl "$tools/schemas" "${missing_versions[@]}" <<'PYTHON'
import json, os, sys, zipfile
wheel, target, *versions = sys.argv[1:]
root = "kubernetes_validate/kubernetes-json-schema/"
wanted = tuple(f"{root}v{version}-local-strict/" for version in versions)
with zipfile.ZipFile(wheel) as archive:
    for name in archive.namelist():
        if name.startswith(wanted) and not name.endswith("/"):
            path = os.path.join(target, name.removeprefix(root))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            schema = json.loads(archive.read(name))
            # Resolved by their $id (https://kubernetes.io/api/…) in kubernetes-validate; here by
            # file: without the $id, `_definitions.json` is the file beside each schema.
            schema.pop("$id", None)
            text = json.dumps(schema).replace('"/api/_definitions.json#', '"_definitions.json#')
            with open(path, "w") as out:
                out.write(text)
PYTHON
fi

service_monitor="$tools/schemas/monitoring.coreos.com/servicemonitor_v1.json"
if [ ! -f "$service_monitor" ]; then
  echo "Converting the ServiceMonitor CRD of prometheus-operator $PROMETHEUS_OPERATOR_VERSION"
  operator_dir="$("$go_bin" mod download -json \
    "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
  kubeconform_dir="$("$go_bin" mod download -json \
    "github.com/yannh/kubeconform@$KUBECONFORM_VERSION" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
  python3 -c 'import yaml' 2>/dev/null || python3 -m pip install -q pyyaml
  mkdir -p "$(dirname "$service_monitor")"
  (cd "$(dirname "$service_monitor")" &&
    FILENAME_FORMAT='{kind}_{version}' DENY_ROOT_ADDITIONAL_PROPERTIES=1 python3 \
      "$kubeconform_dir/scripts/openapi2jsonschema.py" \
      "$operator_dir/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml")
fi

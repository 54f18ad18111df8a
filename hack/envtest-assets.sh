#!/usr/bin/env bash
#
# envtest-assets.sh builds the two binaries controller-runtime's envtest needs,
# kube-apiserver and etcd, and the kubectl the end-to-end tests run as a pod
# would, from source fetched through the Go module proxy (no GitHub, no
# dl.k8s.io, no prebuilt binaries), and prints the directory that holds them.
# Use it as:
#
#   KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)" go test ./...
#
# Only the assets directory is printed on stdout; progress goes to stderr.
# Once built, the binaries are cached and later calls return immediately.
#
# Environment:
#   KUBEBUILDER_ASSETS             if set and it holds kube-apiserver and etcd,
#                                  it is printed; kubectl is built into it
#                                  first when it lacks one (and it is
#                                  writable), nothing else is built.
#   TOPOLAYER_ENVTEST_CACHE        cache root (default: <repo>/.cache/envtest).
#                                  Assets go to
#                                  <root>/<os>-<arch>/k8s-<ver>-etcd-<ver>/.
#   TOPOLAYER_ENVTEST_K8S_VERSION  k8s.io/kubernetes version for kube-apiserver
#                                  (default below); the staging modules
#                                  (k8s.io/api, k8s.io/apiserver, ...) are used
#                                  at the matching v0.X.Y version.
#   TOPOLAYER_ENVTEST_ETCD_VERSION go.etcd.io/etcd/server/v3 version for etcd.
#
# Why not simply `go install k8s.io/kubernetes/cmd/kube-apiserver@vX`? Because
# kubectl is built from k8s.io/kubernetes/cmd/kubectl at the same version, the
# same way: a directory that has kube-apiserver and etcd but not kubectl gets
# kubectl only.
#
# k8s.io/kubernetes's go.mod replaces all staging modules with ./staging/...
# directories, which `go install pkg@version` refuses. Instead we build from a
# throwaway wrapper module that requires k8s.io/kubernetes and replaces each
# staging module with its published v0.X.Y version. etcd's server module has
# local replace directives too, so it is built the same way.

set -euo pipefail

# k8s.io/kubernetes v1.37.2 would match k8s.io/client-go v0.37.2 in go.mod,
# but the Go module proxy refuses to serve its zip ("403 Forbidden: This module
# version is not available"), so default to the newest v1.37.x it does serve.
# A patch-level skew between client and apiserver is harmless for envtest.
readonly DEFAULT_K8S_VERSION="v1.37.1"
# Newest v3.6.x etcd (its go.mod says go 1.26.0, fine for the Go 1.26 toolchain).
readonly DEFAULT_ETCD_VERSION="v3.6.16"

readonly K8S_VERSION="${TOPOLAYER_ENVTEST_K8S_VERSION:-${DEFAULT_K8S_VERSION}}"
readonly ETCD_VERSION="${TOPOLAYER_ENVTEST_ETCD_VERSION:-${DEFAULT_ETCD_VERSION}}"

# Anything a command prints on stdout goes to stderr; only the final assets
# directory is written to the original stdout (fd 3).
exec 3>&1 1>&2

log() {
	printf 'envtest-assets: %s\n' "$*" >&2
}

die() {
	log "error: $*"
	exit 1
}

# has_assets DIR: true if DIR holds executable kube-apiserver and etcd files.
has_assets() {
	local bin
	for bin in kube-apiserver etcd; do
		[[ -f "$1/${bin}" && -x "$1/${bin}" ]] || return 1
	done
}

# has_binary DIR NAME
has_binary() {
	[[ -f "$1/$2" && -x "$1/$2" ]]
}

emit() {
	printf '%s\n' "$1" >&3
	exit 0
}

given_assets=""
if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
	if has_assets "${KUBEBUILDER_ASSETS}"; then
		if has_binary "${KUBEBUILDER_ASSETS}" kubectl || [[ ! -w "${KUBEBUILDER_ASSETS}" ]]; then
			emit "${KUBEBUILDER_ASSETS}"
		fi
		given_assets="$(cd -- "${KUBEBUILDER_ASSETS}" && pwd -P)"
	else
		log "warning: KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS} lacks kube-apiserver and/or etcd; ignoring it"
	fi
fi

[[ "${K8S_VERSION}" =~ ^v1\.([0-9]+)\.([0-9]+)(-[0-9A-Za-z.-]+)?$ ]] ||
	die "TOPOLAYER_ENVTEST_K8S_VERSION must look like v1.X.Y, got '${K8S_VERSION}'"
readonly K8S_MINOR="${BASH_REMATCH[1]}"
# Staging modules are published as v0.X.Y for Kubernetes v1.X.Y.
readonly STAGING_VERSION="v0.${K8S_VERSION#v1.}"
[[ "${ETCD_VERSION}" =~ ^v3\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
	die "TOPOLAYER_ENVTEST_ETCD_VERSION must look like v3.X.Y, got '${ETCD_VERSION}'"

command -v go >/dev/null 2>&1 || die "'go' not found in PATH"

script_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
repo_root="$(cd -- "${script_dir}/.." && pwd -P)"

# The binaries must run on this machine, so build for the host platform.
unset GOOS GOARCH
{ read -r goos && read -r goarch; } < <(go env GOHOSTOS GOHOSTARCH) ||
	die "cannot determine the host platform with 'go env'"

cache_root="${TOPOLAYER_ENVTEST_CACHE:-${repo_root}/.cache/envtest}"
platform_dir="${cache_root}/${goos}-${goarch}"
mkdir -p -- "${platform_dir}" || die "cannot create cache directory ${platform_dir}"
platform_dir="$(cd -- "${platform_dir}" && pwd -P)" # absolute: tests run in other dirs
assets_dir="${platform_dir}/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}"
if [[ -n "${given_assets}" ]]; then
	# The given directory's kube-apiserver is used as it is; only kubectl is
	# added, at the version asked for (default: the one of the cache).
	assets_dir="${given_assets}"
fi

complete() {
	has_assets "$1" && has_binary "$1" kubectl
}

if complete "${assets_dir}"; then
	emit "${assets_dir}"
fi

# Serialize concurrent builds (e.g. several test jobs starting at once).
if command -v flock >/dev/null 2>&1; then
	exec 9>"${platform_dir}/.lock"
	if ! flock -n 9; then
		log "another build is running; waiting for ${platform_dir}/.lock"
		flock 9
	fi
	if complete "${assets_dir}"; then
		emit "${assets_dir}"
	fi
	# We hold the lock, so leftovers of interrupted builds can go.
	rm -rf -- "${platform_dir}"/.build.*
fi

# Build in a temporary directory next to the final one (same file system), so
# that the final `mv` is an atomic rename: no half-written binary, ever.
work_dir="$(mktemp -d "${platform_dir}/.build.XXXXXX")"
trap 'rm -rf -- "${work_dir}"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p -- "${work_dir}/bin"

# Go settings for the wrapper modules: resolve and record dependencies as
# needed, ignore any go.work and VCS state of the surrounding repository, and
# build static binaries.
export GOWORK=off
export GO111MODULE=on
export GOFLAGS="-mod=mod -buildvcs=false"
export CGO_ENABLED=0

# download_module MODULE@VERSION: downloads it into the module cache and prints
# the `go mod download -json` output.
download_module() {
	local out
	if ! out="$(go mod download -json "$1")"; then
		local err
		err="$(sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p' <<<"${out}" |
			sed 's/\\n\\t/ /g; s/\\n/ /g; s/\\t/ /g; s/\\"/"/g')"
		die "cannot download $1 from the Go module proxy (GOPROXY=$(go env GOPROXY)): ${err:-see above}" \
			"(pick another version with TOPOLAYER_ENVTEST_K8S_VERSION / TOPOLAYER_ENVTEST_ETCD_VERSION)"
	fi
	printf '%s\n' "${out}"
}

# json_field NAME < JSON: value of the first string field NAME in JSON from go.
json_field() {
	sed -n 's/.*"'"$1"'": *"\([^"]*\)".*/\1/p' | sed -n 1p
}

# new_wrapper_module NAME: creates an empty module in $work_dir/NAME and cds there.
new_wrapper_module() {
	mkdir -p -- "${work_dir}/$1"
	cd -- "${work_dir}/$1"
	local out
	if ! out="$(go mod init "topolayer.invalid/envtest-assets/$1" 2>&1)"; then
		log "${out}"
		die "go mod init failed in ${work_dir}/$1"
	fi
}

# build_kubernetes_command NAME: builds k8s.io/kubernetes/cmd/NAME into the
# assets directory.
build_kubernetes_command() {
	local name="$1" start=${SECONDS}
	log "building ${name} from k8s.io/kubernetes@${K8S_VERSION} (staging modules @${STAGING_VERSION})"
	new_wrapper_module "${name}"

	local json gomod info build_date
	json="$(download_module "k8s.io/kubernetes@${K8S_VERSION}")"
	gomod="$(json_field GoMod <<<"${json}")"
	info="$(json_field Info <<<"${json}")"
	[[ -n "${gomod}" && -f "${gomod}" ]] || die "no go.mod found for k8s.io/kubernetes@${K8S_VERSION}"

	# Every module k8s.io/kubernetes replaces with a ./staging/... directory,
	# read from its own go.mod (both the block and the one-line replace forms).
	local -a staging=()
	local mod
	while IFS= read -r mod; do
		staging+=("${mod}")
	done < <(awk '
		{ sub(/\/\/.*$/, "") }
		$1 == "replace" { $1 = ""; $0 = $0 }
		{
			for (i = 1; i <= NF; i++) if ($i == "=>") break
			if (i < NF && $(i + 1) ~ /^\.\/staging\//) print $1
		}' "${gomod}")
	((${#staging[@]} > 0)) || die "found no staging replace directives in ${gomod}"
	log "replacing ${#staging[@]} staging modules with their ${STAGING_VERSION} releases"

	local -a edits=("-require=k8s.io/kubernetes@${K8S_VERSION}")
	for mod in "${staging[@]}"; do
		edits+=("-replace=${mod}=${mod}@${STAGING_VERSION}")
	done
	go mod edit "${edits[@]}"

	# Stamp the version like Kubernetes' hack/lib/version.sh does, so that
	# `kube-apiserver --version`, `kubectl version` and /version report the real release. The
	# commit is unknown without git; the build date is the release's time from
	# the module proxy, which keeps the build reproducible.
	build_date="$(json_field Time <"${info}")"
	local -a ldflags=(-s -w)
	local pkg key val
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		for key in gitVersion gitMajor gitMinor buildDate gitTreeState; do
			case "${key}" in
			gitVersion) val="${K8S_VERSION}" ;;
			gitMajor) val="1" ;;
			gitMinor) val="${K8S_MINOR}" ;;
			buildDate) val="${build_date:-1970-01-01T00:00:00Z}" ;;
			gitTreeState) val="archive" ;;
			esac
			ldflags+=("-X=${pkg}.${key}=${val}")
		done
	done

	go build -trimpath -ldflags="${ldflags[*]}" -o "${work_dir}/bin/${name}" \
		"k8s.io/kubernetes/cmd/${name}" ||
		die "building ${name} failed"
	case "${name}" in
	kubectl) "${work_dir}/bin/${name}" version --client >&2 ;;
	*) "${work_dir}/bin/${name}" --version >&2 ;;
	esac || die "the freshly built ${name} does not run"
	mkdir -p -- "${assets_dir}"
	mv -f -- "${work_dir}/bin/${name}" "${assets_dir}/${name}"
	log "${name} built in $((SECONDS - start))s"
}

build_etcd() {
	local start=${SECONDS}
	log "building etcd from go.etcd.io/etcd/server/v3@${ETCD_VERSION}"
	new_wrapper_module etcd
	download_module "go.etcd.io/etcd/server/v3@${ETCD_VERSION}" >/dev/null
	go mod edit "-require=go.etcd.io/etcd/server/v3@${ETCD_VERSION}"
	# The module root is the etcd server's main package.
	go build -trimpath -ldflags="-s -w" -o "${work_dir}/bin/etcd" go.etcd.io/etcd/server/v3 ||
		die "building etcd failed"
	"${work_dir}/bin/etcd" --version >&2 ||
		die "the freshly built etcd does not run"
	mkdir -p -- "${assets_dir}"
	mv -f -- "${work_dir}/bin/etcd" "${assets_dir}/etcd"
	log "etcd built in $((SECONDS - start))s"
}

log "building envtest assets into ${assets_dir} (takes several minutes the first time)"
total_start=${SECONDS}
# kube-apiserver first: it is the likelier one to fail (e.g. a version the
# proxy does not serve), so fail before spending time on etcd.
if has_binary "${assets_dir}" kube-apiserver; then
	log "kube-apiserver already built"
else
	build_kubernetes_command kube-apiserver
fi
if has_binary "${assets_dir}" etcd; then
	log "etcd already built"
else
	build_etcd
fi
if has_binary "${assets_dir}" kubectl; then
	log "kubectl already built"
else
	build_kubernetes_command kubectl
fi
complete "${assets_dir}" || die "binaries missing from ${assets_dir} after the build"
log "done in $((SECONDS - total_start))s"

emit "${assets_dir}"

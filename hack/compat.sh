#!/usr/bin/env bash
# compat.sh: can an embedder (HyperShift's control-plane-operator, say) take topolayer at
# the dependency versions it already pins?
#
# It builds a throwaway module that requires github.com/topolayer/topolayer (replaced by
# this checkout) and builds and unit-tests (go test -short: no e2e) every topolayer package
# an embedding imports: the topolayer packages among the dependencies of
# ./examples/hosted-embedding and ./sdk/...; twice:
#
#   floor   the versions topolayer's go.mod requires, as they are
#   newest  the newest releases of the lines named below (k8s.io/* COMPAT_K8S, controller-
#           runtime COMPAT_CONTROLLER_RUNTIME, kustomize COMPAT_KUSTOMIZE), skipping (and
#           saying so) any release whose go.mod needs a newer Go than the installed one
#
# It prints PASS or FAIL per set and exits non-zero if either fails. It needs only the Go
# module proxy. COMPAT_SETS="floor newest" chooses the sets.
set -uo pipefail

GO=${GO:-go}
COMPAT_K8S=${COMPAT_K8S:-v0.37}
COMPAT_CONTROLLER_RUNTIME=${COMPAT_CONTROLLER_RUNTIME:-v0.25}
COMPAT_KUSTOMIZE=${COMPAT_KUSTOMIZE:-v0} # any v0 release
COMPAT_SETS=${COMPAT_SETS:-floor newest}

# A release the installed Go cannot build is skipped, not fetched with a newer toolchain;
# a go.work elsewhere must not leak into the throwaway module.
export GOTOOLCHAIN=local GOWORK=off GOFLAGS="${GOFLAGS:-} -mod=mod"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
module=github.com/topolayer/topolayer
installed_go=$($GO env GOVERSION)
installed_go=${installed_go#go}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

log() { echo "compat: $*" >&2; }

# go_at_most A B: is Go version A no newer than B (1.26, 1.26.0 and 1.26.8 compare as Go does
# for go lines: 1.26 is 1.26.0)?
go_at_most() {
	local a=$1 b=$2
	[[ $a =~ ^[0-9]+\.[0-9]+$ ]] && a+=.0
	[[ $b =~ ^[0-9]+\.[0-9]+$ ]] && b+=.0
	[[ $(printf '%s\n%s\n' "$a" "$b" | sort -V | tail -1) == "$b" ]]
}

# newest MODULE LINE: the newest release of MODULE in LINE (v0.37: v0.37.x; v0: any v0.x.y)
# that the installed Go can build; releases needing a newer Go are reported and skipped.
newest() {
	local mod=$1 line=$2 v gov gomod
	local re="^${line//./\\.}\\.[0-9]+$" # v0.37: v0.37.x releases, not pre-releases
	[[ $line =~ ^v[0-9]+$ ]] && re="^${line}\\.[0-9]+\\.[0-9]+$"
	local versions
	versions=$(cd "$tmp" && $GO list -m -versions "$mod" | tr ' ' '\n' | tail -n +2 | grep -E "$re" | sort -rV) || {
		log "no $line release of $mod is served"
		return 1
	}
	for v in $versions; do
		gomod=$(cd "$tmp" && $GO list -m -f '{{.GoMod}}' "$mod@$v") && [[ -f $gomod ]] || {
			log "cannot read the go.mod of $mod@$v"
			return 1
		}
		gov=$(awk '$1 == "go" { print $2 }' "$gomod")
		if [[ -z $gov ]] || go_at_most "$gov" "$installed_go"; then
			echo "$v"
			return 0
		fi
		log "SKIP $mod@$v: its go.mod needs go $gov, the installed go is $installed_go"
	done
	log "no $line release of $mod builds with go $installed_go"
	return 1
}

pkgs=$(cd "$root" && GOFLAGS= $GO list -deps ./examples/hosted-embedding ./sdk/... | grep -E "^$module(/|$)") || {
	log "listing the packages an embedding imports failed"
	exit 1
}
# Packages a test may import but an embedder never can: internal ones are tested, not imported.
importable=$(grep -v '/internal/' <<<"$pkgs" | grep -v '/examples/hosted-embedding$')

# newmod DIR: a throwaway module in DIR that requires topolayer at this checkout.
newmod() {
	local dir=$1
	mkdir -p "$dir"
	cat >"$dir/go.mod" <<-EOF
		module example.com/embedder

		go $(awk '$1 == "go" { print $2 }' "$root/go.mod")

		require $module v0.0.0-00010101000000-000000000000

		replace $module => $root
	EOF
	cp "$root/go.sum" "$dir/go.sum"
	# The embedder imports every importable package, as an embedding's main package would.
	{
		echo "// Package embedder imports what an embedding of topolayer imports."
		echo "package embedder"
		echo
		echo "import ("
		for p in $importable; do echo "	_ \"$p\""; done
		echo ")"
	} >"$dir/embedder.go"
}

# check NAME DIR: build and unit-test the packages in DIR's module; report PASS or FAIL.
check() {
	local name=$1 dir=$2
	log "$name: $(cd "$dir" && $GO list -m -f '{{.Path}}@{{.Version}}' k8s.io/api k8s.io/client-go sigs.k8s.io/controller-runtime sigs.k8s.io/kustomize/api sigs.k8s.io/kustomize/kyaml github.com/openshift/api | tr '\n' ' ')"
	# shellcheck disable=SC2086 # word splitting of the package list is intended
	if ! (cd "$dir" && $GO build ./... $pkgs && $GO test -short $pkgs); then
		echo "compat: FAIL $name"
		return 1
	fi
	# The floor is what go.mod requires: the modules the packages and their tests were built
	# from must be at the versions topolayer itself builds them with.
	local modules='{{with .Module}}{{if ne .Path "'$module'"}}{{.Path}} {{.Version}}{{end}}{{end}}'
	# shellcheck disable=SC2086
	if [[ $name == floor ]] && ! diff -u --label "built by topolayer" --label "built by the embedder" \
		<(cd "$root" && GOFLAGS= $GO list -deps -test -f "$modules" $pkgs | sort -u) \
		<(cd "$dir" && $GO list -deps -test -f "$modules" $pkgs | sort -u); then
		echo "compat: FAIL $name (the versions built are not the ones topolayer's go.mod requires)"
		return 1
	fi
	echo "compat: PASS $name"
	return 0
}

# newest_versions prints module@version for the newest releases the newest set is built at.
newest_versions() {
	local m v
	for m in $(cd "$root" && GOFLAGS= $GO list -m -f '{{if not .Main}}{{.Path}}{{end}}' all |
		grep -E '^k8s\.io/(api|apiextensions-apiserver|apimachinery|apiserver|client-go|component-base|component-helpers|pod-security-admission)$'); do
		v=$(newest "$m" "$COMPAT_K8S") || return 1
		echo "$m@$v"
	done
	v=$(newest sigs.k8s.io/controller-runtime "$COMPAT_CONTROLLER_RUNTIME") || return 1
	echo "sigs.k8s.io/controller-runtime@$v"
	for m in sigs.k8s.io/kustomize/api sigs.k8s.io/kustomize/kyaml; do
		v=$(newest "$m" "$COMPAT_KUSTOMIZE") || return 1
		echo "$m@$v"
	done
}

status=0
for set in $COMPAT_SETS; do
	dir=$tmp/$set
	case $set in
	floor)
		newmod "$dir"
		;;
	newest)
		newmod "$dir"
		if ! gets=$(newest_versions); then
			echo "compat: FAIL $set (no buildable release to test against, see above)"
			status=1
			continue
		fi
		# shellcheck disable=SC2086 # one module@version a word
		if ! (cd "$dir" && $GO get $gets); then
			echo "compat: FAIL $set (go get $(echo $gets))"
			status=1
			continue
		fi
		# From v0.25 on, managers hand out controller-runtime's recorder.EventRecorder:
		# sdk.EventRecorder must be one, so that an SDK operator's reconciler takes either.
		if grep -qs '^type EventRecorder interface' "$(cd "$dir" && $GO list -f '{{.Dir}}' sigs.k8s.io/controller-runtime/pkg/recorder)"/*.go; then
			cat >"$dir/recorder.go" <<-EOF
				package embedder

				import (
					"sigs.k8s.io/controller-runtime/pkg/recorder"

					"$module/sdk"
				)

				var _ recorder.EventRecorder = sdk.EventRecorder(nil)
			EOF
		fi
		;;
	*)
		log "unknown set $set (floor, newest)"
		exit 2
		;;
	esac
	check "$set" "$dir" || status=1
done
exit $status

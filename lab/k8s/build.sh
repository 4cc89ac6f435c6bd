#!/usr/bin/env bash
# Build a real kube-apiserver (Kubernetes 1.20 from Debian's source package) and unpack Debian's
# etcd, for the k8s_network scenario. No registry ships a kube-apiserver binary; Debian 12's
# source package `kubernetes` carries the whole upstream tree with vendor/, so it builds offline
# with Go 1.15 (Debian 11's golang-1.15-go/-src; Go >= 1.18 breaks 1.20 at run time).
# Nothing is installed on the host: apt runs with a private source list and state directory under
# the cache, and the .debs are unpacked with dpkg-deb -x.
#
# Usage: build.sh            prints the directory holding bin/kube-apiserver and bin/etcd
# The result is kept in ${FABRIC_K8S_CACHE:-~/.cache/fabric-infiniband/k8s}/<source version>/,
# outside the checkout, and reused while the source version is the same (about 6 minutes cold on
# 2 cores; instant when cached). Needs apt-get, dpkg-source, dpkg-deb, make, rsync, gcc.
set -euo pipefail

cache=${FABRIC_K8S_CACHE:-$HOME/.cache/fabric-infiniband/k8s}
mirror=${FABRIC_LAB_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

for tool in apt-get dpkg-source dpkg-deb make rsync gcc; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool is missing" >&2; exit 1; }
done
mkdir -p "$cache/apt/lists/partial" "$cache/apt/archives/partial"

# A private apt: bookworm sources (kubernetes), bookworm binaries (etcd-server), bullseye
# binaries (golang-1.15). The host's sources.list and package state are not touched.
cat >"$cache/apt/sources.list" <<EOF
deb [signed-by=$keyring] $mirror bookworm main
deb-src [signed-by=$keyring] $mirror bookworm main
deb [signed-by=$keyring] $mirror bullseye main
EOF
apt_opts=(
  -o "Dir::Etc::SourceList=$cache/apt/sources.list"
  -o "Dir::Etc::SourceParts=$cache/apt/none"
  -o "Dir::State::Lists=$cache/apt/lists"
  -o "Dir::Cache=$cache/apt"
  -o "Dir::Cache::Archives=$cache/apt/archives"
  -o "APT::Get::List-Cleanup=false"
  -o "Debug::NoLocking=true"
  -o "APT::Sandbox::User=root"
)
mkdir -p "$cache/apt/none"

# Refresh the private index at most once a day.
if [ -z "$(find "$cache/apt/lists" -maxdepth 1 -name '*Sources*' -mmin -1440 2>/dev/null)" ]; then
  apt-get "${apt_opts[@]}" -qq update >&2
fi
version=$(apt-cache "${apt_opts[@]}" showsrc kubernetes 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -1)
[ -n "$version" ] || { echo "build.sh: no source package kubernetes in bookworm" >&2; exit 1; }
out=$cache/$version
if [ -x "$out/bin/kube-apiserver" ] && [ -x "$out/bin/etcd" ]; then
  echo "$out"
  exit 0
fi

work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$SECONDS
(
  cd "$work"
  apt-get "${apt_opts[@]}" -qq download golang-1.15-go golang-1.15-src etcd-server/bookworm >&2
  apt-get "${apt_opts[@]}" -qq source --download-only "kubernetes=$version" >&2
  for deb in ./*.deb; do dpkg-deb -x "$deb" root; done
  dpkg-source --no-check -x ./kubernetes_*.dsc src >&2
)
goroot=$work/root/usr/lib/go-1.15
[ -x "$goroot/bin/go" ] || { echo "build.sh: Go 1.15 not found in the unpacked packages" >&2; exit 1; }
upstream=${version#*really}
upstream=v${upstream%%-*}
(
  cd "$work/src"
  export GOROOT=$goroot PATH=$goroot/bin:$PATH GOCACHE=$work/gocache GOFLAGS=-mod=vendor
  export GOPROXY=off GO111MODULE=on KUBE_GIT_VERSION=$upstream KUBE_GIT_TREE_STATE=clean
  make WHAT=cmd/kube-apiserver >&2
)
mkdir -p "$work/out/bin"
cp "$work/src/_output/local/bin/linux/amd64/kube-apiserver" "$work/out/bin/"
cp "$work/root/usr/bin/etcd" "$work/out/bin/"
printf 'kubernetes source %s (%s), Go 1.15 from bullseye, etcd %s, built in %ss\n' \
  "$version" "$upstream" "$(basename "$work"/etcd-server_*.deb .deb)" $((SECONDS - start)) \
  >"$work/out/BUILD-INFO"
rm -rf "$out"
mv "$work/out" "$out"
echo "$out"

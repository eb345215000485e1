#!/bin/bash
# Build LISA's Rust trace-dump (the peer of benchmarks/real_captures.py) outside the
# project, from its public source: https://github.com/ARM-software/lisa,
# tools/trace-parser/trace-tools (measured at commit bb5ff50d0ff5, 2026-08-12).
#
#   benchmarks/build_trace_dump.sh LISA_CHECKOUT [BUILD_DIR]     (default /work/lisa-build)
#
# LISA_CHECKOUT is a clone of the repository (git clone https://github.com/ARM-software/lisa)
# or its git directory.  The binary lands in BUILD_DIR/tools/trace-parser/trace-tools/
# target/release/trace-dump, where real_captures.py looks for it.  Needs cargo and crates.io.
#
# One dependency of its traceevent crate, deref-map 0.1.0, was not in the crates.io index
# this machine reaches ("no matching package named `deref-map` found").  traceevent uses
# one call of it (src/buffer.rs: DerefMap::new(page_data, move |data| &data[a..b]), a value
# that dereferences to a slice of what it owns); when cargo cannot fetch it, a stand-in with
# that API (BUILD_DIR/deref-map) is patched in.  Nothing else is changed.
set -euo pipefail
src=${1:?usage: build_trace_dump.sh LISA_CHECKOUT [BUILD_DIR]}
build=${2:-/work/lisa-build}
mkdir -p "$build"
if [ -d "$src/.git" ] || [ -f "$src/HEAD" ]; then
  git --git-dir="$( [ -d "$src/.git" ] && echo "$src/.git" || echo "$src")" archive HEAD tools/trace-parser | tar -x -C "$build"
else
  cp -r "$src/tools" "$build/"
fi
tools=$build/tools/trace-parser/trace-tools
if ! (cd "$tools" && cargo fetch --locked >/dev/null 2>&1); then
  mkdir -p "$build/deref-map/src"
  cat > "$build/deref-map/Cargo.toml" <<'EOF'
[package]
name = "deref-map"
version = "0.1.0"
edition = "2021"
EOF
  cat > "$build/deref-map/src/lib.rs" <<'EOF'
//! Stand-in for crates.io deref-map 0.1.0: a value and a projection of it; derefs to
//! the projection of the value.
use std::ops::Deref;

pub struct DerefMap<T, F> {
    value: T,
    f: F,
}

impl<T: Deref, F> DerefMap<T, F> {
    pub fn new<U: ?Sized>(value: T, f: F) -> Self
    where
        F: for<'x> Fn(&'x T::Target) -> &'x U,
    {
        DerefMap { value, f }
    }
}

impl<T, F, U: ?Sized> Deref for DerefMap<T, F>
where
    T: Deref,
    F: for<'x> Fn(&'x T::Target) -> &'x U,
{
    type Target = U;
    fn deref(&self) -> &U {
        (self.f)(&*self.value)
    }
}
EOF
  grep -q '^\[patch.crates-io\]' "$tools/Cargo.toml" ||
    printf '\n[patch.crates-io]\nderef-map = { path = "%s/deref-map" }\n' "$build" >> "$tools/Cargo.toml"
fi
cd "$tools" && flock /tmp/wa-heavy.lock cargo build --release
ls -l "$tools/target/release/trace-dump"

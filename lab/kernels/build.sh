#!/bin/bash
# Build Linux 6.1 (Debian's linux-source-6.1) for the lab VM, stock or with one
# upstream writeback fix undone, so a workload can be captured on a kernel that
# has the problem and on the same kernel without it.
#
#   lab/kernels/build.sh VARIANT...      VARIANT: stock, or revert-<rule id>
#   lab/kernels/build.sh all             stock and every patch in patches/
#
# The first build unpacks the source and compiles everything (about 15 minutes on
# 2 cores); each further variant applies its one patch, rebuilds what it touches
# (under a minute) and reverses it. Outputs stay out of git, under $KBUILD_ROOT
# (default lab/kernels/build/):
#   src/linux-source-6.1/    the tree, always left unpatched
#   images/VARIANT/bzImage   boot with:  KERNEL=.../bzImage shared/lab/vm-run SCRIPT OUT
#   images/VARIANT/build.txt release string, source package version, patch and
#                            config sha256, image sha256
# The release string names the variant: 6.1.192-revert-sync-flusher-stall.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${KBUILD_ROOT:-$here/build}
vng_version=1.42
src_pkg=linux-source-6.1
jobs=${JOBS:-$(nproc)}

[ $# -ge 1 ] || { sed -n '2,18p' "$0" >&2; exit 2; }
variants=("$@")
if [ "$1" = all ]; then
  variants=(stock)
  for p in "$here"/patches/*.patch; do variants+=("revert-$(basename "$p" .patch)"); done
fi
for v in "${variants[@]}"; do
  [ "$v" = stock ] || [ -f "$here/patches/${v#revert-}.patch" ] ||
    { echo "build.sh: unknown variant $v (no patches/${v#revert-}.patch)" >&2; exit 2; }
done

need=()
dpkg-query -W -f='${db:Status-Status}' "$src_pkg" 2>/dev/null | grep -qx installed || need+=("$src_pkg")
for p in build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils python3-venv; do
  dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "build.sh: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "${need[@]}" >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q "${need[@]}" >/dev/null; }
fi
vng_venv=$root/vng
[ -x "$vng_venv/bin/vng" ] || { python3 -m venv "$vng_venv" && "$vng_venv/bin/pip" install -q "virtme-ng==$vng_version"; }

tree=$root/src/$src_pkg
pkg_version=$(dpkg-query -W -f='${Version}' "$src_pkg")
if [ ! -f "$tree/Makefile" ] || [ "$(cat "$root/src/.version" 2>/dev/null)" != "$pkg_version" ]; then
  echo "build.sh: unpacking $src_pkg $pkg_version" >&2
  rm -rf "$root/src"; mkdir -p "$root/src"
  tar -C "$root/src" -xaf /usr/src/$src_pkg.tar.xz
  echo "$pkg_version" > "$root/src/.version"
fi
cd "$tree"
# Start every run from the unpatched tree: a build interrupted mid-variant leaves
# its patch applied, recorded in .applied.
if [ -f .applied ]; then patch -R -p1 -s < "$(cat .applied)"; rm -f .applied; fi

config_sum=$(sha256sum "$here/vm.config" | cut -c1-64)
if [ "$(cat .lab-config 2>/dev/null)" != "$config_sum" ]; then
  echo "build.sh: configuring (virtme-ng $vng_version minimal config + vm.config)" >&2
  PATH=$vng_venv/bin:$PATH vng --kconfig >/dev/null
  # vm.config wins over virtme-ng's items (it turns debug info on, btrfs and xfs off)
  scripts/kconfig/merge_config.sh -m .config "$here/vm.config" >/dev/null
  make -s olddefconfig
  # every item must have survived olddefconfig (a dependency missing drops it silently)
  while read -r line; do
    case "$line" in CONFIG_*=*) grep -qx "$line" .config || { echo "build.sh: $line did not take in .config" >&2; exit 1; } ;; esac
  done < "$here/vm.config"
  echo "$config_sum" > .lab-config
fi

base=$(make -s kernelversion)
for v in "${variants[@]}"; do
  out=$root/images/$v; mkdir -p "$out"
  patchfile=""
  if [ "$v" != stock ]; then
    patchfile=$here/patches/${v#revert-}.patch
    patch -p1 -s --dry-run < "$patchfile" >/dev/null || { echo "build.sh: $patchfile does not apply to $base" >&2; exit 1; }
    patch -p1 -s < "$patchfile"; echo "$patchfile" > .applied
  fi
  localversion=-$v
  [ "$v" = stock ] && localversion=-stock
  echo "build.sh: building $base$localversion ($jobs jobs)" >&2
  start=$(date +%s)
  make -s -j"$jobs" LOCALVERSION="$localversion" bzImage
  cp arch/x86/boot/bzImage "$out/bzImage"
  release=$(make -s LOCALVERSION="$localversion" kernelrelease)
  if [ -n "$patchfile" ]; then patch -R -p1 -s < "$patchfile"; rm -f .applied; fi
  {
    echo "variant: $v"
    echo "release: $release"
    echo "source: $src_pkg $pkg_version"
    echo "config: virtme-ng $vng_version --kconfig + vm.config sha256 $config_sum"
    echo "config_sha256: $(sha256sum .config | cut -c1-64)"
    [ -n "$patchfile" ] && echo "patch: patches/$(basename "$patchfile") sha256 $(sha256sum "$patchfile" | cut -c1-64)"
    echo "image_sha256: $(sha256sum "$out/bzImage" | cut -c1-64)"
    echo "build_seconds: $(( $(date +%s) - start ))"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(nproc) CPUs"
  } > "$out/build.txt"
  cp .config "$out/config"
  echo "build.sh: $out/bzImage ($release)" >&2
done

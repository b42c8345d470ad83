#!/usr/bin/env bash
# Makes the README's pictures: runs the playground example's scripted scenes
# in a virtual X display (Xvfb) with Mesa's software Vulkan driver, and saves
# each scene's screenshot under docs/. Works on a fresh Debian or Ubuntu
# machine: it installs what it needs with apt-get (as root, or through sudo).
#
#   scripts/screenshots.sh            # all five pictures
#   scripts/screenshots.sh replan     # one of: compare replan intervals door floors
set -euo pipefail
cd "$(dirname "$0")/.."

scenes=("$@")
if [ ${#scenes[@]} -eq 0 ]; then
    scenes=(compare replan intervals door floors)
fi

# The virtual display, the Vulkan loader and software driver, and the X
# client libraries that Bevy's window (winit) loads at run time.
packages=(
    xvfb
    mesa-vulkan-drivers
    libvulkan1
    libx11-6
    libx11-xcb1
    libxcb1
    libxcursor1
    libxrandr2
    libxi6
    libxkbcommon0
    libxkbcommon-x11-0
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}"
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        sudo=(sudo)
    fi
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The full `bevy` crate asks for a newer Rust than this crate's
# rust-version, hence --ignore-rust-version. The scenes are scripted frame
# by frame, so an unoptimised build is enough (and much quicker to build).
echo "== building the playground"
cargo build --example playground --features visual --ignore-rust-version
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
playground="$target_dir/debug/examples/playground"

# Mesa's software Vulkan driver (lavapipe), whatever else is installed.
for icd in /usr/share/vulkan/icd.d/lvp_icd.*.json; do
    if [ -e "$icd" ]; then
        export VK_ICD_FILENAMES="$icd"
    fi
done

display=":$((90 + RANDOM % 9))"
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill "$xvfb" 2>/dev/null || true' EXIT
sleep 2
runtime=$(mktemp -d)

mkdir -p docs
for scene in "${scenes[@]}"; do
    out="docs/playground-$scene.png"
    echo "== $scene -> $out"
    rm -f "$out"
    DISPLAY="$display" XDG_RUNTIME_DIR="$runtime" RUST_LOG=error \
        timeout 600 "$playground" --script "$scene" --out "$out"
    if [ ! -s "$out" ]; then
        echo "no screenshot for $scene" >&2
        exit 1
    fi
    ls -l "$out"
done

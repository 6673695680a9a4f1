#!/usr/bin/env bash
# Screenshot check of the windowed examples (not part of .ci/run).
#
#   scripts/screenshots.sh
#
# 1. Installs what they need from Debian's packages, if missing: Xvfb, Mesa's software
#    Vulkan driver (lavapipe) and the Vulkan loader, and the X11 libraries winit opens.
# 2. Builds the windowed examples with `--features examples-render` (the dev profile, whose
#    dependencies are optimised; it shares them with `cargo run --features examples-render`).
# 3. Runs each example under Xvfb on lavapipe; the example (see examples/common_3d) advances
#    1/60 s per frame, saves a screenshot of frame IMPETUS_FRAMES to docs/screenshots/NAME.png
#    and exits.
# 4. Fails if an example exits with an error or panics, runs longer than TIMEOUT seconds, or
#    saves no image or a blank one (one colour covering nearly all of it, or too few colours).
#
# Environment: IMPETUS_FRAMES (default 120), TIMEOUT (per example, default 600 s),
# CARGO_TARGET_DIR (default target), EXAMPLES (default: all windowed examples).
set -euo pipefail
cd "$(dirname "$0")/.."

EXAMPLES=(${EXAMPLES:-stacking_3d joints_3d chain_bridge_3d interpolation_3d debug_render_3d
    joint_motors_3d character_3d move_and_slide_3d picking_3d diagnostics_3d collider_constructors_3d gyroscopic_3d vehicle_3d})
FRAMES=${IMPETUS_FRAMES:-120}
TIMEOUT=${TIMEOUT:-600}
TARGET=${CARGO_TARGET_DIR:-target}
OUT=docs/screenshots
started=$(date +%s)

stage() { printf '\n==== %s (%ss) ====\n' "$*" "$(($(date +%s) - started))"; }

stage "packages"
packages=(xvfb xauth mesa-vulkan-drivers libvulkan1 libx11-6 libx11-xcb1 libxcursor1 libxrandr2
    libxi6 libxkbcommon0 libxkbcommon-x11-0 python3)
missing=()
for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "installing: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
else
    echo "all installed"
fi

stage "build"
build=(cargo build --features examples-render)
for example in "${EXAMPLES[@]}"; do build+=(--example "$example"); done
"${build[@]}"

stage "run"
icd=$(ls /usr/share/vulkan/icd.d/lvp_icd*.json 2>/dev/null | head -n 1 || true)
if [ -z "$icd" ]; then
    echo "no lavapipe ICD in /usr/share/vulkan/icd.d (mesa-vulkan-drivers)" >&2
    exit 1
fi
export VK_ICD_FILENAMES="$icd" WGPU_BACKEND=vulkan
display=":$((90 + RANDOM % 100))"
Xvfb "$display" -screen 0 1280x720x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill "$xvfb" 2>/dev/null || true' EXIT
export DISPLAY="$display"
for _ in $(seq 50); do
    [ -e "/tmp/.X11-unix/X${display#:}" ] && break
    sleep 0.1
done

mkdir -p "$OUT"
logs=$(mktemp -d)
failed=0
for example in "${EXAMPLES[@]}"; do
    png="$OUT/$example.png"
    rm -f "$png"
    t0=$(date +%s)
    status=0
    IMPETUS_SCREENSHOT="$png" IMPETUS_FRAMES="$FRAMES" RUST_BACKTRACE=1 \
        timeout "$TIMEOUT" "$TARGET/debug/examples/$example" >"$logs/$example.log" 2>&1 || status=$?
    t1=$(date +%s)
    problem=""
    if [ "$status" -eq 124 ]; then
        problem="ran past ${TIMEOUT}s"
    elif [ "$status" -ne 0 ]; then
        problem="exited with status $status"
    elif grep -q "panicked at" "$logs/$example.log"; then
        problem="panicked"
    elif [ ! -s "$png" ]; then
        problem="saved no screenshot"
    elif ! verdict=$(python3 scripts/png_check.py "$png"); then
        problem="blank frame: $verdict"
    fi
    if [ -n "$problem" ]; then
        echo "FAIL $example ($((t1 - t0))s): $problem; last lines of its log:"
        tail -n 30 "$logs/$example.log" | sed 's/^/    /'
        failed=1
    else
        echo "ok   $example ($((t1 - t0))s): $png, $verdict"
    fi
done

stage "done"
exit "$failed"

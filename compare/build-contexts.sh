#!/usr/bin/env bash
# Times the same impetus3d scenes built in two dependency contexts, to catch a hot kernel whose
# speed depends on how the build happened to go rather than on the code:
#
#   crate      the crate's own `profile` bench (benches/profile.rs): impetus3d and its own
#              dependencies only, the graph a user's game with only impetus3d sees;
#   workspace  this directory's comparison binary, built beside bevy_rapier3d, avian3d,
#              rapier3d and Box3D (other features of parry and glam are switched on there).
#
# Both run the scene's timing window of `compare/` (same warm-up, same timed steps, one
# thread), the two contexts alternating within each round. It prints each context's median
# ms/step with its spread and the ratio workspace / crate. On this noisy 2-vCPU VM a round's
# times move by 20-40 %; a ratio outside about 0.75-1.33 over five rounds is a cliff.
#
#   compare/build-contexts.sh                 # 5 rounds of grid pyramid large_pyramid pile chain
#   ROUNDS=9 compare/build-contexts.sh grid   # one scene, more rounds
set -euo pipefail

cd "$(dirname "$0")/.."
rounds="${ROUNDS:-5}"
scenes=("$@")
if [ ${#scenes[@]} -eq 0 ]; then
    scenes=(grid pyramid large_pyramid pile chain)
fi

echo "building the crate's profile bench and the comparison binary (release)..." >&2
bench=$(cargo bench --bench profile --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\))/\1/p' | tail -1)
cargo build --release --manifest-path compare/Cargo.toml >&2
workspace=compare/target/release/impetus3d-compare

# The timing window of compare/ (src/scenes.rs, `SceneKind::timing_window`): warm-up steps and
# the step the timing ends at.
window() {
    case "$1" in
        pyramid) echo "5 600" ;;
        large_pyramid) echo "5 200" ;;
        pile) echo "60 300" ;;
        grid) echo "10 300" ;;
        chain) echo "10 610" ;;
        *) echo "no timing window for scene '$1'" >&2; exit 2 ;;
    esac
}

crate_ms() {
    local warm end
    read -r warm end < <(window "$1")
    "$bench" "$1" "$warm" "$((end - warm))" 2>/dev/null | sed -n 's/.*: \([0-9.]*\) ms\/step/\1/p' | tail -1
}

workspace_ms() {
    "$workspace" --repeats 1 --only impetus3d "$1" 2>/dev/null |
        awk -F'|' '$2 ~ /^ impetus3d $/ { gsub(/ /, "", $3); print $3; exit }'
}

# "median (min–max)" of the numbers on stdin.
summary() {
    sort -g | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.3f (%.3f–%.3f)", m, v[1], v[NR]
    }'
}

median() {
    sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo
echo "| scene | crate ms/step | workspace ms/step | workspace ÷ crate |"
echo "| --- | ---: | ---: | ---: |"
for scene in "${scenes[@]}"; do
    crate_times=()
    workspace_times=()
    for round in $(seq 1 "$rounds"); do
        # Alternate which context goes first.
        if [ $((round % 2)) -eq 1 ]; then
            crate_times+=("$(crate_ms "$scene")")
            workspace_times+=("$(workspace_ms "$scene")")
        else
            workspace_times+=("$(workspace_ms "$scene")")
            crate_times+=("$(crate_ms "$scene")")
        fi
    done
    crate_median=$(printf '%s\n' "${crate_times[@]}" | median)
    workspace_median=$(printf '%s\n' "${workspace_times[@]}" | median)
    ratio=$(awk -v a="$workspace_median" -v b="$crate_median" 'BEGIN { printf "%.2f", a / b }')
    echo "| $scene | $(printf '%s\n' "${crate_times[@]}" | summary) | $(printf '%s\n' "${workspace_times[@]}" | summary) | $ratio |"
done

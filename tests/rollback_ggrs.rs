//! Rollback networking with GGRS (the `rollback` example's game): a SyncTest session rolls back
//! and re-simulates every frame and finds no frame whose physics checksum differs, and rolling
//! back 1 or 8 frames at a time ends in the same state.

#[path = "../examples/rollback/game.rs"]
#[allow(dead_code)]
mod game;

/// 1,000 frames with check distance 8: from frame 9 on, every frame loads the state of 8 frames
/// before, re-simulates them with the same inputs, and compares the checksums of each frame's
/// two simulations. Bots change their buttons every 12 frames (walk, jump, kick), the paddle
/// sweeps the pile and the chain swings throughout.
#[test]
fn a_synctest_with_check_distance_8_finds_no_mismatch_in_1000_frames() {
    let report = game::run_synctest(1000, 8).expect("a valid session");
    assert!(
        report.mismatched_frames.is_empty(),
        "frames whose re-simulation differed: {:?}",
        report.mismatched_frames
    );
    // Every frame after the first `check distance` frames is a rollback of 8 frames.
    assert_eq!(report.stats.rollbacks, 1000 - 10, "{:?}", report.stats);
    assert_eq!(report.stats.resimulated, 8 * report.stats.rollbacks);
    assert_eq!(report.stats.deepest, 8);

    // Rolled back 1 frame at a time instead of 8, the same frames reach the same state: what
    // a restore leaves decides nothing (a peer that rolled back and one that did not agree).
    // The SyncTest alone cannot see this: each of its runs compares states reached along the
    // same pattern of rollbacks. (The broad phase's tree, rebuilt at the restore instead of
    // restored, passed it and desynced two peers.)
    let shallow = game::run_synctest(1000, 1).expect("a valid session");
    assert!(shallow.mismatched_frames.is_empty());
    let differing = (report.stats.checksums.iter())
        .find(|(frame, sum)| shallow.stats.checksums.get(frame) != Some(sum));
    assert_eq!(
        differing, None,
        "the first frame whose state differs between rollbacks 1 and 8 frames deep"
    );
}

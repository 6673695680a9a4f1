//! Rollback networking with GGRS (the `rollback` example's game): a SyncTest session rolls back
//! and re-simulates every frame and finds no frame whose physics checksum differs.

#[path = "../examples/rollback/game.rs"]
#[allow(dead_code)]
mod game;

/// 600 frames with check distance 8: from frame 9 on, every frame loads the state of 8 frames
/// before, re-simulates them with the same inputs, and compares the checksums of each frame's
/// two simulations. Bots change their buttons every 12 frames (walk, jump, kick), the paddle
/// sweeps the pile and the chain swings throughout.
#[test]
fn a_synctest_with_check_distance_8_finds_no_mismatch_in_600_frames() {
    let report = game::run_synctest(600, 8).expect("a valid session");
    assert!(
        report.mismatched_frames.is_empty(),
        "frames whose re-simulation differed: {:?}",
        report.mismatched_frames
    );
    // Every frame after the first `check distance` frames is a rollback of 8 frames.
    assert_eq!(report.stats.rollbacks, 600 - 10, "{:?}", report.stats);
    assert_eq!(report.stats.resimulated, 8 * report.stats.rollbacks);
    assert_eq!(report.stats.deepest, 8);
}

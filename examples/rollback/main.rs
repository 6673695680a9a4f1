//! Rollback networking with [bevy_ggrs](https://github.com/gschup/bevy_ggrs): two players,
//! each walking a character and kicking a ball, in a level with a stack, a hanging chain, a
//! motorised paddle and a pile of 240 boxes and balls (267 bodies). Bots press the buttons.
//!
//! The physics step runs in GGRS's rollback schedule (`PhysicsPlugin::new(GgrsSchedule)`),
//! and `PhysicsRollbackPlugin` (in `game.rs`, about 60 lines with its docs, to copy into a
//! game) saves a `PhysicsSnapshot` each frame, restores it when GGRS rolls back, and adds the
//! physics checksum to each frame's checksum. Headless; three ways to run it:
//!
//! ```text
//! # A SyncTest: each frame, roll back 8 frames, re-simulate and compare checksums (600 frames).
//! cargo run --release --example rollback
//!
//! # Two peers in two processes over UDP on 127.0.0.1, every packet delayed by 60 ms and 5 %
//! # dropped, with GGRS's desync detection comparing every confirmed frame (3,000 frames,
//! # about 55 s); it starts both peers and prints what each saw.
//! cargo run --release --example rollback -- p2p
//!
//! # The same, with one peer changing a body outside the rollback schedule at frame 1,500 (a
//! # desync, to see that detection finds it).
//! cargo run --release --example rollback -- p2p --desync-at 1500
//! ```
//!
//! `p2p` starts this program twice with `peer --player N --port P --remote-port Q`, which runs
//! one peer; the options `--frames`, `--latency-ms` and `--loss` apply to both.

mod game;
mod p2p;

use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use p2p::{PeerOptions, run_peer};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        None | Some("synctest") => synctest(&args),
        Some("p2p") => pair(&args),
        Some("peer") => peer(&args),
        Some(other) => Err(format!("unknown mode {other}: synctest, p2p or peer").into()),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("rollback: {error}");
            ExitCode::FAILURE
        }
    }
}

type Outcome = Result<bool, Box<dyn std::error::Error>>;

/// The value after `--name`, parsed, or `default`.
fn option<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> Result<T, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => (args.get(i + 1))
            .and_then(|value| value.parse().ok())
            .ok_or_else(|| format!("{name} needs a valid value")),
    }
}

fn synctest(args: &[String]) -> Outcome {
    let frames = option(args, "--frames", 600)?;
    let check_distance = option(args, "--check-distance", 8)?;
    println!("SyncTest: {frames} frames, check distance {check_distance}, two bot players");
    let started = Instant::now();
    let report = game::run_synctest(frames, check_distance)?;
    let stats = &report.stats;
    println!(
        "{} frames in {:.1} s: {} rollbacks, {} frames re-simulated (deepest {}), {} frames \
         mismatched; final physics checksum {:016x}",
        report.frames,
        started.elapsed().as_secs_f64(),
        stats.rollbacks,
        stats.resimulated,
        stats.deepest,
        report.mismatched_frames.len(),
        report.final_checksum,
    );
    let (bytes, shared, bodies) = stats.snapshot_bytes;
    println!(
        "last snapshot: {bytes} bytes for {bodies} bodies ({} per body), {shared} of them \
         shared with the snapshot before (bodies at rest)",
        bytes / bodies.max(1)
    );
    if !report.mismatched_frames.is_empty() {
        println!("mismatched frames: {:?}", report.mismatched_frames);
    }
    Ok(report.mismatched_frames.is_empty())
}

fn peer_options(args: &[String]) -> Result<PeerOptions, String> {
    let desync_at: i32 = option(args, "--desync-at", -1)?;
    let player = option(args, "--player", 0)?;
    if player >= game::PLAYERS {
        return Err(format!("--player must be below {}", game::PLAYERS));
    }
    Ok(PeerOptions {
        player,
        port: option(args, "--port", 7000)?,
        remote_port: option(args, "--remote-port", 7001)?,
        frames: option(args, "--frames", 3000)?,
        latency: Duration::from_millis(option(args, "--latency-ms", 60)?),
        loss: option(args, "--loss", 0.05)?,
        desync_at: (desync_at >= 0).then_some(desync_at),
    })
}

fn peer(args: &[String]) -> Outcome {
    let report = run_peer(&peer_options(args)?)?;
    println!("{}", report.line());
    Ok(report.finished && report.desyncs == 0)
}

/// Starts both peers as child processes, waits for them and compares what they report.
fn pair(args: &[String]) -> Outcome {
    let options = peer_options(args)?;
    let ports = [free_udp_port()?, free_udp_port()?];
    println!(
        "P2P: two peers over UDP on 127.0.0.1 (ports {} and {}), {} ms latency, {:.0} % loss, {} \
         frames, desync detection on every confirmed frame",
        ports[0],
        ports[1],
        options.latency.as_millis(),
        options.loss * 100.0,
        options.frames
    );
    let exe = std::env::current_exe()?;
    let children = (0..2)
        .map(|player| {
            let mut command = Command::new(&exe);
            command.args(["peer", "--player", &player.to_string()]);
            command.args(["--port", &ports[player].to_string()]);
            command.args(["--remote-port", &ports[1 - player].to_string()]);
            command.args(["--frames", &options.frames.to_string()]);
            command.args(["--latency-ms", &options.latency.as_millis().to_string()]);
            command.args(["--loss", &options.loss.to_string()]);
            // Only player 1 changes state outside the rollback schedule.
            if let (1, Some(frame)) = (player, options.desync_at) {
                command.args(["--desync-at", &frame.to_string()]);
            }
            command.stdout(Stdio::piped()).spawn()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut reports = Vec::new();
    for (player, child) in children.into_iter().enumerate() {
        let output = child.wait_with_output()?;
        let text = String::from_utf8_lossy(&output.stdout);
        let line = text
            .lines()
            .find(|l| l.starts_with("REPORT"))
            .unwrap_or("REPORT none");
        println!("peer {player}: {}", &line["REPORT ".len()..]);
        reports.push(line.to_string());
    }
    let field = |report: &str, key: &str| {
        let prefix = format!("{key}=");
        (report.split_whitespace())
            .find_map(|kv| kv.strip_prefix(&prefix).map(str::to_string))
            .unwrap_or_default()
    };
    let finished = reports.iter().all(|r| field(r, "finished") == "true");
    let desyncs: u64 = (reports.iter())
        .map(|r| field(r, "desyncs").parse().unwrap_or(0))
        .sum();
    let same_states = field(&reports[0], "digest") == field(&reports[1], "digest");
    println!(
        "both confirmed {} frames: {finished}; desyncs detected: {desyncs}; the two peers' \
         physics checksums of frames 0..={} agree: {same_states}",
        options.frames, options.frames
    );
    Ok(finished && desyncs == 0 && same_states)
}

/// A UDP port that is free now (the system picks it).
fn free_udp_port() -> Result<u16, std::io::Error> {
    Ok(std::net::UdpSocket::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

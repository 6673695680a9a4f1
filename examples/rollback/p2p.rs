//! One peer of a two-player P2P session over UDP, through a socket that delays and drops
//! packets like a poor connection.

use std::collections::VecDeque;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_ggrs::RollbackFrameCount;
use bevy_ggrs::ggrs::{
    self, DesyncDetection, Message, NonBlockingSocket, SessionBuilder, UdpNonBlockingSocket,
};
use bevy_ggrs::prelude::*;
use impetus3d::prelude::*;

use crate::game::{self, Config, PLAYERS, RollbackStats};

/// How a peer runs.
#[derive(Clone, Debug)]
pub struct PeerOptions {
    /// This peer's player handle (0 or 1).
    pub player: usize,
    /// The UDP port this peer listens on.
    pub port: u16,
    /// The other peer's UDP port on 127.0.0.1.
    pub remote_port: u16,
    /// Confirmed frames to run.
    pub frames: i32,
    /// Delay added to every packet sent.
    pub latency: Duration,
    /// Fraction of packets dropped.
    pub loss: f64,
    /// Change a body's velocity outside the rollback schedule when this frame is first
    /// reached: a bug of the kind desync detection exists for (to check that it finds one).
    pub desync_at: Option<i32>,
}

/// What a peer saw, printed as one `key=value` line for the parent process.
#[derive(Debug, Default)]
pub struct PeerReport {
    /// Whether the peer confirmed all its frames before its deadline.
    pub finished: bool,
    /// The last confirmed frame.
    pub confirmed: i32,
    /// See [`RollbackStats::rollbacks`].
    pub rollbacks: u64,
    /// See [`RollbackStats::resimulated`].
    pub resimulated: u64,
    /// See [`RollbackStats::deepest`].
    pub deepest: i32,
    /// `DesyncDetected` events from GGRS (checksums of a confirmed frame that differ).
    pub desyncs: u64,
    /// A hash of the physics checksums of frames 0 to `frames`, in order: equal on two peers
    /// only if every one of those frames' states was.
    pub digest: u64,
    /// Packets sent and dropped by the lossy socket.
    pub sent: u64,
    /// See [`PeerReport::sent`].
    pub dropped: u64,
    /// Round-trip time to the other peer at the end, as GGRS measures it, ms.
    pub ping_ms: u128,
    /// Wall-clock time of the run, s.
    pub seconds: f64,
}

impl PeerReport {
    /// The report as one line of `key=value` pairs.
    pub fn line(&self) -> String {
        format!(
            "REPORT finished={} confirmed={} rollbacks={} resimulated={} deepest={} desyncs={} \
             digest={:016x} sent={} dropped={} ping_ms={} seconds={:.1}",
            self.finished,
            self.confirmed,
            self.rollbacks,
            self.resimulated,
            self.deepest,
            self.desyncs,
            self.digest,
            self.sent,
            self.dropped,
            self.ping_ms,
            self.seconds,
        )
    }
}

/// A UDP socket that holds every packet it sends for a fixed latency and drops a fraction of
/// them (a fixed pseudo-random sequence). Packets go out when GGRS next sends or receives,
/// which it does every frame, so the delay is the latency plus up to one frame.
pub struct LossySocket {
    inner: UdpNonBlockingSocket,
    latency: Duration,
    loss: f64,
    random: u64,
    queue: VecDeque<(Instant, Message, SocketAddr)>,
}

/// Packets the socket was asked to send, and of those dropped (one peer per process; the
/// socket itself belongs to the session, out of reach of the report).
static SENT: AtomicU64 = AtomicU64::new(0);
static DROPPED: AtomicU64 = AtomicU64::new(0);

impl LossySocket {
    fn new(inner: UdpNonBlockingSocket, latency: Duration, loss: f64, seed: u64) -> Self {
        Self {
            inner,
            latency,
            loss,
            random: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            queue: VecDeque::new(),
        }
    }

    /// A uniform number in [0, 1) (xorshift64).
    fn uniform(&mut self) -> f64 {
        self.random ^= self.random << 13;
        self.random ^= self.random >> 7;
        self.random ^= self.random << 17;
        (self.random >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Sends the packets whose delay is over.
    fn release_due(&mut self) {
        let now = Instant::now();
        while self.queue.front().is_some_and(|(due, ..)| *due <= now) {
            let (_, message, to) = self.queue.pop_front().expect("checked");
            self.inner.send_to(&message, &to);
        }
    }
}

impl NonBlockingSocket<SocketAddr> for LossySocket {
    fn send_to(&mut self, message: &Message, to: &SocketAddr) {
        self.release_due();
        SENT.fetch_add(1, Ordering::Relaxed);
        if self.uniform() < self.loss {
            DROPPED.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let due = Instant::now() + self.latency;
        self.queue.push_back((due, message.clone(), *to));
    }

    fn receive_all_messages(&mut self) -> Vec<(SocketAddr, Message)> {
        self.release_due();
        self.inner.receive_all_messages()
    }
}

/// `DesyncDetected` events seen.
#[derive(Resource, Default)]
struct DesyncEvents(u64);

/// Runs one peer until it has confirmed `options.frames` frames (and then a few seconds more,
/// so that the other peer gets the inputs it needs to confirm them too), or until a deadline.
pub fn run_peer(options: &PeerOptions) -> Result<PeerReport, Box<dyn std::error::Error>> {
    let udp = UdpNonBlockingSocket::bind_to_port(options.port)?;
    let socket = LossySocket::new(
        udp,
        options.latency,
        options.loss,
        options.player as u64 + 1,
    );
    let remote = SocketAddr::from((Ipv4Addr::LOCALHOST, options.remote_port));
    let mut builder = SessionBuilder::<Config>::new()
        .with_num_players(PLAYERS)?
        // A checksum of the physics state of every confirmed frame goes to the other peer.
        .with_desync_detection_mode(DesyncDetection::On { interval: 1 })
        .with_max_prediction_window(8)
        .with_input_delay(2)
        .with_disconnect_timeout(Duration::from_secs(10));
    for handle in 0..PLAYERS {
        let kind = if handle == options.player {
            PlayerType::Local
        } else {
            PlayerType::Remote(remote)
        };
        builder = builder.add_player(kind, handle)?;
    }
    let session = builder.start_p2p_session(socket)?;

    let mut app = game::game_app();
    app.insert_resource(TimeUpdateStrategy::Automatic)
        .insert_resource(Session::P2P(session))
        .init_resource::<DesyncEvents>()
        .add_systems(ReadInputs, game::read_bot_inputs)
        .add_systems(Update, count_events);
    if let Some(frame) = options.desync_at {
        app.add_systems(Update, move |world: &mut World| desync_once(world, frame));
    }

    let started = Instant::now();
    let frame_time = Duration::from_secs_f64(1.0 / game::FPS as f64);
    let frames = options.frames.max(0) as u32;
    let deadline = started + Duration::from_secs(30) + frame_time * frames * 3;
    let mut done_at = None;
    let mut next_update = started;
    loop {
        app.update();
        let now = Instant::now();
        let confirmed = confirmed_frame(&app);
        if done_at.is_none() && confirmed >= options.frames {
            done_at = Some(now);
        }
        let grace_over = done_at.is_some_and(|at| now - at > Duration::from_secs(3));
        if grace_over || now > deadline {
            break;
        }
        next_update += frame_time / 2;
        if let Some(wait) = next_update.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    Ok(report(
        &mut app,
        options,
        done_at.is_some(),
        started.elapsed(),
    ))
}

/// The session's last confirmed frame (-1 before the first).
fn confirmed_frame(app: &App) -> i32 {
    match app.world().get_resource::<Session<Config>>() {
        Some(Session::P2P(session)) => session.confirmed_frame(),
        _ => -1,
    }
}

fn count_events(mut session: ResMut<Session<Config>>, mut desyncs: ResMut<DesyncEvents>) {
    let Session::P2P(session) = session.as_mut() else {
        return;
    };
    for event in session.events() {
        match event {
            ggrs::GgrsEvent::DesyncDetected { frame, .. } => {
                desyncs.0 += 1;
                if desyncs.0 <= 3 {
                    eprintln!("peer: desync detected at frame {frame}");
                }
            }
            ggrs::GgrsEvent::Disconnected { .. } => eprintln!("peer: the other peer disconnected"),
            _ => {}
        }
    }
}

/// Nudges the first body the query finds when `frame` is reached: a change outside the
/// rollback schedule that the other peer never makes.
fn desync_once(world: &mut World, frame: i32) {
    if world.resource::<RollbackFrameCount>().0 != frame {
        return;
    }
    let mut bodies = world.query::<&mut LinearVelocity>();
    if let Some(mut velocity) = bodies.iter_mut(world).next() {
        velocity.0.x += 0.01;
    }
}

fn report(app: &mut App, options: &PeerOptions, finished: bool, elapsed: Duration) -> PeerReport {
    let world = app.world_mut();
    let desyncs = world.resource::<DesyncEvents>().0;
    let stats = std::mem::take(&mut *world.resource_mut::<RollbackStats>());
    let mut digest: u64 = 0xcbf2_9ce4_8422_2325;
    for (_, checksum) in stats.checksums.range(..=options.frames) {
        for byte in checksum.to_le_bytes() {
            digest = (digest ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    let ping_ms = match world.get_resource::<Session<Config>>() {
        Some(Session::P2P(session)) => {
            (session.network_stats(1 - options.player)).map_or(0, |stats| stats.ping)
        }
        _ => 0,
    };
    let confirmed = confirmed_frame(app);
    let (sent, dropped) = (
        SENT.load(Ordering::Relaxed),
        DROPPED.load(Ordering::Relaxed),
    );
    PeerReport {
        finished,
        confirmed,
        rollbacks: stats.rollbacks,
        resimulated: stats.resimulated,
        deepest: stats.deepest,
        desyncs,
        digest,
        sent,
        dropped,
        ping_ms,
        seconds: elapsed.as_secs_f64(),
    }
}

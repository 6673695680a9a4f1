//! The game both sessions run: its level, its inputs, the systems in GGRS's rollback schedule,
//! and [`PhysicsRollbackPlugin`], which lets GGRS save and load the physics state.
//!
//! Shared by the example (`main.rs`) and the SyncTest in the test suite
//! (`tests/rollback_ggrs.rs`).

use std::collections::BTreeMap;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_ggrs::ggrs::{self, SessionBuilder, SyncTestSession};
use bevy_ggrs::prelude::*;
use bevy_ggrs::{
    AdvanceWorld, AdvanceWorldSystems, ChecksumFlag, ChecksumPart, GgrsSnapshots, LoadWorld,
    LocalInputs, LocalPlayers, RollbackFrameCount, SaveWorld, SyncTestMismatch,
};
use impetus3d::math;
use impetus3d::prelude::*;
use serde::{Deserialize, Serialize};

/// Frames per second of the rollback schedule (and so the physics step).
pub const FPS: usize = 60;

/// Players in a session: each walks a character and kicks a ball.
pub const PLAYERS: usize = 2;

/// The GGRS configuration: [`PlayerInput`] is what the peers send each other.
pub type Config = GgrsConfig<PlayerInput>;

/// One player's input for one frame: a bit per button (GGRS sends it, so it is small).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerInput(pub u8);

impl PlayerInput {
    const FORWARD: u8 = 1 << 0;
    const BACK: u8 = 1 << 1;
    const LEFT: u8 = 1 << 2;
    const RIGHT: u8 = 1 << 3;
    const JUMP: u8 = 1 << 4;
    const KICK: u8 = 1 << 5;

    fn pressed(self, button: u8) -> bool {
        self.0 & button != 0
    }

    /// The walking direction on the ground plane (not normalised: diagonals are faster, as in
    /// many games).
    fn heading(self) -> Vec3 {
        let axis = |plus, minus| {
            f32::from(u8::from(self.pressed(plus))) - f32::from(u8::from(self.pressed(minus)))
        };
        Vec3::new(
            axis(Self::RIGHT, Self::LEFT),
            0.0,
            axis(Self::BACK, Self::FORWARD),
        )
    }
}

/// What a bot presses in `frame`: a button combination held for [`BOT_HOLD`] frames, changing
/// often enough that the other peer's predictions (the last input repeated) keep failing and
/// GGRS keeps rolling back. The same sequence on every run.
pub fn bot_input(player: usize, frame: u32) -> PlayerInput {
    let segment = (frame / BOT_HOLD) as u64 * PLAYERS as u64 + player as u64;
    // SplitMix64 of the segment: a fixed pseudo-random stream.
    let mut z = segment.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    // Walk most of the time, jump and kick now and then.
    let walk = (z & 0b1111) as u8;
    let jump = if z >> 8 & 0b111 == 0 {
        PlayerInput::JUMP
    } else {
        0
    };
    let kick = if z >> 12 & 0b11 == 0 {
        PlayerInput::KICK
    } else {
        0
    };
    PlayerInput(walk | jump | kick)
}

/// Frames a bot holds one input.
const BOT_HOLD: u32 = 12;

/// A player's character; `handle` is the player's GGRS handle.
#[derive(Component)]
pub struct Player {
    /// The player's GGRS handle.
    pub handle: usize,
}

/// A player's ball, kicked with [`PlayerInput::KICK`].
#[derive(Component)]
pub struct Ball {
    /// The GGRS handle of the player who kicks it.
    pub handle: usize,
}

/// Walking speed, m/s.
const SPEED: f32 = 3.0;
/// Take-off speed of a jump, m/s.
const JUMP_SPEED: f32 = 4.0;
/// A kick's impulse, N·s (the ball is 2.3 kg: about 2 m/s).
const KICK: f32 = 5.0;

/// Builds the level: the ground, a stack, a hanging chain, a motorised paddle sweeping a
/// pile of boxes and balls, and each player's character and ball. Bodies: 1 + 8 + 12 + 2 +
/// 240 + 4 = 267 (the chain's anchor and the paddle's post are static).
///
/// Every peer spawns the same entities in the same order (the determinism contract), with
/// the engine's deterministic math for the few angles, so peers on different CPUs agree too.
pub fn spawn_level(mut commands: Commands) {
    commands.spawn((
        RigidBody::Static,
        Collider::cuboid(40.0, 1.0, 40.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));
    // A stack of eight 1 m boxes.
    for level in 0..8 {
        commands.spawn((
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(5.0, 0.5 + level as f32, -4.0),
        ));
    }
    spawn_chain(&mut commands);
    spawn_paddle(&mut commands);
    // The pile: 240 boxes and balls dropped in a block 4 m across.
    for i in 0..240u32 {
        let (x, y, z) = (i % 6, i / 48, (i / 6) % 8);
        let at = Vec3::new(
            -6.5 + 0.7 * x as f32,
            0.6 + 0.7 * y as f32,
            -2.5 + 0.7 * z as f32,
        );
        let turn = math::rotation_about(Vec3::new(1.0, 2.0, 0.5).normalize(), 0.3 * i as f32);
        let collider = if i % 2 == 0 {
            Collider::cuboid(0.5, 0.5, 0.5)
        } else {
            Collider::sphere(0.25)
        };
        commands.spawn((
            RigidBody::Dynamic,
            collider,
            Transform::from_translation(at).with_rotation(turn),
        ));
    }
    for handle in 0..PLAYERS {
        let side = if handle == 0 { -1.0 } else { 1.0 };
        commands.spawn((
            Player { handle },
            CharacterController::default(),
            Collider::capsule(0.3, 1.0),
            Transform::from_xyz(2.0, 0.81, 3.0 * side),
        ));
        commands.spawn((
            Ball { handle },
            RigidBody::Dynamic,
            Collider::sphere(0.3),
            ExternalImpulse::default(),
            Transform::from_xyz(3.0, 0.3, 3.0 * side),
        ));
    }
}

/// Twelve 0.4 m balls joined by spherical joints, hung from a static anchor sideways so that
/// they swing down.
fn spawn_chain(commands: &mut Commands) {
    let anchor = Vec3::new(5.0, 7.0, 4.0);
    let mut previous = commands
        .spawn((RigidBody::Static, Transform::from_translation(anchor)))
        .id();
    let spacing = 0.5;
    for link in 1..=12 {
        let at = anchor + Vec3::X * (spacing * link as f32);
        let body = commands
            .spawn((
                RigidBody::Dynamic,
                Collider::sphere(0.2),
                Transform::from_translation(at),
            ))
            .id();
        commands.spawn(
            SphericalJoint::new(previous, body)
                .with_local_anchor1(Vec3::X * 0.5 * spacing)
                .with_local_anchor2(Vec3::X * -0.5 * spacing),
        );
        previous = body;
    }
}

/// A 5 m paddle on a hinge about the vertical, turned at 0.8 rad/s by a motor, sweeping
/// through the pile just above the ground.
fn spawn_paddle(commands: &mut Commands) {
    let pivot = Vec3::new(-4.5, 0.4, 0.0);
    let post = commands
        .spawn((RigidBody::Static, Transform::from_translation(pivot)))
        .id();
    let paddle = commands
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(5.0, 0.4, 0.2),
            Mass(20.0),
            Transform::from_translation(pivot),
        ))
        .id();
    commands.spawn(
        RevoluteJoint::new(post, paddle)
            .with_hinge_axis(Vec3::Y)
            .with_motor(JointMotor::velocity(0.8, 2000.0)),
    );
}

/// Turns each player's input into the character's walk, jumps and kicks, before the physics
/// step. Each player's systems touch only that player's entities, so the order in which the
/// query visits them does not matter.
pub fn apply_inputs(
    inputs: Res<PlayerInputs<Config>>,
    mut players: Query<(
        &Player,
        &Position,
        &mut CharacterController,
        &mut CharacterControllerState,
    )>,
    mut balls: Query<(&Ball, &Position, &mut ExternalImpulse), Without<Player>>,
) {
    for (player, at, mut controller, mut state) in &mut players {
        let (input, _) = inputs[player.handle];
        controller.desired_velocity = input.heading() * SPEED;
        if input.pressed(PlayerInput::JUMP) && state.grounded {
            state.jump(JUMP_SPEED);
        }
        if !input.pressed(PlayerInput::KICK) {
            continue;
        }
        for (ball, ball_at, mut impulse) in &mut balls {
            if ball.handle == player.handle {
                let direction = (ball_at.0 - at.0).with_y(0.0).normalize_or_zero() + Vec3::Y * 0.5;
                impulse.linear += direction * KICK;
            }
        }
    }
}

/// Lets GGRS save and load the physics state: a [`PhysicsSnapshot`] per frame in GGRS's
/// frame ring ([`GgrsSnapshots`]), restored when GGRS rolls back, and the
/// [`physics_checksum`] in each frame's checksum (what GGRS's desync detection and the
/// SyncTest compare).
///
/// This is the whole integration: the bodies need no `Rollback` component and no component
/// registration, since the snapshot holds every body, joint, character and contact. Add
/// `PhysicsPlugin::new(GgrsSchedule)` so that the step runs in GGRS's rollback schedule.
pub struct PhysicsRollbackPlugin;

impl Plugin for PhysicsRollbackPlugin {
    fn build(&self, app: &mut App) {
        type Snapshots = GgrsSnapshots<PhysicsSnapshot>;
        app.init_resource::<Snapshots>()
            .init_resource::<PhysicsChecksum>()
            .add_systems(
                SaveWorld,
                checksum_physics.in_set(SaveWorldSystems::Checksum),
            )
            .add_systems(
                SaveWorld,
                (
                    Snapshots::sync_depth,
                    Snapshots::discard_old_snapshots,
                    save_physics,
                )
                    .chain()
                    .in_set(SaveWorldSystems::Snapshot),
            )
            .add_systems(LoadWorld, load_physics.in_set(LoadWorldSystems::Data));
    }
}

/// The [`physics_checksum`] of the frame GGRS saved last.
#[derive(Resource, Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhysicsChecksum(pub u64);

fn checksum_physics(world: &mut World) {
    let checksum = physics_checksum(world);
    world.insert_resource(PhysicsChecksum(checksum));
    let part = ChecksumPart(u128::from(checksum));
    let mut parts =
        world.query_filtered::<&mut ChecksumPart, With<ChecksumFlag<PhysicsSnapshot>>>();
    match parts.single_mut(world) {
        Ok(mut ours) => *ours = part,
        Err(_) => {
            world.spawn((part, ChecksumFlag::<PhysicsSnapshot>::default()));
        }
    }
}

fn save_physics(world: &mut World) {
    let frame = world.resource::<RollbackFrameCount>().0;
    let snapshot = PhysicsSnapshot::capture(world);
    (world.resource_mut::<GgrsSnapshots<PhysicsSnapshot>>()).push(frame, snapshot);
}

fn load_physics(world: &mut World) {
    let frame = world.resource::<RollbackFrameCount>().0;
    world.resource_scope(
        |world, mut snapshots: Mut<GgrsSnapshots<PhysicsSnapshot>>| {
            snapshots.rollback(frame).get().restore(world);
        },
    );
}

/// Counts what the rollbacks did, for the example's report (not needed by a game).
struct RollbackStatsPlugin;

impl Plugin for RollbackStatsPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<RollbackStats>()
            .add_systems(
                SaveWorld,
                (record_checksum, record_snapshot_size.after(save_physics))
                    .in_set(SaveWorldSystems::Snapshot),
            )
            .add_systems(LoadWorld, count_rollback.after(LoadWorldSystems::Data))
            .add_systems(AdvanceWorld, count_frame.in_set(AdvanceWorldSystems::Last));
    }
}

/// What the rollbacks did.
#[derive(Resource, Default, Debug)]
pub struct RollbackStats {
    /// Rollbacks: loads of a saved state.
    pub rollbacks: u64,
    /// Frames simulated again after those loads.
    pub resimulated: u64,
    /// The deepest rollback: frames from the newest frame back to the loaded one.
    pub deepest: i32,
    /// The physics checksum saved for each frame; a re-simulated frame overwrites its entry,
    /// so after a frame is confirmed its entry is the confirmed state's.
    pub checksums: BTreeMap<i32, u64>,
    /// The newest frame simulated.
    newest: i32,
    /// The last saved snapshot's [`PhysicsSnapshot::size_in_bytes`] and
    /// [`PhysicsSnapshot::shared_bytes`], and its bodies.
    pub snapshot_bytes: (usize, usize, usize),
}

fn record_checksum(
    frame: Res<RollbackFrameCount>,
    checksum: Res<PhysicsChecksum>,
    mut stats: ResMut<RollbackStats>,
) {
    stats.checksums.insert(frame.0, checksum.0);
}

fn record_snapshot_size(
    frame: Res<RollbackFrameCount>,
    snapshots: Res<GgrsSnapshots<PhysicsSnapshot>>,
    mut stats: ResMut<RollbackStats>,
) {
    if let Some(snapshot) = snapshots.peek(frame.0) {
        let (bytes, shared) = (snapshot.size_in_bytes(), snapshot.shared_bytes());
        stats.snapshot_bytes = (bytes, shared, snapshot.body_count());
    }
}

fn count_rollback(frame: Res<RollbackFrameCount>, mut stats: ResMut<RollbackStats>) {
    stats.rollbacks += 1;
    stats.deepest = stats.deepest.max(stats.newest - frame.0);
}

fn count_frame(frame: Res<RollbackFrameCount>, mut stats: ResMut<RollbackStats>) {
    if frame.0 <= stats.newest {
        stats.resimulated += 1;
    }
    stats.newest = stats.newest.max(frame.0);
}

/// The game's app without its session: physics stepping in GGRS's rollback schedule, the
/// rollback plugin, the level and the input system. Headless; one `update` is one frame.
pub fn game_app() -> App {
    let frame = std::time::Duration::from_secs_f64(1.0 / FPS as f64);
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        GgrsPlugin::<Config>::default(),
        PhysicsPlugin::new(GgrsSchedule),
        PhysicsRollbackPlugin,
        RollbackStatsPlugin,
    ))
    .insert_resource(RollbackFrameRate(FPS))
    .insert_resource(TimeUpdateStrategy::ManualDuration(frame))
    .add_systems(Startup, spawn_level)
    .add_systems(
        GgrsSchedule,
        apply_inputs.before(PhysicsSystems::StepSimulation),
    );
    app
}

/// Reads the bots' inputs for the local players, for the frame the session is at (so that a
/// run's inputs, and so its states, are the same whatever the network did).
pub fn read_bot_inputs(
    mut commands: Commands,
    local: Res<LocalPlayers>,
    frame: Res<RollbackFrameCount>,
) {
    let frame = frame.0.max(0) as u32;
    let inputs = (local.0.iter()).map(|&handle| (handle, bot_input(handle, frame)));
    commands.insert_resource(LocalInputs::<Config>(inputs.collect()));
}

/// What a SyncTest run found.
#[derive(Debug)]
pub struct SyncTestReport {
    /// Frames advanced (new frames, not counting re-simulations).
    pub frames: u32,
    /// Frames whose checksum differed between the first simulation and a re-simulation.
    pub mismatched_frames: Vec<i32>,
    /// The rollbacks' statistics.
    pub stats: RollbackStats,
    /// The physics checksum at the end.
    pub final_checksum: u64,
}

/// Mismatches the SyncTest reported.
#[derive(Resource, Default)]
struct Mismatches(Vec<i32>);

/// Runs `frames` frames of a [`SyncTestSession`] with both players local and bots at the
/// buttons: every frame, GGRS loads the state of `check_distance` frames ago, re-simulates up
/// to the present and compares each re-simulated frame's checksum with the first one's.
pub fn run_synctest(frames: u32, check_distance: usize) -> Result<SyncTestReport, ggrs::GgrsError> {
    let session = synctest_session(check_distance)?;
    let mut app = game_app();
    app.insert_resource(Session::SyncTest(session))
        .init_resource::<Mismatches>()
        .add_systems(ReadInputs, read_bot_inputs)
        .add_observer(
            |mismatch: On<SyncTestMismatch>, mut found: ResMut<Mismatches>| {
                found.0.extend(&mismatch.event().mismatched_frames);
            },
        );
    for _ in 0..frames {
        app.update();
    }
    let world = app.world_mut();
    let mut mismatched_frames = std::mem::take(&mut world.resource_mut::<Mismatches>().0);
    mismatched_frames.sort_unstable();
    mismatched_frames.dedup();
    Ok(SyncTestReport {
        frames,
        mismatched_frames,
        final_checksum: physics_checksum(world),
        stats: std::mem::take(&mut *world.resource_mut::<RollbackStats>()),
    })
}

fn synctest_session(check_distance: usize) -> Result<SyncTestSession<Config>, ggrs::GgrsError> {
    let mut builder = SessionBuilder::<Config>::new()
        .with_num_players(PLAYERS)?
        .with_check_distance(check_distance)
        // GGRS keeps states for the prediction window, which must be longer than the check
        // distance.
        .with_max_prediction_window(check_distance + 1)
        .with_input_delay(2);
    for handle in 0..PLAYERS {
        builder = builder.add_player(PlayerType::Local, handle)?;
    }
    builder.start_synctest_session()
}

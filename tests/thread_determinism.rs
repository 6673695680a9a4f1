//! Results do not depend on the thread count, the build or the CPU: the serial build, the
//! `parallel` build with one compute thread and the `parallel` build with two give
//! bit-identical worlds, and that world's hash is [`GOLDEN`].
//!
//! **The cross-platform contract.** [`GOLDEN`] is the hash a port to another CPU (ARM, wasm)
//! must reproduce: the scene has contacts (boxes and balls in a pile), joints (a spherical
//! chain, pendulums, a motorised hinge, four hanging nets), velocity rows (a six-axis joint
//! with a limit and a drive) and a character walking into a stack, and it is built with the
//! engine's deterministic math (`impetus3d::math`, see its docs) and nothing else. The
//! engine's step calls no platform math (`clippy.toml` forbids it); shapes whose parry code
//! does (convex hulls and triangle meshes use `sin_cos` and `acos` inside parry) are left out
//! of the scene, and their results on other CPUs are not covered by the contract.
//!
//! Bevy's compute task pool is a process-wide singleton whose size is fixed when it is first
//! made, so each thread count runs in a child process: the test re-runs its own binary
//! (`--exact determinism_child`) with `IMPETUS_DETERMINISM_THREADS` set, and the child prints
//! a hash of the final state and how much of the solver and narrow phase ran in parallel.
//! Across the two builds (which `.ci/run` tests one after the other) the hash is compared
//! with [`GOLDEN`], the hash of this scene's final state, committed here, on every target.
//!
//! The golden hash changes whenever the physics changes (any change of the arithmetic, even a
//! reordering of two additions). After such a deliberate change, regenerate it with
//!
//! ```text
//! IMPETUS_PRINT_GOLDEN=1 cargo test --test thread_determinism -- --nocapture
//! ```
//!
//! and paste the printed value into [`GOLDEN`]; then check that
//! `cargo test --features parallel --test thread_determinism` agrees with it.

// Tests and examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`);
// the rule against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

use bevy::prelude::*;
use impetus3d::math;
use impetus3d::prelude::*;

/// The hash of the final state of [`scene`] after [`STEPS`] steps, on every target (the
/// cross-platform contract, see the module docs).
const GOLDEN: u64 = 0x58e0_c6f9_30ef_56a2;

/// Steps to run: the cubes land at about step 45 and pile up.
const STEPS: usize = 80;

/// Environment variable that makes [`determinism_child`] run the scene with this many
/// compute threads.
const THREADS_VAR: &str = "IMPETUS_DETERMINISM_THREADS";

/// 576 bodies (unit cubes and balls of radius 0.5 m, turned and spinning a little) in a
/// 12 × 4 × 12 grid 1.1 m apart, dropped from 2 m onto the ground, with a static box across
/// the middle for them to pile against: enough contacts (several hundred manifolds) for the
/// solver's stages and the narrow phase to run in parallel chunks.
fn scene() -> App {
    let mut app = impetus3d::headless_app(1.0 / 60.0);
    // Every step on the compute pool (the default would time some steps on one thread).
    app.insert_resource(ThreadUse::Parallel);
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::cuboid(100.0, 1.0, 100.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::cuboid(1.0, 1.0, 20.0),
        Transform::from_xyz(0.3, 0.5, 0.0).with_rotation(math::rotation_about(Vec3::Y, 0.2)),
    ));
    let mut seed: u32 = 12345;
    let mut random = move || {
        // A linear congruential generator: the same numbers on every platform.
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1 << 24) as f32 - 0.5
    };
    for i in 0..12 {
        for j in 0..4 {
            for k in 0..12 {
                let position = Vec3::new(
                    (i as f32 - 5.5) * 1.1 + 0.1 * random(),
                    2.0 + j as f32 * 1.1,
                    (k as f32 - 5.5) * 1.1 + 0.1 * random(),
                );
                let turn = Vec3::new(random(), random(), random());
                let rotation = math::rotation_from_vector(0.3 * turn);
                let collider = if (i + j + k) % 5 == 0 {
                    Collider::sphere(0.5)
                } else {
                    Collider::cuboid(1.0, 1.0, 1.0)
                };
                app.world_mut().spawn((
                    RigidBody::Dynamic,
                    collider,
                    SleepingDisabled,
                    Transform::from_translation(position).with_rotation(rotation),
                    AngularVelocity(Vec3::new(random(), random(), random())),
                ));
            }
        }
    }
    jointed_bodies_and_a_character(app.world_mut());
    hanging_nets(app.world_mut());
    app
}

/// Beside the pile: a chain of five balls on spherical joints swinging from a fixed point, four
/// pendulums, a plank turned by a motorised hinge, a box on a six-axis joint free to slide along x within a
/// limit and driven along it, and a character walking into a stack of three boxes.
fn jointed_bodies_and_a_character(world: &mut World) {
    let dynamic = |collider: Collider, at: Vec3| {
        (
            RigidBody::Dynamic,
            collider,
            SleepingDisabled,
            Transform::from_translation(at),
        )
    };
    let mut previous = world
        .spawn((RigidBody::Static, Transform::from_xyz(20.0, 8.0, 0.0)))
        .id();
    for i in 1..=5 {
        let at = Vec3::new(20.0 + 0.6 * i as f32, 8.0, 0.05 * i as f32);
        let ball = world.spawn(dynamic(Collider::sphere(0.2), at)).id();
        world.spawn(SphericalJoint::new(previous, ball).with_local_anchor2(Vec3::X * -0.6));
        previous = ball;
    }
    // Four pendulums that share no body: their joints are solved four at a time in lanes.
    for i in 0..4 {
        let pivot = Vec3::new(35.0 + 1.5 * i as f32, 6.0, 0.0);
        let anchor = world
            .spawn((RigidBody::Static, Transform::from_translation(pivot)))
            .id();
        let bob = pivot + Vec3::new(0.8, -0.2 * i as f32, 0.3);
        let ball = world.spawn(dynamic(Collider::sphere(0.2), bob)).id();
        world.spawn(SphericalJoint::new(anchor, ball).with_local_anchor2(pivot - bob));
    }
    let post = world
        .spawn((
            RigidBody::Static,
            Collider::cuboid(0.2, 3.0, 0.2),
            Transform::from_xyz(25.0, 1.5, 0.0),
        ))
        .id();
    let plank = world
        .spawn(dynamic(
            Collider::cuboid(2.0, 1.5, 0.1),
            Vec3::new(26.2, 1.5, 0.0),
        ))
        .id();
    world.spawn(
        RevoluteJoint::new(post, plank)
            .with_local_anchor1(Vec3::X * 0.1)
            .with_local_anchor2(Vec3::X * -1.1)
            .with_hinge_axis(Vec3::Y)
            .with_motor(JointMotor::velocity(1.5, 40.0)),
    );
    let rail = world
        .spawn((RigidBody::Static, Transform::from_xyz(30.0, 3.0, 0.0)))
        .id();
    let slider = world
        .spawn(dynamic(
            Collider::cuboid(0.5, 0.5, 0.5),
            Vec3::new(30.0, 3.0, 0.0),
        ))
        .id();
    world.spawn(
        D6Joint::new(rail, slider)
            .with_limit(D6Axis::X, -1.0, 1.0)
            .with_drive(D6Axis::X, D6Drive::new(50.0, 5.0))
            .with_drive_target(D6Axis::X, 2.0, 0.0),
    );
    for level in 0..3 {
        let at = Vec3::new(-17.0, 0.5 + level as f32, 0.0);
        world.spawn(dynamic(Collider::cuboid(1.0, 1.0, 1.0), at));
    }
    world.spawn((
        CharacterController {
            desired_velocity: Vec3::X * 2.0,
            ..default()
        },
        Collider::capsule(0.3, 1.0),
        Transform::from_xyz(-20.0, 0.81, 0.0),
    ));
}

/// Four nets of 4 × 4 balls, each ball joined to its right and lower neighbours by spherical
/// joints and the top row hinged to a static bar: four separate groups of joints, enough of
/// them for the joint passes to run in parallel chunks (whole groups at a time), with joints
/// solved four at a time in lanes and hinges on the general path.
fn hanging_nets(world: &mut World) {
    for net in 0..4 {
        let corner = Vec3::new(-30.0, 8.0, 3.0 * net as f32);
        let bar = world
            .spawn((RigidBody::Static, Transform::from_translation(corner)))
            .id();
        let mut balls = [[Entity::PLACEHOLDER; 4]; 4];
        for (row, line) in balls.iter_mut().enumerate() {
            for (column, ball) in line.iter_mut().enumerate() {
                let at = corner + Vec3::new(0.6 * column as f32, -0.6 * (row + 1) as f32, 0.0);
                *ball = world
                    .spawn((
                        RigidBody::Dynamic,
                        Collider::sphere(0.2),
                        SleepingDisabled,
                        Transform::from_translation(at),
                        LinearVelocity(Vec3::Z * (0.5 + 0.3 * net as f32)),
                    ))
                    .id();
            }
        }
        for row in 0..4 {
            for column in 0..4 {
                let ball = balls[row][column];
                if column + 1 < 4 {
                    world.spawn(
                        SphericalJoint::new(ball, balls[row][column + 1])
                            .with_local_anchor1(Vec3::X * 0.3)
                            .with_local_anchor2(Vec3::X * -0.3),
                    );
                }
                if row + 1 < 4 {
                    world.spawn(
                        SphericalJoint::new(ball, balls[row + 1][column])
                            .with_local_anchor1(Vec3::Y * -0.3)
                            .with_local_anchor2(Vec3::Y * 0.3),
                    );
                }
            }
        }
        for (column, &ball) in balls[0].iter().enumerate() {
            world.spawn(
                RevoluteJoint::new(bar, ball)
                    .with_local_anchor1(Vec3::X * 0.6 * column as f32)
                    .with_local_anchor2(Vec3::Y * 0.6)
                    .with_hinge_axis(Vec3::X),
            );
        }
    }
}

/// Runs the scene and returns the final state's hash and the parallel counters.
fn run_scene() -> (u64, u64, u64, u64) {
    let mut app = scene();
    for _ in 0..STEPS {
        app.update();
    }
    let counters = &impetus3d::schedule::PARALLEL_COUNTERS;
    let ordering = std::sync::atomic::Ordering::Relaxed;
    (
        physics_checksum(app.world_mut()),
        counters.parallel_stages.load(ordering),
        counters.helper_chunks.load(ordering),
        counters.joint_stages.load(ordering),
    )
}

/// The child: runs the scene on a compute pool of `IMPETUS_DETERMINISM_THREADS` threads and
/// prints the result. Without the variable (a plain `cargo test`) it does nothing.
#[test]
fn determinism_child() {
    let Ok(threads) = std::env::var(THREADS_VAR) else {
        return;
    };
    let threads: usize = threads.parse().expect("a thread count");
    bevy::tasks::ComputeTaskPool::get_or_init(|| {
        bevy::tasks::TaskPoolBuilder::new()
            .num_threads(threads)
            .build()
    });
    let (hash, stages, helper_chunks, joint_stages) = run_scene();
    println!(
        "RESULT hash={hash:016x} parallel_stages={stages} helper_chunks={helper_chunks} \
         joint_stages={joint_stages}"
    );
}

/// Runs [`determinism_child`] in a child process with `threads` compute threads.
#[cfg(feature = "parallel")]
fn run_child(threads: usize) -> (u64, u64, u64, u64) {
    let output = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args([
            "--exact",
            "determinism_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(THREADS_VAR, threads.to_string())
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child with {threads} threads failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("RESULT ").map(|(_, result)| result))
        .unwrap_or_else(|| panic!("no result from the child with {threads} threads:\n{stdout}"));
    let field = |name: &str| {
        line.split_whitespace()
            .find_map(|f| f.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {line}"))
    };
    (
        u64::from_str_radix(field("hash="), 16).expect("a hex hash"),
        field("parallel_stages=").parse().expect("a count"),
        field("helper_chunks=").parse().expect("a count"),
        field("joint_stages=").parse().expect("a count"),
    )
}

/// Compares `hash` with [`GOLDEN`].
fn check_golden(hash: u64, build: &str) {
    if std::env::var("IMPETUS_PRINT_GOLDEN").is_ok() {
        println!("GOLDEN = 0x{hash:016x} ({build} build)");
        return;
    }
    assert_eq!(
        hash, GOLDEN,
        "the {build} build's final state (0x{hash:016x}) differs from GOLDEN (0x{GOLDEN:016x}): \
         if the physics changed on purpose, regenerate GOLDEN (see the module docs); on another \
         CPU, the port breaks the cross-platform contract"
    );
}

/// Every [`SolverLanes`] choice (contacts eight, four or one at a time, spherical joints four
/// or one at a time) gives the golden state: what a CPU without AVX, or without vector
/// registers at all, must compute.
#[cfg(not(feature = "parallel"))]
#[test]
fn every_lane_width_gives_the_golden_state() {
    for lanes in [SolverLanes::Widest, SolverLanes::Four, SolverLanes::One] {
        let mut app = scene();
        app.insert_resource(SolverConfig { lanes, ..default() });
        for _ in 0..STEPS {
            app.update();
        }
        check_golden(
            physics_checksum(app.world_mut()),
            &format!("{lanes:?} lanes"),
        );
    }
}

#[cfg(not(feature = "parallel"))]
#[test]
fn serial_build_matches_the_golden_state() {
    let (hash, stages, _, _) = run_scene();
    assert_eq!(stages, 0, "the serial build ran parallel stages");
    check_golden(hash, "serial");
}

#[cfg(feature = "parallel")]
#[test]
fn one_and_two_threads_and_the_serial_build_agree() {
    let (one, stages_one, _, _) = run_child(1);
    let (two, stages_two, helper_chunks, joint_stages) = run_child(2);
    println!(
        "1 thread: 0x{one:016x}, {stages_one} parallel stages; 2 threads: 0x{two:016x}, \
         {stages_two} parallel stages ({joint_stages} of joint passes), {helper_chunks} chunks \
         run by the helper thread"
    );
    // With one thread nothing runs in parallel; with two the solver stages, the narrow phase
    // and the joint passes must have (or this test compares the serial path with itself).
    assert_eq!(stages_one, 0, "one thread ran parallel stages");
    assert!(stages_two > 0, "two threads ran no parallel stage");
    assert!(
        joint_stages > 0,
        "two threads ran no joint passes in parallel"
    );
    assert_eq!(one, two, "1 and 2 compute threads give different results");
    check_golden(two, "parallel");
}

//! A deterministic fuzzer: random scenes of random shapes (1 mm to 100 m), masses (ratios to
//! 1:10,000), joints between random pairs (static bodies and despawned entities included),
//! with bad values (NaN, ∞, negative) written into components mid-run and bodies despawned and
//! spawned, 300 steps each.
//!
//! Checked every step: nothing panics; no body that was not itself given a bad value has a
//! non-finite pose or velocity; and in scenes left alone (no joints, bad values, despawns or
//! kinematic bodies; bodies are spawned apart) the mechanical energy never grows past its
//! largest value in the first 10 steps by more than 10 %.
//!
//! CI runs 200 scenes. A longer run:
//!
//! ```text
//! FUZZ_SCENES=100000 cargo test --release --test fuzz
//! ```
//!
//! (`FUZZ_FIRST` picks the first seed; a failure names its seed and step, and
//! `FUZZ_FIRST=<seed> FUZZ_SCENES=1 FUZZ_VERBOSE=1` replays it, printing every body's state
//! after every step.)
//!
//! This binary also holds the other tests of untrusted input and faults, which want Bevy's
//! compute pool at two threads (every test here makes it so before its first app, see
//! `common::two_compute_threads`): tampered level files (`level_files`), the level-file fuzzer
//! (`level_fuzz`, with the `serialize` feature) and panics in user code (`panic_safety`).

// Tests and examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`);
// the rule against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

mod common;
mod joints_common;

#[cfg(feature = "serialize")]
#[path = "level_files.rs"]
mod level_files;
#[cfg(feature = "serialize")]
#[path = "level_fuzz.rs"]
mod level_fuzz;
#[path = "panic_safety.rs"]
mod panic_safety;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;
use joints_common::mechanical_energy;

/// splitmix64: small, fast and good enough to drive a scene builder.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
    /// Log-uniform in [lo, hi].
    fn log(&mut self, lo: f32, hi: f32) -> f32 {
        (lo.ln() + (hi.ln() - lo.ln()) * self.unit()).exp()
    }
    fn chance(&mut self, p: f32) -> bool {
        self.unit() < p
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn vec(&mut self, half: f32) -> Vec3 {
        Vec3::new(
            self.range(-half, half),
            self.range(-half, half),
            self.range(-half, half),
        )
    }
    fn rotation(&mut self) -> Quat {
        Quat::from_scaled_axis(self.vec(std::f32::consts::PI))
    }
}

/// A random collider and a radius that bounds it about its origin.
fn shape(rng: &mut Rng) -> (Collider, f32) {
    let size = rng.log(1e-3, 100.0);
    let a = (size * rng.log(0.2, 5.0)).clamp(1e-3, 100.0);
    let b = (size * rng.log(0.2, 5.0)).clamp(1e-3, 100.0);
    let collider = match rng.below(5) {
        0 => return (Collider::sphere(0.5 * size), 0.5 * size),
        1 => Collider::cuboid(size, a, b),
        2 => Collider::capsule(0.5 * size, a),
        3 => Collider::cylinder(0.5 * size, a),
        _ => {
            let points: Vec<Vec3> = (0..8).map(|_| rng.vec(0.5 * size)).collect();
            Collider::convex_hull(points).unwrap_or_else(|| Collider::sphere(0.5 * size))
        }
    };
    // Half the diagonal of the largest box any of them fits in.
    (collider, 0.5 * Vec3::new(size, a, b).length() + 0.5 * size)
}

/// Spawns a random body where it overlaps neither the ground (y < 0) nor any body in
/// `placed` (centres and bounding radii), or nothing if 20 tries find no room.
fn spawn_body(
    app: &mut App,
    rng: &mut Rng,
    placed: &mut Vec<(Vec3, f32)>,
) -> Option<(Entity, bool)> {
    let kind = match rng.below(10) {
        0 => RigidBody::Static,
        1 => RigidBody::Kinematic,
        _ => RigidBody::Dynamic,
    };
    let (collider, radius) = shape(rng);
    let at = (0..20)
        .map(|_| {
            let spread = 20.0 + radius;
            Vec3::new(
                rng.range(-spread, spread),
                radius + rng.range(0.0, 40.0),
                rng.range(-spread, spread),
            )
        })
        .find(|p| placed.iter().all(|(q, r)| p.distance(*q) > radius + r))?;
    placed.push((at, radius));
    let e = spawn(
        app,
        (
            kind,
            collider,
            Transform::from_translation(at).with_rotation(rng.rotation()),
            LinearVelocity(rng.vec(10.0)),
            AngularVelocity(rng.vec(5.0)),
            Friction::new(rng.range(0.0, 1.5)),
            Restitution::new(rng.range(0.0, 1.0)),
        ),
    );
    if rng.chance(0.5) {
        set(app, e, Mass(rng.log(0.01, 100.0)));
    }
    Some((e, kind == RigidBody::Kinematic))
}

fn spawn_joint(app: &mut App, rng: &mut Rng, a: Entity, b: Entity) {
    let (r1, r2) = (rng.vec(1.0), rng.vec(1.0));
    match rng.below(6) {
        0 => spawn(app, FixedJoint::new(a, b).with_local_anchor1(r1)),
        1 => spawn(app, SphericalJoint::new(a, b).with_local_anchor2(r2)),
        2 => spawn(app, RevoluteJoint::new(a, b).with_local_anchor1(r1)),
        3 => spawn(
            app,
            PrismaticJoint::new(a, b).with_limits(-rng.range(0.0, 2.0), rng.range(0.0, 2.0)),
        ),
        4 => spawn(
            app,
            DistanceJoint::new(a, b).with_limits(rng.range(0.0, 2.0), rng.range(2.0, 4.0)),
        ),
        _ => spawn(
            app,
            D6Joint::new(a, b)
                .with_local_anchor1(r1)
                .with_swing_cone(rng.range(0.1, 1.5), rng.range(0.1, 1.5)),
        ),
    };
}

/// Writes a bad value into one of the body's components (or despawns it).
fn poison(app: &mut App, rng: &mut Rng, e: Entity) {
    if app.world().get_entity(e).is_err() {
        return;
    }
    let bad = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -1.0, 0.0][rng.below(5)];
    match rng.below(12) {
        0 => set(app, e, LinearVelocity(Vec3::splat(bad))),
        1 => set(app, e, AngularVelocity(Vec3::new(bad, 1.0, 0.0))),
        2 => set(app, e, Position(Vec3::new(0.0, bad, 0.0))),
        3 => set(app, e, Transform::from_xyz(bad, 0.0, 0.0)),
        4 => set(app, e, Mass(bad)),
        5 => set(app, e, Friction::new(bad)),
        6 => set(app, e, Restitution::new(bad)),
        7 => set(app, e, GravityScale(bad)),
        8 => set(app, e, LinearDamping(bad)),
        9 => set(app, e, ExternalImpulse::new(Vec3::splat(bad))),
        10 => set(app, e, Collider::sphere(bad)),
        _ => {
            app.world_mut().despawn(e);
        }
    }
}

/// Kinetic (linear and angular) plus potential energy (above y = 0) of the dynamic bodies.
fn energy(app: &App, bodies: &[Entity]) -> f64 {
    bodies
        .iter()
        .filter(|&&e| app.world().get::<RigidBody>(e) == Some(&RigidBody::Dynamic))
        .map(|&e| mechanical_energy(app, e))
        .sum()
}

fn finite(app: &App, e: Entity) -> bool {
    let world = app.world();
    let (Some(p), Some(r), Some(v), Some(w)) = (
        world.get::<Position>(e),
        world.get::<Rotation>(e),
        world.get::<LinearVelocity>(e),
        world.get::<AngularVelocity>(e),
    ) else {
        return true;
    };
    p.0.is_finite() && r.0.is_finite() && v.0.is_finite() && w.0.is_finite()
}

/// Prints every body's state after step `k` (and, at the first step, its shape and material):
/// what `FUZZ_VERBOSE=1` shows when replaying a seed.
fn trace(app: &App, bodies: &[Entity], k: usize) {
    let world = app.world();
    for &e in bodies {
        let Some(rb) = world.get::<RigidBody>(e) else {
            continue;
        };
        if k == 0 {
            let shape = world
                .get::<Collider>(e)
                .map(|c| format!("{:?}", c.shape().as_typed_shape()));
            let material = (
                world.get::<Friction>(e),
                world.get::<Restitution>(e),
                world.get::<Mass>(e),
            );
            eprintln!("  {e}: {rb:?} {shape:?} {material:?}");
        }
        eprintln!(
            "  step {k} {e}: p {} q {:?} v {} w {} E {:.4e} J",
            position(app, e),
            rotation(app, e).to_array(),
            velocity(app, e),
            angular_velocity(app, e),
            mechanical_energy(app, e)
        );
    }
}

/// Builds and runs scene `seed`; returns an error naming the seed and step on a failure.
fn run_scene(seed: u64) -> Result<(), String> {
    let mut rng = Rng(seed);
    let mut app = app();
    if rng.chance(0.8) {
        ground(&mut app);
    }
    let mut bodies = Vec::new();
    let mut placed = Vec::new();
    let mut kinematic = false;
    for _ in 0..1 + rng.below(16) {
        if let Some((e, k)) = spawn_body(&mut app, &mut rng, &mut placed) {
            bodies.push(e);
            kinematic |= k;
        }
    }
    if bodies.is_empty() {
        return Ok(());
    }
    let missing = app.world_mut().spawn_empty().id();
    app.world_mut().despawn(missing);
    let joints = if rng.chance(0.5) {
        rng.below(bodies.len() + 1)
    } else {
        0
    };
    for _ in 0..joints {
        let a = bodies[rng.below(bodies.len())];
        let b = if rng.chance(0.1) {
            missing
        } else {
            bodies[rng.below(bodies.len())]
        };
        spawn_joint(&mut app, &mut rng, a, b);
    }
    let meddles = rng.chance(0.6);
    let mut poisoned = Vec::new();
    let mut reference = f64::MIN;
    for k in 0..300 {
        if meddles && rng.chance(0.03) {
            let e = bodies[rng.below(bodies.len())];
            poison(&mut app, &mut rng, e);
            poisoned.push(e);
        }
        if meddles
            && rng.chance(0.01)
            && let Some((e, _)) = spawn_body(&mut app, &mut rng, &mut placed)
        {
            bodies.push(e);
        }
        step(&mut app, 1);
        for &e in &bodies {
            if !poisoned.contains(&e) && !finite(&app, e) {
                return Err(format!("seed {seed}, step {k}: {e} went non-finite"));
            }
        }
        if std::env::var("FUZZ_VERBOSE").is_ok() {
            trace(&app, &bodies, k);
        }
        // Joints spawned between arbitrary poses snap their bodies together, and kinematic
        // bodies and bad values add energy by design: only scenes free of them are checked.
        if !meddles && !kinematic && joints == 0 {
            let e = energy(&app, &bodies);
            if k < 10 {
                reference = reference.max(e);
            } else if e > reference + 0.1 * reference.abs() + 1e-3 {
                return Err(format!(
                    "seed {seed}, step {k}: energy {e:.4e} J grew past {reference:.4e} J"
                ));
            }
        }
    }
    Ok(())
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn random_scenes_never_panic_spread_nan_or_gain_energy() {
    two_compute_threads();
    let (first, scenes) = (env("FUZZ_FIRST", 0), env("FUZZ_SCENES", 200));
    let start = std::time::Instant::now();
    let (results, _warnings) = capture_warnings(|| {
        (first..first + scenes)
            .filter_map(|seed| {
                std::panic::catch_unwind(|| run_scene(seed))
                    .unwrap_or_else(|_| Err(format!("seed {seed}: panicked")))
                    .err()
            })
            .collect::<Vec<_>>()
    });
    println!(
        "fuzz: {scenes} scenes from seed {first} in {:.1} s, {} failures",
        start.elapsed().as_secs_f32(),
        results.len()
    );
    assert!(
        results.is_empty(),
        "{} failures: {results:#?}",
        results.len()
    );
}

/// Scenes the long run once failed, replayed in every CI run: small bodies spinning at
/// hundreds of rad/s hit the ground and left it with up to 220 times their energy (seed 7987:
/// a 4 mm hull at 490 rad/s, thrown up at 170 m/s), before spin was limited to a quarter turn
/// per substep; bodies bouncing on several points gained up to five times their energy (seed
/// 2531: a thin plate at 24 m/s, 18 %), before restitution was iterated to convergence; and
/// bodies landing on a stray contact point far from them were thrown up at hundreds of m/s
/// (seed 75922: a cylinder on its rim, at 1,200 m/s), before the narrow phase dropped such
/// points and those beyond the prediction distance (seeds 15193 and 83416).
#[test]
fn fixed_findings_stay_fixed() {
    two_compute_threads();
    let (results, _warnings) = capture_warnings(|| {
        [
            2531, 2915, 7987, 11080, 13496, 15079, 15193, 18106, 22630, 33397, 35446, 37556, 42392,
            46828, 54110, 56287, 59317, 66098, 69992, 75922, 77948, 80140, 83416, 85289, 85595,
            87893,
        ]
        .into_iter()
        .filter_map(|seed| run_scene(seed).err())
        .collect::<Vec<_>>()
    });
    assert!(results.is_empty(), "{results:#?}");
}

//! Swept CCD (`SweptCcd`): what speculative contacts alone do with very fast and fast-spinning
//! bodies, and that a swept body never passes through a thin static obstacle.
//!
//! Geometry shared by the tests: a static wall 1 cm thick centred on x = 0 (near face at
//! x = -5 mm, far face at +5 mm). The bullet is a sphere of radius 5 mm (1 cm diameter) at
//! 400 m/s, which travels 6.25 m per 1/64 s step — 625 times the wall's thickness. Every
//! bullet test runs eight start offsets spread over one step's travel, so every phase of the
//! step at which the bullet reaches the wall is covered.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

const SPEED: f32 = 400.0;
/// Bullet radius: 1 cm diameter.
const RADIUS: f32 = 0.005;
const WALL: f32 = 0.01;
const NEAR: f32 = -0.5 * WALL;
const FAR: f32 = 0.5 * WALL;
/// How far the bullet travels in one step.
const TRAVEL: f32 = SPEED * DT;
/// A 10 g bullet.
const BULLET_MASS: f32 = 0.01;

/// Bullet centre when it touches the wall's near face.
const TOUCHING: f32 = NEAR - RADIUS;

/// A static wall 1 cm thick, `size` across, centred on the origin.
fn wall(app: &mut App, size: f32) -> Entity {
    spawn(
        app,
        (
            RigidBody::Static,
            Collider::cuboid(WALL, size, size),
            Transform::default(),
        ),
    )
}

/// How the bullet gets its speed.
#[derive(Clone, Copy, Debug)]
enum Fire {
    /// `LinearVelocity` set when it is spawned.
    Velocity,
    /// An `ExternalImpulse` applied in its first step, from rest.
    Impulse,
}

/// A 1 cm bullet at `x` flying along +x at 400 m/s, gravity off.
fn bullet(app: &mut App, x: f32, fire: Fire, ccd: Option<SweptCcd>) -> Entity {
    let e = spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(RADIUS),
            Mass(BULLET_MASS),
            Transform::from_xyz(x, 0.0, 0.0),
            GravityScale(0.0),
            SleepingDisabled,
        ),
    );
    match fire {
        Fire::Velocity => set(app, e, LinearVelocity(Vec3::X * SPEED)),
        Fire::Impulse => set(app, e, ExternalImpulse::new(Vec3::X * SPEED * BULLET_MASS)),
    }
    if let Some(ccd) = ccd {
        set(app, e, ccd);
    }
    e
}

/// Positions and velocities of `body` over `steps` steps.
fn record(app: &mut App, body: Entity, steps: usize) -> Vec<(Vec3, Vec3)> {
    (0..steps)
        .map(|_| {
            app.update();
            (position(app, body), velocity(app, body))
        })
        .collect()
}

/// Shoots a bullet from `x` at a 1 cm wall 4 m across; returns its trajectory over 0.5 s.
fn shoot(x: f32, fire: Fire, ccd: Option<SweptCcd>) -> Vec<(Vec3, Vec3)> {
    let mut app = app();
    wall(&mut app, 4.0);
    let b = bullet(&mut app, x, fire, ccd);
    record(&mut app, b, 32)
}

/// Asserts the bullet never got past touching the near face (plus the contact tolerance the
/// solver may leave as penetration) and ends at rest touching it.
fn stopped_on_near_side(trajectory: &[(Vec3, Vec3)], what: &str) {
    for (k, (p, _)) in trajectory.iter().enumerate() {
        assert!(p.is_finite(), "{what}: non-finite position at step {k}");
        assert!(
            p.x <= TOUCHING + slop(),
            "{what}: centre at x = {} at step {k}, past the near face (touching at {TOUCHING})",
            p.x
        );
    }
    let (p, v) = trajectory.last().unwrap();
    // Unloaded (no gravity) the soft contact holds the surfaces exactly touching; half the
    // tolerance allows for the speculative contact closing the last gap from any distance.
    assert!(
        (p.x - TOUCHING).abs() <= 0.5 * slop(),
        "{what}: ends at x = {}, not touching the near face ({TOUCHING})",
        p.x
    );
    assert!(v.length() <= 1e-3, "{what}: still moving at {v}");
}

/// Start offsets spread over one step's travel, so the bullet reaches the wall at every phase
/// of a step; `gap` is the smallest distance from the near face.
fn offsets(gap: f32) -> impl Iterator<Item = f32> {
    (0..8).map(move |i| TOUCHING - gap - i as f32 * TRAVEL / 8.0)
}

/// A bullet flying at 400 m/s from the start is caught by speculative contacts alone: the
/// broad phase enlarges its AABB by the 6.25 m it moves this step, the narrow phase finds the
/// wall up to that distance, and the contact — a plane separating a sphere from a convex wall
/// — lets it close the gap and no further. `SweptCcd` must not change that outcome (it leaves
/// an arrival that ends in contact alone rather than holding the bullet a tolerance short).
#[test]
fn bullet_is_caught_by_speculative_contacts_and_by_swept_ccd() {
    for x in offsets(10.0) {
        let plain = shoot(x, Fire::Velocity, None);
        stopped_on_near_side(&plain, &format!("speculative only, from x = {x}"));
        let swept = shoot(x, Fire::Velocity, Some(SweptCcd::default()));
        stopped_on_near_side(&swept, &format!("SweptCcd, from x = {x}"));
    }
}

/// A bullet fired by an impulse from rest: the broad phase sizes the speculative margin from
/// the velocity at the start of the step, before the impulse is applied, so the contact is not
/// predicted and the bullet passes straight through the wall in its first step. Speculative
/// contacts miss whatever changes a body's velocity within the step (impulses, forces, hits
/// from other bodies); the sweep, run on the step's actual motion, does not.
#[test]
fn bullet_fired_by_impulse_tunnels_without_swept_ccd_but_not_with_it() {
    for x in offsets(0.05) {
        let plain = shoot(x, Fire::Impulse, None);
        let (end, v) = plain.last().unwrap();
        assert!(
            end.x > FAR + RADIUS && v.x > 0.99 * SPEED,
            "from x = {x}: expected the unswept bullet to tunnel, it ended at {end} with {v}"
        );
        for ccd in [SweptCcd::default(), SweptCcd::NON_LINEAR] {
            let swept = shoot(x, Fire::Impulse, Some(ccd));
            stopped_on_near_side(&swept, &format!("{ccd:?}, from x = {x}"));
        }
    }
}

/// A thin static wall 20 m across (so nothing can go around it in the test's time).
const BIG: f32 = 20.0;

/// A 1 cm × 50 cm × 50 cm box shot along its thin axis at 400 m/s and spinning at `spin`
/// (rad/s, world z: it tumbles its broad face), against a 1 cm wall. Returns its trajectory
/// over 0.5 s.
fn thin_box(x: f32, spin: f32, ccd: Option<SweptCcd>) -> Vec<(Vec3, Vec3)> {
    let mut app = app();
    wall(&mut app, BIG);
    let b = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(0.01, 0.5, 0.5),
            Transform::from_xyz(x, 0.0, 0.0),
            LinearVelocity(Vec3::X * SPEED),
            AngularVelocity(Vec3::Z * spin),
            GravityScale(0.0),
            SleepingDisabled,
        ),
    );
    if let Some(ccd) = ccd {
        set(&mut app, b, ccd);
    }
    record(&mut app, b, 32)
}

/// The box's centre stays at least its thinnest half-extent (5 mm) from the near face, less
/// the contact tolerance: any orientation of the box reaches at least that far along x.
fn box_never_passes(trajectory: &[(Vec3, Vec3)], what: &str) {
    let limit = NEAR - 0.005 + slop();
    for (k, (p, _)) in trajectory.iter().enumerate() {
        assert!(
            p.is_finite() && p.x <= limit,
            "{what}: centre at {p} at step {k}, past the wall's near face (limit x = {limit})"
        );
    }
}

/// Whether the box went through the wall: beyond its far face, within its extent.
fn box_went_through(trajectory: &[(Vec3, Vec3)]) -> bool {
    trajectory
        .iter()
        .any(|(p, _)| p.x > FAR && p.y.abs().max(p.z.abs()) < 0.5 * BIG - 0.5)
}

/// Head on and not spinning, the thin box is caught by speculative contacts alone (box
/// against box is convex against convex, so the separating-plane argument of the bullet test
/// holds), and with `SweptCcd`.
///
/// Spinning at 30 rad/s (27° per step), its edge strikes first and it slaps round at hundreds
/// of rad/s; the contact points of the step start are not the ones that meet, and the box goes
/// through the wall from some phases, with or without a linear sweep (which ignores rotation).
/// The nonlinear sweep stops it at every phase, and never holds it in place while it still
/// moves into the wall (the wall has no restitution, so it ends at rest or moving away).
#[test]
fn thin_fast_box_does_not_pass_a_thin_wall() {
    let mut through_plain = 0;
    let mut through_linear = 0;
    for x in offsets(10.0) {
        box_never_passes(&thin_box(x, 0.0, None), &format!("head on, x = {x}"));
        box_never_passes(
            &thin_box(x, 0.0, Some(SweptCcd::default())),
            &format!("head on, SweptCcd, x = {x}"),
        );
        through_plain += box_went_through(&thin_box(x, 30.0, None)) as u32;
        through_linear += box_went_through(&thin_box(x, 30.0, Some(SweptCcd::default()))) as u32;
        let swept = thin_box(x, 30.0, Some(SweptCcd::NON_LINEAR));
        let what = format!("spinning, nonlinear SweptCcd, x = {x}");
        box_never_passes(&swept, &what);
        let v = swept.last().unwrap().1;
        assert!(v.x <= 1e-3, "{what}: ends moving into the wall at {v}");
    }
    assert!(
        through_plain > 0,
        "the unswept spinning box never went through"
    );
    assert!(
        through_linear > 0,
        "the linearly swept spinning box never went through"
    );
}

/// Angle of the stick (a rotation about world z) in degrees.
fn stick_angle(rotation: Quat) -> f32 {
    (2.0 * rotation.z.atan2(rotation.w)).to_degrees()
}

/// The stick's angle at which its leading face (1 cm from its axis) touches the plate's
/// lower corner at (5 mm, 0.3 m): where the corner is 1 cm from the stick's axis.
fn stick_contact_angle() -> f32 {
    let (x, y) = (0.005_f32, 0.3_f32);
    let corner = y.atan2(x);
    let rho = x.hypot(y);
    (corner - (0.01 / rho).asin()).to_degrees()
}

/// A 2 m stick on a fixed axle (translation and tilt locked) spins about z at 150° per step
/// from lying along x. A static plate 1 cm thick stands in its path at x = 0, from 0.3 m to
/// 1.5 m above the axle. Returns the stick's unwrapped angle after each step.
fn blade(ccd: Option<SweptCcd>) -> Vec<f32> {
    let mut app = app();
    spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(WALL, 1.2, 1.0),
            Transform::from_xyz(0.0, 0.9, 0.0),
        ),
    );
    let stick = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(2.0, 0.02, 0.02),
            Transform::default(),
            AngularVelocity(Vec3::Z * 150f32.to_radians() / DT),
            LockedAxes::TRANSLATION_LOCKED
                .lock_rotation_x()
                .lock_rotation_y(),
            GravityScale(0.0),
            SleepingDisabled,
        ),
    );
    if let Some(ccd) = ccd {
        set(&mut app, stick, ccd);
    }
    let mut angle = 0.0;
    let mut last = Quat::IDENTITY;
    (0..32)
        .map(|_| {
            app.update();
            let now = rotation(&app, stick);
            // Unwrap: each step turns less than 180°.
            angle += stick_angle(now * last.inverse());
            last = now;
            angle
        })
        .collect()
}

/// The stick's tip sweeps through the plate within one step, but at the step start the
/// nearest features are the stick's top face and the plate's bottom edge, whose contact
/// points barely move along their normal as the stick turns: the speculative contact misses,
/// and so does a linear sweep (the stick's centre does not move). The nonlinear sweep finds
/// the impact; the next step's contact stops the stick against the plate.
#[test]
fn spinning_blade_is_stopped_only_by_the_nonlinear_sweep() {
    let contact = stick_contact_angle();
    for ccd in [None, Some(SweptCcd::default())] {
        let angles = blade(ccd);
        assert!(
            angles[0] > 90.0,
            "{ccd:?}: expected the stick to swing through the plate, it is at {}°",
            angles[0]
        );
    }
    let angles = blade(Some(SweptCcd::NON_LINEAR));
    // Up to the contact tolerance of penetration at the corner, 0.3 m from the axle.
    let tolerance = (slop() / 0.3).to_degrees();
    for (k, &a) in angles.iter().enumerate() {
        assert!(
            a <= contact + tolerance,
            "step {k}: stick at {a}°, past the plate (contact at {contact}°)"
        );
    }
    let end = *angles.last().unwrap();
    assert!(
        (end - contact).abs() <= tolerance,
        "stick ends at {end}°, not resting on the plate at {contact}°"
    );
}

/// A bullet whose collider sits on a child entity is swept like one on the body itself, and a
/// kinematic wall moving towards the bullet at 20 m/s is a target swept along its own motion:
/// the impulse-fired bullet never passes the wall's (moving) near face.
#[test]
fn child_colliders_and_moving_kinematic_walls_are_swept() {
    for x in offsets(1.0) {
        let mut app = app();
        let w = spawn(
            &mut app,
            (
                RigidBody::Kinematic,
                Collider::cuboid(WALL, 4.0, 4.0),
                Transform::default(),
                LinearVelocity(Vec3::X * -20.0),
            ),
        );
        let b = spawn(
            &mut app,
            (
                RigidBody::Dynamic,
                Mass(BULLET_MASS),
                Transform::from_xyz(x, 0.0, 0.0),
                GravityScale(0.0),
                SleepingDisabled,
                SweptCcd::default(),
            ),
        );
        let child = spawn(&mut app, (Collider::sphere(RADIUS), Transform::default()));
        app.world_mut().entity_mut(b).add_child(child);
        // The engine links a child collider to its body during the first step; fire after it.
        app.update();
        set(
            &mut app,
            b,
            ExternalImpulse::new(Vec3::X * SPEED * BULLET_MASS),
        );
        for k in 0..16 {
            app.update();
            let (bullet, wall) = (position(&app, b).x, position(&app, w).x);
            assert!(
                bullet <= wall + TOUCHING + slop(),
                "from x = {x}, step {k}: bullet at {bullet} passed the near face of the wall at {wall}"
            );
        }
    }
}

/// Two identical fast, spinning bodies in free fall far from everything, one with `SweptCcd`
/// (nonlinear, against dynamic bodies too): the sweep runs every step but finds nothing, and
/// the swept body follows exactly (bit for bit) the same trajectory as the other.
#[test]
fn swept_body_with_nothing_to_hit_moves_exactly_like_an_unswept_one() {
    let mut app = app();
    ground(&mut app);
    let make = |app: &mut App, z: f32| {
        spawn(
            app,
            (
                RigidBody::Dynamic,
                Collider::cuboid(0.01, 0.5, 0.2),
                Transform::from_xyz(0.0, 500.0, z),
                LinearVelocity(Vec3::new(SPEED, 30.0, 0.0)),
                AngularVelocity(Vec3::new(3.0, 40.0, -7.0)),
                SleepingDisabled,
            ),
        )
    };
    let plain = make(&mut app, -50.0);
    let swept = make(&mut app, 50.0);
    set(&mut app, swept, SweptCcd::NON_LINEAR.include_dynamic(true));
    let offset = Vec3::new(0.0, 0.0, 100.0);
    for k in 0..64 {
        app.update();
        assert_eq!(
            position(&app, swept),
            position(&app, plain) + offset,
            "step {k}"
        );
        assert_eq!(rotation(&app, swept), rotation(&app, plain), "step {k}");
        assert_eq!(velocity(&app, swept), velocity(&app, plain), "step {k}");
        assert_eq!(
            angular_velocity(&app, swept),
            angular_velocity(&app, plain),
            "step {k}"
        );
    }
}

/// Bodies skimming a static plate at 400 m/s move exactly like unswept twins beside identical
/// plates: a surface a body slides along is not an impact, in either sweep mode. A ball 3 mm
/// under its plate starts within the contact tolerance of it (the case swept by the core); a
/// cube turned 45° about the flight axis, its top edge 8 mm under the plate, has the plate
/// among its sweep's targets every step (its AABB reaches up to the plate) without touching it.
#[test]
fn swept_body_skimming_a_surface_moves_exactly_like_an_unswept_one() {
    let mut app = app();
    let ball = (Collider::sphere(0.05), Quat::IDENTITY, 0.05, 0.003);
    let edge = 0.05 * std::f32::consts::SQRT_2;
    let cube = (
        Collider::cuboid(0.1, 0.1, 0.1),
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_4),
        edge,
        0.008,
    );
    let mut pairs = Vec::new();
    for (i, (collider, rotation, top, gap)) in [ball, cube].into_iter().enumerate() {
        for (j, ccd) in [SweptCcd::default(), SweptCcd::NON_LINEAR]
            .into_iter()
            .enumerate()
        {
            let z = 10.0 * (2 * i + j) as f32;
            let mut make = |z: f32| {
                spawn(
                    &mut app,
                    (
                        RigidBody::Static,
                        Collider::cuboid(4000.0, 0.01, 1.0),
                        Transform::from_xyz(0.0, top + gap + 0.005, z),
                    ),
                );
                spawn(
                    &mut app,
                    (
                        RigidBody::Dynamic,
                        collider.clone(),
                        Transform::from_xyz(-1000.0, 0.0, z).with_rotation(rotation),
                        LinearVelocity(Vec3::X * SPEED),
                        GravityScale(0.0),
                        SleepingDisabled,
                    ),
                )
            };
            let (plain, swept) = (make(z), make(z + 100.0));
            set(&mut app, swept, ccd);
            pairs.push((plain, swept, format!("body {i}, {ccd:?}")));
        }
    }
    let offset = Vec3::new(0.0, 0.0, 100.0);
    for k in 0..64 {
        app.update();
        for (plain, swept, what) in &pairs {
            let (plain, swept) = (*plain, *swept);
            let what = format!("{what}, step {k}");
            assert_eq!(
                position(&app, swept),
                position(&app, plain) + offset,
                "{what}"
            );
            assert_eq!(velocity(&app, swept), velocity(&app, plain), "{what}");
            assert_eq!(rotation(&app, swept), rotation(&app, plain), "{what}");
        }
    }
}

/// A sensor wall and a wall on a layer the bullet does not collide with are not obstacles:
/// the swept bullet passes both.
#[test]
fn sensors_and_filtered_layers_do_not_stop_a_swept_bullet() {
    for what in ["sensor", "filtered layer"] {
        let mut app = app();
        let w = wall(&mut app, 4.0);
        match what {
            "sensor" => set(&mut app, w, Sensor),
            _ => set(&mut app, w, CollisionLayers::new(0b10, 0b10)),
        }
        let b = bullet(&mut app, -3.0, Fire::Impulse, Some(SweptCcd::NON_LINEAR));
        set(&mut app, b, CollisionLayers::new(0b01, 0b01));
        let trajectory = record(&mut app, b, 4);
        let (end, v) = trajectory.last().unwrap();
        assert!(
            end.x > FAR + RADIUS && v.x > 0.99 * SPEED,
            "{what}: the bullet should have passed, it is at {end} with {v}"
        );
    }
}

/// Bodies joined by a joint do not collide (unless the joint asks to), so a bullet tied to the
/// wall by a slack distance joint passes it even when swept; with `with_collision(true)` on the
/// joint the sweep stops it.
#[test]
fn joined_bodies_are_not_sweep_targets() {
    for collide in [false, true] {
        let mut app = app();
        let w = wall(&mut app, 4.0);
        let b = bullet(
            &mut app,
            TOUCHING - 1.0,
            Fire::Impulse,
            Some(SweptCcd::default()),
        );
        spawn(
            &mut app,
            DistanceJoint::new(w, b)
                .with_limits(0.0, 1000.0)
                .with_collision(collide),
        );
        let trajectory = record(&mut app, b, 8);
        if collide {
            stopped_on_near_side(&trajectory, "joint with collision");
        } else {
            let end = trajectory.last().unwrap().0;
            assert!(
                end.x > FAR + RADIUS,
                "joined: the bullet should pass the wall it is joined to, it is at {end}"
            );
        }
    }
}

/// A free, thin dynamic plate (1 cm × 2 m × 2 m, 80 kg) in the path of an impulse-fired
/// bullet. By default dynamic bodies are not sweep targets and the bullet passes through it;
/// with `include_dynamic` it stops at the plate's near face and pushes it next step.
#[test]
fn dynamic_targets_only_with_include_dynamic() {
    let run = |ccd: SweptCcd| {
        let mut app = app();
        let plate = spawn(
            &mut app,
            (
                RigidBody::Dynamic,
                Collider::cuboid(WALL, 2.0, 2.0),
                Transform::default(),
                GravityScale(0.0),
                SleepingDisabled,
            ),
        );
        let b = bullet(&mut app, TOUCHING - 1.0, Fire::Impulse, Some(ccd));
        (0..16)
            .map(|_| {
                app.update();
                (position(&app, b).x, position(&app, plate).x)
            })
            .collect::<Vec<_>>()
    };
    let (end, plate) = *run(SweptCcd::default()).last().unwrap();
    assert!(
        end > plate + FAR + RADIUS,
        "default: expected the bullet through the plate, bullet x = {end}, plate x = {plate}"
    );
    for (k, (x, plate)) in run(SweptCcd::default().include_dynamic(true))
        .into_iter()
        .enumerate()
    {
        assert!(
            x <= plate + TOUCHING + slop(),
            "include_dynamic: step {k}: bullet at {x}, plate at {plate}: bullet passed its near face"
        );
    }
}

/// A swept bullet given a NaN velocity is reset and reported by the engine (naming it), and a
/// swept bullet at 10³⁰ m/s poisons nothing; the other bodies keep simulating.
#[test]
fn bad_velocities_on_swept_bodies_do_not_spread() {
    let ((nan_bullet, ok), warnings) = capture_warnings(|| {
        let mut app = app();
        wall(&mut app, 4.0);
        let nan_bullet = bullet(&mut app, -1.0, Fire::Velocity, Some(SweptCcd::NON_LINEAR));
        let huge = bullet(&mut app, -2.0, Fire::Velocity, Some(SweptCcd::default()));
        let witness = bullet(&mut app, -3.0, Fire::Impulse, Some(SweptCcd::default()));
        set(&mut app, witness, Transform::from_xyz(-3.0, 5.0, 0.0));
        set(&mut app, nan_bullet, LinearVelocity(Vec3::NAN));
        set(&mut app, huge, LinearVelocity(Vec3::new(1e30, -1e30, 0.0)));
        set(&mut app, huge, AngularVelocity(Vec3::splat(1e30)));
        step(&mut app, 16);
        let ok = all_bodies_finite(&mut app) && speed(&app, witness) > 0.99 * SPEED;
        (nan_bullet, ok)
    });
    assert!(
        ok,
        "a body went non-finite, or the witness bullet was disturbed"
    );
    let name = format!("{nan_bullet}");
    assert!(
        warnings.iter().any(|w| w.contains(&name)),
        "no warning names {nan_bullet}: {warnings:?}"
    );
}

//! Rigid-body dynamics against theory: a torque-free body keeps its angular momentum (the
//! gyroscopic term), a box spun about its intermediate axis flips, and locked axes hold
//! position and velocity exactly whatever moves the body.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// A free box of full extents `size` (density 1000 kg/m³), gravity off, spinning at `omega`.
fn spinning_box(app: &mut App, size: Vec3, omega: Vec3) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(size.x, size.y, size.z),
            Transform::default(),
            AngularVelocity(omega),
            GravityScale(0.0),
            SleepingDisabled,
        ),
    )
}

/// Principal moments of a solid box of full extents `size` and density 1000 kg/m³.
fn box_inertia(size: Vec3) -> Vec3 {
    let mass = 1000.0 * size.x * size.y * size.z;
    let s = size * size;
    mass / 12.0 * Vec3::new(s.y + s.z, s.x + s.z, s.x + s.y)
}

/// World angular momentum `R I Rᵀ ω` of a box body.
fn angular_momentum(app: &App, body: Entity, inertia: Vec3) -> Vec3 {
    let r = rotation(app, body);
    r * (inertia * (r.inverse() * angular_velocity(app, body)))
}

/// Kinetic energy `½ ω·I ω` of a box body (body frame).
fn kinetic_energy(app: &App, body: Entity, inertia: Vec3) -> f32 {
    let w = rotation(app, body).inverse() * angular_velocity(app, body);
    0.5 * w.dot(inertia * w)
}

/// A box with three different moments tumbling freely for 10 s keeps the size of its angular
/// momentum and its kinetic energy within 1 % (without the gyroscopic term its angular
/// velocity stays fixed while the body turns, and |L| swings by tens of per cent). The
/// midpoint rule conserves both exactly, up to its two Newton iterations. The direction of
/// `L` in the world also depends on the first-order rotation update, which drifts by
/// `O(ω h)` per radian turned: within 1 % here (about 60 radians at h = 1/256 s).
#[test]
fn free_tumbling_body_conserves_angular_momentum() {
    let mut app = app();
    let size = Vec3::new(0.2, 0.5, 1.0);
    let inertia = box_inertia(size);
    let body = spinning_box(&mut app, size, Vec3::new(1.0, 2.0, 3.0));
    step(&mut app, 1);
    let start = angular_momentum(&app, body, inertia);
    let energy = kinetic_energy(&app, body, inertia);
    for k in 0..640 {
        step(&mut app, 1);
        let l = angular_momentum(&app, body, inertia);
        let e = kinetic_energy(&app, body, inertia);
        assert!(
            (l.length() / start.length() - 1.0).abs() < 0.01,
            "step {k}: |L| = {}, started at {}",
            l.length(),
            start.length()
        );
        assert!(
            (e / energy - 1.0).abs() < 0.01,
            "step {k}: E = {e}, started at {energy}"
        );
        assert!(
            (l - start).length() < 0.01 * start.length(),
            "step {k}: L = {l}, started at {start}"
        );
    }
}

/// A square prism (0.2 × 0.2 × 1 m: two equal moments `a` across its long axis, `c` about
/// it) tumbling freely for 9.4 s, against Euler's equations of a symmetric top: in the body
/// frame its spin `s` about the long axis is constant, and its spin across the axis turns
/// about it at `λ = s (c − a) / a`. The midpoint rule keeps `s` exactly and turns the spin
/// across by `2 atan(h λ / 2)` per substep, a relative phase error of `(h λ)² / 12`, 1e-5
/// here: the angle turned must match `λ t` within 1e-3. (The body-frame spin does not depend
/// on the position update, which turns the body about its own angular velocity, except
/// through the f32 rounding of the rotation, which moves `s` by about 1e-4 here: it is held
/// to the 1 % of the energy.)
#[test]
fn symmetric_body_keeps_its_axial_spin_and_precesses_at_eulers_rate() {
    let mut app = app();
    let size = Vec3::new(0.2, 0.2, 1.0);
    let inertia = box_inertia(size);
    let body = spinning_box(&mut app, size, Vec3::new(2.0, 1.0, 3.0));
    step(&mut app, 1);
    let body_spin = |app: &App| rotation(app, body).inverse() * angular_velocity(app, body);
    let spin = body_spin(&app).z;
    let energy = kinetic_energy(&app, body, inertia);
    let rate = spin * (inertia.z - inertia.x) / inertia.x;
    let (mut angle, mut across) = (0.0f32, body_spin(&app).truncate());
    let steps = 600;
    for k in 0..steps {
        step(&mut app, 1);
        let w = body_spin(&app);
        assert!(
            (w.z / spin - 1.0).abs() < 0.01,
            "step {k}: axial spin {}, started at {spin}",
            w.z
        );
        let e = kinetic_energy(&app, body, inertia);
        assert!(
            (e / energy - 1.0).abs() < 0.01,
            "step {k}: E = {e}, started at {energy}"
        );
        // Less than a quarter turn per step, so the step's angle is the small one.
        angle += across.angle_to(w.truncate());
        across = w.truncate();
    }
    let expected = rate * steps as f32 * DT;
    assert!(
        (angle / expected - 1.0).abs() < 1e-3,
        "turned {angle} rad across the axis; Euler's equations give {expected}"
    );
}

/// A thin rod (1 cm × 1 cm × 1 m) spinning at 100 rad/s about one short axis and 50 rad/s
/// about its long axis turns 0.4 rad per substep: where an explicit gyroscopic term gains
/// energy without bound, the implicit midpoint rule keeps it within 1 % over 10 s.
#[test]
fn fast_spinning_thin_rod_stays_bounded() {
    let mut app = app();
    let size = Vec3::new(0.01, 0.01, 1.0);
    let inertia = box_inertia(size);
    let body = spinning_box(&mut app, size, Vec3::new(100.0, 0.1, 50.0));
    step(&mut app, 1);
    let energy = kinetic_energy(&app, body, inertia);
    for k in 0..640 {
        step(&mut app, 1);
        let e = kinetic_energy(&app, body, inertia);
        assert!(
            (e / energy - 1.0).abs() < 0.01,
            "step {k}: E = {e}, started at {energy}"
        );
    }
}

/// A 0.1 × 0.4 × 0.8 m box spun at 5 rad/s about its intermediate (y) axis, with a 1 mrad/s
/// wobble, is unstable: the wobble grows at `λ = ω √((I_x − I_y)(I_y − I_z) / (I_x I_z))`
/// (3.6 /s here) and the box turns over, its y axis pointing down, after about
/// `ln(ω / 1e-3) / λ` ≈ 2.3 s. Spun about its largest (x) axis it stays upright.
#[test]
fn box_spun_about_its_intermediate_axis_flips() {
    let size = Vec3::new(0.1, 0.4, 0.8);
    let lowest_y_axis = |omega: Vec3| {
        let mut app = app();
        let body = spinning_box(&mut app, size, omega);
        (0..320)
            .map(|_| {
                step(&mut app, 1);
                (rotation(&app, body) * omega.normalize()).dot(omega.normalize())
            })
            .fold(f32::MAX, f32::min)
    };
    let intermediate = lowest_y_axis(Vec3::new(1e-3, 5.0, 1e-3));
    assert!(
        intermediate < -0.9,
        "spun about y, its y axis only got to {intermediate} of world y"
    );
    let major = lowest_y_axis(Vec3::new(5.0, 1e-3, 1e-3));
    assert!(major > 0.99, "spun about x, its x axis tipped to {major}");
}

/// A body whose x translation is locked, given 3 m/s along x (and 1 m/s along z), does not
/// move along x at all and reports no x velocity; z is free.
#[test]
fn locked_translation_holds_against_a_user_set_velocity() {
    let mut app = app();
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(1.0, 0.0, 0.0),
            LinearVelocity(Vec3::new(3.0, 0.0, 1.0)),
            LockedAxes::new().lock_translation_x(),
            GravityScale(0.0),
            SleepingDisabled,
        ),
    );
    step(&mut app, 64);
    assert_eq!(position(&app, body).x, 1.0);
    assert_eq!(velocity(&app, body).x, 0.0);
    assert!((position(&app, body).z - 1.0).abs() < 1e-4);
}

/// A box with every rotation locked, set spinning, and then landing on one corner on a 30°
/// ramp (an off-centre contact with friction), never turns: its rotation stays the identity
/// exactly and its angular velocity zero.
#[test]
fn locked_rotation_holds_against_spin_and_an_off_centre_hit() {
    let mut app = app();
    spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(10.0, 1.0, 10.0),
            Transform::from_rotation(Quat::from_rotation_z(30f32.to_radians())),
        ),
    );
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(0.5, 0.5, 0.5),
            Transform::from_xyz(0.0, 2.0, 0.0),
            AngularVelocity(Vec3::new(1.0, 2.0, 3.0)),
            LockedAxes::ROTATION_LOCKED,
            SleepingDisabled,
        ),
    );
    for k in 0..128 {
        step(&mut app, 1);
        assert_eq!(rotation(&app, body), Quat::IDENTITY, "step {k}");
        assert_eq!(angular_velocity(&app, body), Vec3::ZERO, "step {k}");
    }
}

/// A ball whose y translation is locked hangs from a static anchor 1 m above and 1 m to the
/// side by a 2 m distance joint, with gravity on: neither gravity nor the joint moves it
/// vertically, while the joint swings it sideways.
#[test]
fn locked_translation_holds_under_a_joint() {
    let mut app = app();
    let anchor = spawn(
        &mut app,
        (RigidBody::Static, Transform::from_xyz(-1.0, 1.0, 0.0)),
    );
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.1),
            Transform::default(),
            LockedAxes::new().lock_translation_y(),
            SleepingDisabled,
        ),
    );
    spawn(
        &mut app,
        DistanceJoint::new(anchor, ball).with_limits(2.0, 2.0),
    );
    for k in 0..128 {
        step(&mut app, 1);
        assert_eq!(position(&app, ball).y, 0.0, "step {k}");
        assert_eq!(velocity(&app, ball).y, 0.0, "step {k}");
    }
    assert!(
        position(&app, ball).x > 0.5,
        "the joint did not pull it sideways"
    );
}

/// `AngularDamping(c)` is applied implicitly every substep, `ω ← ω / (1 + h c)`: a spinning
/// ball (gravity off; equal moments, so no gyroscopic term) follows that exactly, to f32
/// rounding.
#[test]
fn angular_damping_decays_the_spin_as_documented() {
    let mut app = app();
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::default(),
            AngularVelocity(Vec3::new(0.0, 10.0, 0.0)),
            AngularDamping(2.0),
            GravityScale(0.0),
            SleepingDisabled,
        ),
    );
    let h = DT / 4.0;
    for k in 1..=64 {
        step(&mut app, 1);
        let expected = 10.0 / (1.0 + h * 2.0f32).powi(4 * k);
        let w = angular_velocity(&app, ball);
        assert!(
            (w.y / expected - 1.0).abs() < 1e-4 && w.x == 0.0 && w.z == 0.0,
            "step {k}: ω = {w}, expected {expected} about y"
        );
    }
}

/// Writing a body's `Transform` moves it: the next step starts from the written position,
/// keeps the body's velocity, and integrates one step from there (four substeps of
/// semi-implicit Euler).
#[test]
fn writing_the_transform_teleports_the_body() {
    let mut app = app();
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(0.0, 10.0, 0.0),
            SleepingDisabled,
        ),
    );
    step(&mut app, 10);
    let v = velocity(&app, ball).y;
    set(&mut app, ball, Transform::from_xyz(5.0, 20.0, -3.0));
    step(&mut app, 1);
    let h = DT / 4.0;
    let expected = 20.0 + 4.0 * h * v - g() * h * h * (1.0 + 2.0 + 3.0 + 4.0);
    let p = position(&app, ball);
    assert!(
        (p - Vec3::new(5.0, expected, -3.0)).length() < 1e-4,
        "at {p}, expected (5, {expected}, −3)"
    );
}

/// A body never turns more than a quarter turn in one substep (contacts are linearised once
/// per step, and a body turning by radians per substep meets them with arms that no longer
/// describe it): a 5 cm cube spun at 1000 rad/s in free space keeps its axis and spins at
/// `(π/4) / h` = 201 rad/s after one step (4 substeps of 1/64 s).
#[test]
fn spin_is_limited_to_a_quarter_turn_per_substep() {
    let mut app = app();
    let axis = Vec3::new(1.0, 2.0, 2.0) / 3.0;
    let body = spinning_box(&mut app, Vec3::splat(0.05), axis * 1000.0);
    step(&mut app, 1);
    let omega = angular_velocity(&app, body);
    let limit = std::f32::consts::FRAC_PI_4 / (DT / 4.0);
    assert!(
        (omega.length() / limit - 1.0).abs() < 1e-5,
        "{omega}, limit {limit}"
    );
    assert!(omega.normalize().dot(axis) > 1.0 - 1e-6, "{omega}");
}

/// A free body faster than [`SolverConfig::max_linear_speed`] is slowed to it at its first
/// substep, in its own direction, and then keeps that speed: one step moves it by
/// `max_linear_speed × dt`. A body below the cap keeps its speed, and a kinematic body is not
/// slowed.
#[test]
fn speed_above_the_cap_is_scaled_down_to_it() {
    let mut app = app();
    let cap = SolverConfig::default().max_linear_speed;
    let direction = Vec3::new(3.0, 4.0, 0.0) / 5.0;
    let body = |kind: RigidBody, speed: f32, z: f32| {
        (
            kind,
            Collider::sphere(0.1),
            Transform::from_xyz(0.0, 0.0, z),
            LinearVelocity(direction * speed),
            GravityScale(0.0),
        )
    };
    let fast = spawn(&mut app, body(RigidBody::Dynamic, 1000.0, 0.0));
    let slow = spawn(&mut app, body(RigidBody::Dynamic, 0.9 * cap, 10.0));
    let kinematic = spawn(&mut app, body(RigidBody::Kinematic, 1000.0, 20.0));
    step(&mut app, 1);
    // Four substeps of semi-implicit Euler at a constant speed: x = v dt, to f32 rounding of a
    // sum of four terms (a few ulps of 6.25 m).
    let moved = |e: Entity, z: f32| position(&app, e) - Vec3::new(0.0, 0.0, z);
    for (e, z, speed) in [
        (fast, 0.0, cap),
        (slow, 10.0, 0.9 * cap),
        (kinematic, 20.0, 1000.0),
    ] {
        let expected = direction * speed * DT;
        assert!(
            (moved(e, z) - expected).length() < 1e-5 * expected.length(),
            "{e} moved {}, expected {expected}",
            moved(e, z)
        );
        assert!(
            (velocity(&app, e) - direction * speed).length() < 1e-3,
            "{e}"
        );
    }
    // A larger cap lets the fast body keep its speed.
    app.insert_resource(SolverConfig {
        max_linear_speed: 2000.0,
        ..default()
    });
    set(&mut app, fast, LinearVelocity(direction * 1000.0));
    let before = position(&app, fast);
    step(&mut app, 1);
    let moved = position(&app, fast) - before;
    assert!((moved - direction * 1000.0 * DT).length() < 1e-5 * 1000.0 * DT);
}

/// `Forces` changes velocities at once by the impulse laws: 2 N·s up, 0.5 m beside the centre
/// of mass of a 1 m cube of 1000 kg (I = 1000/6 kg·m²), gives Δv = 2/1000 m/s up and
/// Δω = I⁻¹ (r × J) = 6/1000 rad/s about Z, kept through a weightless step (to f32 rounding).
/// A static body does not move; a body with rotation locked about Z only rises.
#[test]
fn forces_apply_impulses_by_the_impulse_laws() {
    use bevy::ecs::system::RunSystemOnce;
    let mut app = app();
    let cube = |app: &mut App, x, extra| {
        spawn(
            app,
            (
                RigidBody::Dynamic,
                Collider::cuboid(1.0, 1.0, 1.0),
                GravityScale(0.0),
                Transform::from_xyz(x, 5.0, 0.0),
                extra,
            ),
        )
    };
    let free = cube(&mut app, -2.0, LockedAxes::new());
    let locked = cube(&mut app, 2.0, LockedAxes::new().lock_rotation_z());
    let fixed = spawn(&mut app, (RigidBody::Static, Collider::sphere(1.0)));
    app.update();
    app.world_mut()
        .run_system_once(|mut bodies: Query<Forces>| {
            for mut body in &mut bodies {
                let point = body.center_of_mass() + Vec3::X * 0.5;
                body.apply_linear_impulse_at_point(Vec3::Y * 2.0, point);
            }
        })
        .unwrap();
    // Read at once, before any step, the locked axis is already left alone.
    assert_eq!(angular_velocity(&app, locked), Vec3::ZERO);
    app.update();
    let near = |a: Vec3, b: Vec3| (a - b).length() <= 1e-6 * b.length().max(1e-3);
    let (v, w) = (velocity(&app, free), angular_velocity(&app, free));
    assert!(near(v, Vec3::Y * 0.002), "v = {v}");
    assert!(near(w, Vec3::Z * 0.006), "ω = {w}");
    let (v, w) = (velocity(&app, locked), angular_velocity(&app, locked));
    assert!(
        near(v, Vec3::Y * 0.002) && w == Vec3::ZERO,
        "v = {v}, ω = {w}"
    );
    assert_eq!(
        (velocity(&app, fixed), angular_velocity(&app, fixed)),
        (Vec3::ZERO, Vec3::ZERO)
    );
}

//! Input validation: every public input that can be wrong is checked where it enters, reported
//! once with a warning naming the entity and the value, and replaced by the documented
//! fallback (the table in `impetus3d::validation`); nothing panics and the rest of the world
//! keeps simulating.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// The warnings that name `entity` as a whole token (so `2v0` does not match `12v0`).
fn about(warnings: &[String], entity: Entity) -> Vec<&String> {
    let name = format!("{entity}");
    warnings
        .iter()
        .filter(|w| {
            w.split(|c: char| !c.is_ascii_alphanumeric())
                .any(|token| token == name)
        })
        .collect()
}

/// Fails unless exactly one warning names `entity`, and it shows `value`.
fn warned_once(warnings: &[String], entity: Entity, value: &str) {
    let mine = about(warnings, entity);
    assert_eq!(
        mine.len(),
        1,
        "expected one warning naming {entity}, got {mine:?} (all: {warnings:?})"
    );
    assert!(
        mine[0].contains(value),
        "the warning for {entity} does not show the value {value}: {}",
        mine[0]
    );
}

/// Starting height of the witness ball, m.
const WITNESS_Y0: f32 = 100.0;

/// A ball in free fall far from everything.
fn witness(app: &mut App) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(500.0, WITNESS_Y0, 0.0),
        ),
    )
}

/// Height after `steps` steps of the engine's discrete free fall from `y0` under `g`
/// (semi-implicit Euler with 4 substeps: `y0 − ½ g t (t + h)`, see free_fall.rs).
fn free_fall(y0: f32, g: f32, steps: usize) -> f32 {
    let t = steps as f32 * DT;
    let h = DT / 4.0;
    y0 - 0.5 * g * t * (t + h)
}

/// The witness is where free fall puts it after `steps` steps, and every body is finite.
fn world_is_healthy(app: &mut App, witness: Entity, steps: usize) {
    assert!(all_bodies_finite(app), "a body went non-finite");
    let expected = free_fall(WITNESS_Y0, g(), steps);
    let y = position(app, witness).y;
    // f32 round-off at |y| ≈ 100 m over `steps` position updates (as in bad_input.rs).
    assert!(
        (y - expected).abs() <= steps as f32 * 7.6e-6 + 3e-4,
        "witness at {y}, free fall gives {expected}"
    );
}

/// A ball of radius 0.5 resting on the ground at `x` (a one-point contact manifold).
fn ball_on_ground(app: &mut App, x: f32, extra: impl Bundle) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(x, 0.5, 0.0),
            extra,
        ),
    )
}

#[test]
fn bad_friction_is_reported_and_replaced() {
    // An infinite coefficient made a one-point manifold's twist limit ∞·0 = NaN, and the
    // friction clamp panicked; NaN did the same. A negative one was clamped silently.
    let ((mut app, balls, w), warnings) = capture_warnings(|| {
        let mut app = app();
        ground(&mut app);
        let w = witness(&mut app);
        let balls: Vec<_> = [f32::INFINITY, f32::NAN, -1.0]
            .into_iter()
            .enumerate()
            .map(|(i, mu)| {
                let spin = AngularVelocity(Vec3::new(0.0, 3.0, 0.0));
                ball_on_ground(&mut app, 3.0 * i as f32, (Friction::new(mu), spin))
            })
            .collect();
        step(&mut app, 32);
        (app, balls, w)
    });
    // Non-finite: the default 0.5; negative: 0 (the nearest valid coefficient).
    for (&ball, (shown, fallback)) in balls.iter().zip([("inf", 0.5), ("NaN", 0.5), ("-1", 0.0)]) {
        warned_once(&warnings, ball, shown);
        let friction = app.world().get::<Friction>(ball).unwrap().coefficient;
        assert_eq!(friction, fallback, "{ball}: friction {friction}");
        assert!((position(&app, ball).y - 0.5).abs() <= slop());
    }
    world_is_healthy(&mut app, w, 32);
}

#[test]
fn bad_restitution_is_reported_and_replaced() {
    let ((mut app, balls, w), warnings) = capture_warnings(|| {
        let mut app = app();
        ground(&mut app);
        let w = witness(&mut app);
        let balls: Vec<_> = [f32::INFINITY, f32::NAN, -1.0]
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                // Dropped from 2 m: they hit the ground at 5.6 m/s, well above the bounce
                // threshold, so the restitution is used.
                spawn(
                    &mut app,
                    (
                        RigidBody::Dynamic,
                        Collider::sphere(0.5),
                        Transform::from_xyz(3.0 * i as f32, 2.5, 0.0),
                        Restitution::new(e),
                    ),
                )
            })
            .collect();
        step(&mut app, 96);
        (app, balls, w)
    });
    // Every bad value falls back to 0 (the default): the balls land and stay.
    for (&ball, shown) in balls.iter().zip(["inf", "NaN", "-1"]) {
        warned_once(&warnings, ball, shown);
        let e = app.world().get::<Restitution>(ball).unwrap().coefficient;
        assert_eq!(e, 0.0, "{ball}: restitution {e}");
        assert!((position(&app, ball).y - 0.5).abs() <= slop());
    }
    world_is_healthy(&mut app, w, 96);
}

#[test]
fn huge_finite_friction_is_accepted_without_panic() {
    // f32::MAX is a valid coefficient, but μ·λn overflows to ∞ and a one-point manifold's
    // twist limit ∞·0 was NaN: the friction clamp panicked.
    let ((mut app, ball, w), warnings) = capture_warnings(|| {
        let mut app = app();
        ground(&mut app);
        let w = witness(&mut app);
        let grip = Friction::new(f32::MAX).with_combine_rule(CoefficientCombine::Max);
        let spin = AngularVelocity(Vec3::new(0.0, 3.0, 0.0));
        let ball = ball_on_ground(&mut app, 0.0, (grip, spin));
        step(&mut app, 32);
        (app, ball, w)
    });
    assert!(about(&warnings, ball).is_empty(), "{warnings:?}");
    assert!((position(&app, ball).y - 0.5).abs() <= slop());
    world_is_healthy(&mut app, w, 32);
}

/// A static anchor at `(x, 5, 0)` and a 1 kg ball 1 m to its +X side, joined by `joint`
/// (built from the two entities). Returns the joint and the ball.
fn pendulum<J: Component>(
    app: &mut App,
    x: f32,
    joint: impl FnOnce(Entity, Entity) -> J,
) -> (Entity, Entity) {
    let anchor = spawn(app, (RigidBody::Static, Transform::from_xyz(x, 5.0, 0.0)));
    let ball = spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.2),
            Mass(1.0),
            Transform::from_xyz(x + 1.0, 5.0, 0.0),
        ),
    );
    (spawn(app, joint(anchor, ball)), ball)
}

#[test]
fn bad_motor_force_is_reported_and_turns_the_motor_off() {
    // A negative or NaN `max_force` made the motor's clamp range empty or NaN: it panicked.
    let ((mut app, joints, w), warnings) = capture_warnings(|| {
        let mut app = app();
        let w = witness(&mut app);
        // Hinges about Y (gravity gives no torque about them), a slider along Z.
        let hinge = |max_force: f32| {
            move |a, b| {
                RevoluteJoint::new(a, b)
                    .with_hinge_axis(Vec3::Y)
                    .with_local_anchor2(Vec3::new(-1.0, 0.0, 0.0))
                    .with_motor(JointMotor {
                        target: MotorTarget::Velocity(2.0),
                        max_force,
                    })
            }
        };
        let slider = |a, b| {
            PrismaticJoint::new(a, b)
                .with_slider_axis(Vec3::Z)
                .with_local_anchor2(Vec3::new(-1.0, 0.0, 0.0))
                .with_motor(JointMotor::velocity(2.0, f32::NAN))
        };
        let (negative, _) = pendulum(&mut app, 0.0, hinge(-5.0));
        let (nan, _) = pendulum(&mut app, 4.0, slider);
        // And one set bad at run time, through `motor_mut`.
        let (later, _) = pendulum(&mut app, 8.0, hinge(10.0));
        step(&mut app, 10);
        let mut joint = app.world_mut().get_mut::<RevoluteJoint>(later).unwrap();
        joint.motor_mut().unwrap().max_force = f32::NAN;
        step(&mut app, 22);
        (app, [negative, nan, later], w)
    });
    for (&joint, shown) in joints.iter().zip(["-5", "NaN", "NaN"]) {
        warned_once(&warnings, joint, shown);
    }
    // The fallback is a motor with no force.
    let mut hinge = *app.world().get::<RevoluteJoint>(joints[0]).unwrap();
    assert_eq!(hinge.motor_mut().unwrap().max_force, 0.0);
    let mut slider = *app.world().get::<PrismaticJoint>(joints[1]).unwrap();
    assert_eq!(slider.motor_mut().unwrap().max_force, 0.0);
    world_is_healthy(&mut app, w, 32);
}

#[test]
fn nan_limits_are_reported_and_removed() {
    // NaN ends made the limit clamps panic; one NaN end silently became a locked range.
    let ((mut app, cases, w), warnings) = capture_warnings(|| {
        let mut app = app();
        let w = witness(&mut app);
        let hinge = |min: f32, max: f32| {
            move |a, b| {
                RevoluteJoint::new(a, b)
                    .with_local_anchor2(Vec3::new(-1.0, 0.0, 0.0))
                    .with_angle_limits(min, max)
            }
        };
        let cases = vec![
            pendulum(&mut app, 0.0, hinge(f32::NAN, f32::NAN)),
            pendulum(&mut app, 4.0, hinge(f32::NAN, 0.0)),
            pendulum(&mut app, 8.0, |a, b| {
                SphericalJoint::new(a, b)
                    .with_local_anchor2(Vec3::new(-1.0, 0.0, 0.0))
                    .with_swing_limits(f32::NAN, f32::NAN)
                    .with_twist_limits(0.0, f32::NAN)
            }),
            pendulum(&mut app, 12.0, |a, b| {
                PrismaticJoint::new(a, b)
                    .with_slider_axis(Vec3::Y)
                    .with_limits(f32::NAN, f32::NAN)
            }),
        ];
        step(&mut app, 32);
        (app, cases, w)
    });
    // Every limit is removed: after 0.5 s (near the bottom of the swing) each ball has swung
    // or slid well below the anchor, where a locked range would have held it at y = 5.
    for &(joint, ball) in &cases {
        warned_once(&warnings, joint, "NaN");
        let y = position(&app, ball).y;
        assert!(y < 4.5, "{ball} (joint {joint}) still at y = {y}");
    }
    world_is_healthy(&mut app, w, 32);
}

#[test]
fn bad_distance_limits_are_reported() {
    let ((mut app, joints, w), warnings) = capture_warnings(|| {
        let mut app = app();
        let w = witness(&mut app);
        let rope = |min: f32, max: f32| move |a, b| DistanceJoint::new(a, b).with_limits(min, max);
        let joints = [
            // NaN: no limits, so the joint keeps its starting distance, 1 m.
            pendulum(&mut app, 0.0, rope(f32::NAN, f32::NAN)).0,
            pendulum(&mut app, 4.0, rope(f32::NAN, 2.0)).0,
            // A negative end is 0.
            pendulum(&mut app, 8.0, rope(-1.0, 2.0)).0,
        ];
        step(&mut app, 8);
        (app, joints, w)
    });
    let limits = |joint| {
        app.world()
            .get::<DistanceJoint>(joint)
            .unwrap()
            .limits()
            .unwrap()
    };
    for (&joint, (shown, fallback)) in
        joints
            .iter()
            .zip([("NaN", (1.0, 1.0)), ("NaN", (1.0, 1.0)), ("-1", (0.0, 2.0))])
    {
        warned_once(&warnings, joint, shown);
        let (min, max) = limits(joint);
        assert!(
            (min - fallback.0).abs() <= 1e-6 && (max - fallback.1).abs() <= 1e-6,
            "{joint}: limits ({min}, {max}), expected {fallback:?}"
        );
    }
    world_is_healthy(&mut app, w, 8);
}

#[test]
fn bad_joint_parameters_are_reported_and_replaced() {
    let ((mut app, [bad, axis], w), warnings) = capture_warnings(|| {
        let mut app = app();
        let w = witness(&mut app);
        let (bad, _) = pendulum(&mut app, 0.0, |a, b| {
            SphericalJoint::new(a, b)
                .with_local_anchor1(Vec3::new(f32::NAN, 0.0, 0.0))
                .with_compliance(f32::NAN)
                .with_linear_velocity_damping(-1.0)
                .with_angular_velocity_damping(f32::INFINITY)
                .with_break_force(f32::NAN)
        });
        let (axis, _) = pendulum(&mut app, 4.0, |a, b| {
            RevoluteJoint::new(a, b).with_hinge_axis(Vec3::ZERO)
        });
        step(&mut app, 16);
        (app, [bad, axis], w)
    });
    warned_once(&warnings, bad, "NaN");
    warned_once(&warnings, axis, "0");
    let joint = app.world().get::<SphericalJoint>(bad).unwrap();
    let base = joint.base();
    assert_eq!(base.local_anchor1, Vec3::ZERO);
    assert_eq!(base.compliance, 0.0);
    assert_eq!(base.linear_damping, 0.0);
    assert_eq!(base.angular_damping, 0.0);
    assert_eq!(base.break_force, None);
    world_is_healthy(&mut app, w, 16);
}

/// Mass of a uniform ball of radius 0.5 m at the default density, kg.
fn ball_mass() -> f32 {
    1000.0 * 4.0 / 3.0 * std::f32::consts::PI * 0.125
}

#[test]
fn bad_density_is_reported_and_replaced() {
    // It was replaced by 1000 without a word.
    let ((mut app, balls, w), warnings) = capture_warnings(|| {
        let mut app = app();
        ground(&mut app);
        let w = witness(&mut app);
        let balls: Vec<_> = [-1.0, f32::NAN, f32::INFINITY]
            .into_iter()
            .enumerate()
            .map(|(i, d)| ball_on_ground(&mut app, 3.0 * i as f32, ColliderDensity(d)))
            .collect();
        step(&mut app, 16);
        (app, balls, w)
    });
    for (&ball, shown) in balls.iter().zip(["-1", "NaN", "inf"]) {
        warned_once(&warnings, ball, shown);
        assert_eq!(app.world().get::<ColliderDensity>(ball).unwrap().0, 1000.0);
        let m = computed_mass(&app, ball).mass();
        assert!(
            (m - ball_mass()).abs() <= ball_mass() * 1e-5,
            "{ball}: mass {m}"
        );
    }
    world_is_healthy(&mut app, w, 16);
}

#[test]
fn zero_density_collider_adds_no_mass() {
    // A decorative or sensor part of density 0 adds nothing (it was silently made 1000).
    let ((app, body), warnings) = capture_warnings(|| {
        let mut app = app();
        let body = spawn(
            &mut app,
            (
                RigidBody::Dynamic,
                Collider::cuboid(1.0, 1.0, 1.0),
                Transform::from_xyz(0.0, 5.0, 0.0),
            ),
        );
        app.world_mut().spawn((
            Collider::sphere(0.5),
            ColliderDensity(0.0),
            Transform::from_xyz(0.0, 2.0, 0.0),
            ChildOf(body),
        ));
        step(&mut app, 2);
        (app, body)
    });
    assert!(warnings.is_empty(), "{warnings:?}");
    let m = computed_mass(&app, body);
    assert!((m.mass() - 1000.0).abs() <= 1e-2, "mass {}", m.mass());
    assert!(m.local_center_of_mass().length() <= 1e-6);
}

#[test]
fn nan_center_of_mass_without_colliders_is_reported_once() {
    // With no collider the NaN was used: the body froze and was reported every step.
    let ((mut app, body, w), warnings) = capture_warnings(|| {
        let mut app = app();
        let w = witness(&mut app);
        let body = spawn(
            &mut app,
            (
                RigidBody::Dynamic,
                CenterOfMass(Vec3::new(f32::NAN, 0.0, 0.0)),
                Transform::from_xyz(-500.0, WITNESS_Y0, 0.0),
            ),
        );
        step(&mut app, 32);
        (app, body, w)
    });
    warned_once(&warnings, body, "NaN");
    // The fallback is the centre of mass a body without colliders has: its origin.
    assert_eq!(computed_mass(&app, body).local_center_of_mass(), Vec3::ZERO);
    let (y, expected) = (position(&app, body).y, free_fall(WITNESS_Y0, g(), 32));
    assert!(
        (y - expected).abs() <= 1e-3,
        "body at {y}, free fall gives {expected}"
    );
    world_is_healthy(&mut app, w, 32);
}

#[test]
fn removing_mass_overrides_recomputes_the_mass() {
    let mut app = app();
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Mass(5.0),
            CenterOfMass(Vec3::new(0.0, 0.25, 0.0)),
            Transform::from_xyz(0.0, 5.0, 0.0),
        ),
    );
    step(&mut app, 1);
    assert!((computed_mass(&app, body).mass() - 5.0).abs() <= 1e-5);
    app.world_mut().entity_mut(body).remove::<Mass>();
    step(&mut app, 1);
    let m = computed_mass(&app, body).mass();
    assert!((m - 1000.0).abs() <= 1e-2, "mass {m} after removing Mass");
    assert_eq!(
        computed_mass(&app, body).local_center_of_mass(),
        Vec3::new(0.0, 0.25, 0.0)
    );
    app.world_mut().entity_mut(body).remove::<CenterOfMass>();
    step(&mut app, 1);
    let com = computed_mass(&app, body).local_center_of_mass();
    assert!(
        com.length() <= 1e-6,
        "centre of mass {com} after removing CenterOfMass"
    );
}

#[test]
fn compound_with_a_bad_part_keeps_its_good_parts() {
    // The compound's docs promise that bad parts are dropped and reported; one bad part used
    // to disable the whole collider, so the body fell through the ground.
    let ((mut app, body, w), warnings) = capture_warnings(|| {
        let mut app = app();
        ground(&mut app);
        let w = witness(&mut app);
        let nested = Collider::compound(vec![(Vec3::ZERO, Quat::IDENTITY, Collider::sphere(0.1))]);
        let compound = Collider::compound(vec![
            (Vec3::ZERO, Quat::IDENTITY, Collider::cuboid(1.0, 1.0, 1.0)),
            (Vec3::X, Quat::IDENTITY, Collider::sphere(f32::NAN)),
            (Vec3::NEG_X, Quat::IDENTITY, nested),
            (
                Vec3::Y * f32::INFINITY,
                Quat::IDENTITY,
                Collider::sphere(0.5),
            ),
        ]);
        let body = spawn(
            &mut app,
            (
                RigidBody::Dynamic,
                compound,
                Transform::from_xyz(0.0, 0.5, 0.0),
            ),
        );
        step(&mut app, 32);
        (app, body, w)
    });
    warned_once(&warnings, body, "part 1");
    let warning = about(&warnings, body)[0];
    assert!(
        warning.contains("part 2") && warning.contains("part 3"),
        "{warning}"
    );
    // The cube still rests on the ground and alone gives the mass.
    let y = position(&app, body).y;
    assert!((y - 0.5).abs() <= slop(), "body at {y}");
    let m = computed_mass(&app, body).mass();
    assert!((m - 1000.0).abs() <= 1e-2, "mass {m}");
    world_is_healthy(&mut app, w, 32);
}

/// A ball at `(x, WITNESS_Y0, 20)` in free fall, with `extra`.
fn falling_ball(app: &mut App, x: f32, extra: impl Bundle) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(x, WITNESS_Y0, 20.0),
            extra,
        ),
    )
}

#[test]
fn bad_damping_gravity_scale_and_forces_are_reported_and_replaced() {
    // NaN or negative damping was turned into 0 without a word; a NaN gravity scale or force
    // froze the body and reported it every step.
    let ((mut app, balls, w), warnings) = capture_warnings(|| {
        let mut app = app();
        let w = witness(&mut app);
        let balls = [
            falling_ball(&mut app, 0.0, LinearDamping(f32::NAN)),
            falling_ball(&mut app, 3.0, AngularDamping(-1.0)),
            falling_ball(&mut app, 6.0, GravityScale(f32::NAN)),
            falling_ball(&mut app, 9.0, ConstantForce(Vec3::new(0.0, f32::NAN, 0.0))),
            falling_ball(&mut app, 12.0, ConstantTorque(Vec3::splat(f32::INFINITY))),
        ];
        step(&mut app, 32);
        (app, balls, w)
    });
    for (&ball, shown) in balls.iter().zip(["NaN", "-1", "NaN", "NaN", "inf"]) {
        warned_once(&warnings, ball, shown);
        // The fallbacks (no damping, scale 1, no force or torque) leave plain free fall.
        let (y, expected) = (position(&app, ball).y, free_fall(WITNESS_Y0, g(), 32));
        assert!(
            (y - expected).abs() <= 1e-3,
            "{ball} at {y}, free fall gives {expected}"
        );
        assert_eq!(angular_velocity(&app, ball), Vec3::ZERO);
    }
    let world = app.world();
    assert_eq!(world.get::<LinearDamping>(balls[0]).unwrap().0, 0.0);
    assert_eq!(world.get::<AngularDamping>(balls[1]).unwrap().0, 0.0);
    assert_eq!(world.get::<GravityScale>(balls[2]).unwrap().0, 1.0);
    assert_eq!(world.get::<ConstantForce>(balls[3]).unwrap().0, Vec3::ZERO);
    assert_eq!(world.get::<ConstantTorque>(balls[4]).unwrap().0, Vec3::ZERO);
    world_is_healthy(&mut app, w, 32);
}

/// The warnings that mention `name`.
fn mentioning<'a>(warnings: &'a [String], name: &str) -> Vec<&'a String> {
    warnings.iter().filter(|w| w.contains(name)).collect()
}

#[test]
fn bad_gravity_is_reported_once_and_replaced() {
    // NaN gravity made every body non-finite, reset and reported, every step.
    let ((mut app, w), warnings) = capture_warnings(|| {
        let mut app = app();
        let w = witness(&mut app);
        app.insert_resource(Gravity(Vec3::new(0.0, f32::NAN, 0.0)));
        step(&mut app, 16);
        // Written again: still one warning.
        app.insert_resource(Gravity(Vec3::splat(f32::INFINITY)));
        step(&mut app, 16);
        (app, w)
    });
    let mine = mentioning(&warnings, "Gravity");
    assert_eq!(mine.len(), 1, "{warnings:?}");
    assert!(mine[0].contains("NaN"), "{}", mine[0]);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(*app.world().resource::<Gravity>(), Gravity::default());
    world_is_healthy(&mut app, w, 32);
}

#[test]
fn bad_substep_count_is_reported_and_replaced() {
    let ((app, substeps), warnings) = capture_warnings(|| {
        let mut app = app();
        app.insert_resource(SubstepCount(0));
        step(&mut app, 2);
        let zero = app.world().resource::<PhysicsStepTime>().substeps;
        app.insert_resource(SubstepCount(100_000));
        step(&mut app, 2);
        let huge = app.world().resource::<PhysicsStepTime>().substeps;
        (app, [zero, huge])
    });
    // 0 runs 1 substep; a count above the cap runs the cap (it was run in full: 100 000
    // substeps a step, and u32::MAX would hang the app).
    assert_eq!(substeps, [1, impetus3d::validation::MAX_SUBSTEPS]);
    // Reported once, like every resource, and for the first bad value.
    let mine = mentioning(&warnings, "SubstepCount");
    assert_eq!(mine.len(), 1, "{warnings:?}");
    assert!(mine[0].starts_with("SubstepCount: 0 "), "{mine:?}");
    assert_eq!(
        app.world().resource::<SubstepCount>().0,
        impetus3d::validation::MAX_SUBSTEPS
    );
}

#[test]
fn bad_solver_and_sleep_settings_are_reported_and_replaced() {
    let ((mut app, ball, w), warnings) = capture_warnings(|| {
        let mut app = app();
        ground(&mut app);
        let w = witness(&mut app);
        let ball = ball_on_ground(&mut app, 0.0, ());
        app.insert_resource(SolverConfig {
            contact_frequency: f32::NAN,
            linear_slop: -1.0,
            ..default()
        });
        app.insert_resource(SleepThreshold {
            linear: f32::NAN,
            time_to_sleep: -1.0,
            ..default()
        });
        step(&mut app, 64);
        (app, ball, w)
    });
    let solver = mentioning(&warnings, "SolverConfig");
    assert_eq!(solver.len(), 1, "{warnings:?}");
    assert!(
        solver[0].contains("NaN") && solver[0].contains("-1"),
        "{solver:?}"
    );
    let sleep = mentioning(&warnings, "SleepThreshold");
    assert_eq!(sleep.len(), 1, "{warnings:?}");
    assert!(
        sleep[0].contains("NaN") && sleep[0].contains("-1"),
        "{sleep:?}"
    );
    assert_eq!(
        *app.world().resource::<SolverConfig>(),
        SolverConfig::default()
    );
    assert_eq!(
        *app.world().resource::<SleepThreshold>(),
        SleepThreshold::default()
    );
    // With the defaults back, the ball rests on the ground and falls asleep.
    assert!((position(&app, ball).y - 0.5).abs() <= slop());
    assert!(is_sleeping(&app, ball));
    world_is_healthy(&mut app, w, 64);
}

/// A contact tolerance or speed limit above its cap (a level file's 10⁹) is capped, with a
/// warning, before the broad phase uses it: a tolerance of 10⁹ m made every body a candidate
/// of every other (a step of 1,100 bodies ran for a second), and a speed limit of 10³⁰ would
/// let boxes sweep without bound again.
#[test]
fn a_huge_contact_tolerance_or_speed_limit_is_capped() {
    use impetus3d::validation::{MAX_LINEAR_SLOP, MAX_LINEAR_SPEED};
    let huge = SolverConfig {
        linear_slop: 1e9,
        max_linear_speed: 1e30,
        ..default()
    };
    // Read outside the step (spatial queries) before the validation stage runs: capped too.
    assert_eq!(huge.speculative_distance(), 4.0 * MAX_LINEAR_SLOP);
    let ((app, ball, w), warnings) = capture_warnings(|| {
        let mut app = app();
        ground(&mut app);
        let w = witness(&mut app);
        let ball = ball_on_ground(&mut app, 0.0, ());
        app.insert_resource(huge);
        step(&mut app, 64);
        (app, ball, w)
    });
    let solver = mentioning(&warnings, "SolverConfig");
    assert_eq!(solver.len(), 1, "{warnings:?}");
    assert!(
        solver[0].contains("linear_slop 1000000000 is more than 0.1")
            && solver[0].contains("max_linear_speed"),
        "{solver:?}"
    );
    let config = *app.world().resource::<SolverConfig>();
    assert_eq!(
        (config.linear_slop, config.max_linear_speed),
        (MAX_LINEAR_SLOP, MAX_LINEAR_SPEED)
    );
    // The ball rests within the capped tolerance of the ground.
    assert!((position(&app, ball).y - 0.5).abs() <= MAX_LINEAR_SLOP);
    let mut app = app;
    world_is_healthy(&mut app, w, 64);
}

/// Records what a custom constraint reads of its one body on the first solve.
#[derive(Component)]
struct Observer {
    body: Entity,
    seen: Option<(Entity, RigidBody, f32, Vec3, LockedAxes, Vec3)>,
}

impl XpbdConstraint<1> for Observer {
    fn entities(&self) -> [Entity; 1] {
        [self.body]
    }
    fn clear_lagrange_multipliers(&mut self) {}
    fn solve(&mut self, [body]: [&mut RigidBodyQueryItem; 1], _dt: f32) {
        self.seen.get_or_insert((
            body.entity(),
            body.rb(),
            body.inverse_mass(),
            body.center_of_mass(),
            body.locked_axes(),
            body.start_position(),
        ));
    }
}

impl bevy::ecs::entity::MapEntities for Observer {
    fn map_entities<M: bevy::ecs::entity::EntityMapper>(&mut self, mapper: &mut M) {
        self.body = mapper.get_mapped(self.body);
    }
}

#[test]
fn custom_constraints_read_the_body_description_through_accessors() {
    // `position` and `locked_axes` were public fields whose writes had no effect; the body's
    // description is now read-only (a write does not compile: see the `compile_fail` example
    // on `RigidBodyQueryItem`).
    let mut app = app();
    app.add_systems(
        SubstepSchedule,
        solve_constraint::<Observer, 1>.in_set(SubstepSolverSet::SolveUserConstraints),
    );
    let locked = LockedAxes::new().lock_rotation_x().lock_translation_z();
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Mass(2.0),
            CenterOfMass(Vec3::new(0.0, 0.1, 0.0)),
            locked,
            Transform::from_xyz(1.0, 2.0, 3.0),
        ),
    );
    let observer = spawn(&mut app, Observer { body, seen: None });
    step(&mut app, 1);
    let seen = app.world().get::<Observer>(observer).unwrap().seen;
    let expected = (
        body,
        RigidBody::Dynamic,
        0.5,
        Vec3::new(0.0, 0.1, 0.0),
        locked,
        Vec3::new(1.0, 2.0, 3.0),
    );
    assert_eq!(seen, Some(expected));
}

#[test]
fn pose_and_mass_are_ready_right_after_spawning() {
    // They were filled by the first step only: a system reading them before saw defaults
    // (the origin and 1 kg).
    let mut app = app();
    let from_transform = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 2.0, 1.0),
            Transform::from_xyz(1.0, 2.0, 3.0).with_rotation(Quat::from_rotation_y(0.5)),
        ),
    );
    let from_position = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Position(Vec3::new(-4.0, 5.0, 6.0)),
            Collider::sphere(0.5),
            Mass(3.0),
        ),
    );
    // A body whose collider is a child, spawned after it, and a density set afterwards.
    let parent = spawn(
        &mut app,
        (RigidBody::Dynamic, Transform::from_xyz(9.0, 9.0, 9.0)),
    );
    app.world_mut().spawn((
        Collider::cuboid(1.0, 1.0, 1.0),
        ColliderDensity(500.0),
        Transform::from_xyz(0.0, 1.0, 0.0),
        ChildOf(parent),
    ));
    // An entity that becomes a body after its collider was spawned.
    let later = spawn(
        &mut app,
        (Collider::sphere(0.5), Transform::from_xyz(-9.0, 9.0, 9.0)),
    );
    set(&mut app, later, RigidBody::Dynamic);
    let world = app.world();
    assert_eq!(position(&app, later), Vec3::new(-9.0, 9.0, 9.0));
    let m = computed_mass(&app, later).mass();
    assert!((m - ball_mass()).abs() <= 1e-2, "mass {m}");
    assert_eq!(position(&app, from_transform), Vec3::new(1.0, 2.0, 3.0));
    assert_eq!(rotation(&app, from_transform), Quat::from_rotation_y(0.5));
    let t = world.get::<Transform>(from_position).unwrap().translation;
    assert_eq!(t, Vec3::new(-4.0, 5.0, 6.0));
    let masses = [from_transform, from_position, parent].map(|e| computed_mass(&app, e));
    assert!((masses[0].mass() - 2000.0).abs() <= 1e-2, "{:?}", masses[0]);
    assert!((masses[1].mass() - 3.0).abs() <= 1e-5, "{:?}", masses[1]);
    assert!((masses[2].mass() - 500.0).abs() <= 1e-2, "{:?}", masses[2]);
    assert!((masses[2].local_center_of_mass() - Vec3::Y).length() <= 1e-6);
    // The first step agrees with what the hooks computed and leaves the poses alone (no
    // gravity in the first instant beyond the step's own fall).
    step(&mut app, 1);
    for (e, before) in [from_transform, from_position, parent]
        .into_iter()
        .zip(masses)
    {
        let after = computed_mass(&app, e);
        assert!((after.mass() - before.mass()).abs() <= before.mass() * 1e-6);
        let moved = after.local_center_of_mass() - before.local_center_of_mass();
        assert!(moved.length() <= 1e-6);
    }
    assert!((position(&app, from_position) - Vec3::new(-4.0, 5.0, 6.0)).length() <= 1e-2);
    // Overrides inserted or removed between steps count at once too.
    set(&mut app, from_transform, Mass(10.0));
    app.world_mut().entity_mut(from_position).remove::<Mass>();
    let m = computed_mass(&app, from_transform).mass();
    assert!(
        (m - 10.0).abs() <= 1e-5,
        "mass {m} after inserting Mass(10)"
    );
    let m = computed_mass(&app, from_position).mass();
    assert!(
        (m - ball_mass()).abs() <= 1e-2,
        "mass {m} after removing Mass"
    );
}

#[test]
fn a_system_after_spawning_reads_pose_and_mass() {
    // The same through Commands, as a game does it: spawn in one system, read in the next.
    #[derive(Resource)]
    struct Seen(Vec3, f32);
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, PhysicsPlugin::default()))
        .add_systems(
            Startup,
            (
                |mut commands: Commands| {
                    commands.spawn((
                        RigidBody::Dynamic,
                        Collider::sphere(0.5),
                        Mass(7.0),
                        Transform::from_xyz(0.0, 3.0, 0.0),
                    ));
                },
                |mut commands: Commands, bodies: Query<(&Position, &ComputedMass)>| {
                    let (p, m) = bodies.single().unwrap();
                    commands.insert_resource(Seen(p.0, m.mass()));
                },
            )
                .chain(),
        );
    app.update();
    let seen = app.world().resource::<Seen>();
    assert_eq!(seen.0, Vec3::new(0.0, 3.0, 0.0));
    assert!((seen.1 - 7.0).abs() <= 1e-5, "mass {}", seen.1);
}

#[test]
fn bad_d6_joint_values_are_reported_and_replaced() {
    // A NaN limit end silently made a locked range (NaN.min(x) = x), a NaN force limit became
    // 0 without a word, and a zero basis became NaN rows.
    let ((mut app, [limited, frame], w), warnings) = capture_warnings(|| {
        let mut app = app();
        let w = witness(&mut app);
        let (limited, _) = pendulum(&mut app, 0.0, |a, b| {
            D6Joint::new(a, b)
                .with_local_anchor2(Vec3::new(-1.0, 0.0, 0.0))
                .with_limit(D6Axis::Twist, f32::NAN, 0.5)
                .with_drive(D6Axis::X, D6Drive::motor(f32::NAN))
        });
        let (frame, _) = pendulum(&mut app, 4.0, |a, b| {
            D6Joint::new(a, b).with_local_basis_1(Quat::from_xyzw(0.0, 0.0, 0.0, 0.0))
        });
        step(&mut app, 8);
        (app, [limited, frame], w)
    });
    warned_once(&warnings, limited, "NaN");
    warned_once(&warnings, frame, "basis");
    let joint = app.world().get::<D6Joint>(limited).unwrap();
    assert_eq!(joint.motions[D6Axis::Twist as usize], D6Motion::Free);
    assert_eq!(joint.drives[D6Axis::X as usize].unwrap().max_force, 0.0);
    let joint = app.world().get::<D6Joint>(frame).unwrap();
    assert_eq!(joint.local_basis1, Quat::IDENTITY);
    world_is_healthy(&mut app, w, 8);
}

#[test]
fn bad_impulse_is_reported_once_and_ignored() {
    // Each bad impulse was reported, without its value.
    let ((mut app, ball, w), warnings) = capture_warnings(|| {
        let mut app = app();
        let w = witness(&mut app);
        let ball = falling_ball(&mut app, 0.0, ());
        for _ in 0..3 {
            set(
                &mut app,
                ball,
                ExternalImpulse::new(Vec3::new(f32::NAN, 1.0, 0.0)),
            );
            step(&mut app, 1);
        }
        step(&mut app, 29);
        (app, ball, w)
    });
    warned_once(&warnings, ball, "NaN");
    let (y, expected) = (position(&app, ball).y, free_fall(WITNESS_Y0, g(), 32));
    assert!(
        (y - expected).abs() <= 1e-3,
        "ball at {y}, free fall gives {expected}"
    );
    world_is_healthy(&mut app, w, 32);
}

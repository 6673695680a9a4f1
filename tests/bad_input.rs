//! Bad input never panics, never spreads NaN to other bodies, and is reported with a warning
//! that names the entity; the rest of the world keeps simulating normally.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// True if one of the warnings names `entity` (as a whole token, so `2v0` does not match
/// `12v0`).
fn names(warnings: &[String], entity: Entity) -> bool {
    let name = format!("{entity}");
    warnings.iter().any(|w| {
        w.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|token| token == name)
    })
}

/// Fails unless some warning names `entity`.
fn assert_warned(warnings: &[String], entity: Entity) {
    assert!(
        names(warnings, entity),
        "no warning names {entity}: {warnings:?}"
    );
}

/// The scene every test disturbs: ground, a two-box stack (sleeping disabled so it stays in
/// the solver), and a witness ball in free fall far from everything.
struct Scene {
    app: App,
    lower: Entity,
    upper: Entity,
    witness: Entity,
}

const WITNESS_Y0: f32 = 100.0;

fn scene() -> Scene {
    let mut app = app();
    ground(&mut app);
    let lower = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.5, 0.0),
            SleepingDisabled,
        ),
    );
    let upper = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 1.5, 0.0),
            SleepingDisabled,
        ),
    );
    let witness = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(500.0, WITNESS_Y0, 0.0),
        ),
    );
    Scene {
        app,
        lower,
        upper,
        witness,
    }
}

/// After `steps` steps in total since the scene was built, the witness is exactly where free
/// fall puts it, every body is finite, and `supported` is still resting on its support.
fn world_is_healthy(scene: &mut Scene, steps: u32, supported: &[(Entity, f32)]) {
    let app = &mut scene.app;
    assert!(
        all_bodies_finite(app),
        "a body has a non-finite pose or velocity"
    );
    let t = steps as f32 * DT;
    let h = DT / 4.0;
    // Semi-implicit Euler's discrete free fall y0 - ½ g t (t + h) (see free_fall.rs); the
    // tolerance is the f32 rounding bound at |y| ≈ 100 m: ≤ steps × ½ ulp(128) = 7.6e-6 per
    // position update plus the velocity-rounding share (≤ 3e-4 m over 1 s, as in free_fall.rs).
    let expected = WITNESS_Y0 - 0.5 * g() * t * (t + h);
    let y = position(app, scene.witness).y;
    assert!(
        (y - expected).abs() <= steps as f32 * 7.6e-6 + 3e-4,
        "witness at y = {y}, free fall gives {expected}"
    );
    for &(e, rest_y) in supported {
        // Still resting where it was: within the contact tolerance of its rest height.
        let p = position(app, e);
        assert!(
            (p.y - rest_y).abs() <= 2.0 * slop(),
            "{e} at {p}, expected height {rest_y}"
        );
    }
}

#[test]
fn nan_linear_velocity_is_reset_and_reported() {
    let (mut scene, warnings) = capture_warnings(|| {
        let mut scene = scene();
        step(&mut scene.app, 20);
        set(&mut scene.app, scene.lower, LinearVelocity(Vec3::NAN));
        step(&mut scene.app, 44);
        scene
    });
    assert_warned(&warnings, scene.lower);
    let (lower, upper) = (scene.lower, scene.upper);
    world_is_healthy(&mut scene, 64, &[(lower, 0.5), (upper, 1.5)]);
}

#[test]
fn nan_angular_velocity_is_reset_and_reported() {
    let (mut scene, warnings) = capture_warnings(|| {
        let mut scene = scene();
        step(&mut scene.app, 20);
        set(
            &mut scene.app,
            scene.upper,
            AngularVelocity(Vec3::new(0.0, f32::NAN, 0.0)),
        );
        step(&mut scene.app, 44);
        scene
    });
    assert_warned(&warnings, scene.upper);
    let (lower, upper) = (scene.lower, scene.upper);
    world_is_healthy(&mut scene, 64, &[(lower, 0.5), (upper, 1.5)]);
}

#[test]
fn infinite_velocity_is_reset_and_reported() {
    let (mut scene, warnings) = capture_warnings(|| {
        let mut scene = scene();
        step(&mut scene.app, 20);
        set(
            &mut scene.app,
            scene.upper,
            LinearVelocity(Vec3::new(f32::INFINITY, 0.0, 0.0)),
        );
        set(
            &mut scene.app,
            scene.lower,
            AngularVelocity(Vec3::splat(f32::NEG_INFINITY)),
        );
        step(&mut scene.app, 44);
        scene
    });
    assert_warned(&warnings, scene.lower);
    assert_warned(&warnings, scene.upper);
    let (lower, upper) = (scene.lower, scene.upper);
    world_is_healthy(&mut scene, 64, &[(lower, 0.5), (upper, 1.5)]);
}

#[test]
fn huge_finite_velocity_does_not_poison_neighbours() {
    // 1e30 m/s is finite but overflows to infinity in v² and in positions: the engine must
    // still keep the other bodies finite.
    let (mut scene, _warnings) = capture_warnings(|| {
        let mut scene = scene();
        step(&mut scene.app, 20);
        set(
            &mut scene.app,
            scene.upper,
            LinearVelocity(Vec3::new(0.0, -1e30, 1e30)),
        );
        step(&mut scene.app, 44);
        scene
    });
    // The stack may be knocked about by the bullet, but nothing may go non-finite and the
    // witness must still fall freely.
    world_is_healthy(&mut scene, 64, &[]);
}

#[test]
fn nan_position_is_rejected_and_reported() {
    let (mut scene, warnings) = capture_warnings(|| {
        let mut scene = scene();
        step(&mut scene.app, 20);
        set(
            &mut scene.app,
            scene.upper,
            Position(Vec3::new(f32::NAN, 1.5, 0.0)),
        );
        step(&mut scene.app, 22);
        // And through the Transform.
        set(
            &mut scene.app,
            scene.upper,
            Transform::from_xyz(0.0, f32::INFINITY, 0.0),
        );
        step(&mut scene.app, 22);
        scene
    });
    assert_warned(&warnings, scene.upper);
    let (lower, upper) = (scene.lower, scene.upper);
    // The rejected moves keep the last valid pose: the stack is undisturbed.
    world_is_healthy(&mut scene, 64, &[(lower, 0.5), (upper, 1.5)]);
}

#[test]
fn degenerate_rotation_is_rejected_and_reported() {
    let (mut scene, warnings) = capture_warnings(|| {
        let mut scene = scene();
        step(&mut scene.app, 20);
        set(
            &mut scene.app,
            scene.upper,
            Rotation(Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)),
        );
        step(&mut scene.app, 22);
        set(
            &mut scene.app,
            scene.lower,
            Rotation(Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0)),
        );
        step(&mut scene.app, 22);
        scene
    });
    assert_warned(&warnings, scene.upper);
    assert_warned(&warnings, scene.lower);
    let (lower, upper) = (scene.lower, scene.upper);
    world_is_healthy(&mut scene, 64, &[(lower, 0.5), (upper, 1.5)]);
}

#[test]
fn body_spawned_with_nan_transform_is_reported() {
    let (mut scene, warnings) = capture_warnings(|| {
        let mut scene = scene();
        let bad = spawn(
            &mut scene.app,
            (
                RigidBody::Dynamic,
                Collider::sphere(0.5),
                Transform::from_xyz(f32::NAN, 10.0, 0.0),
            ),
        );
        step(&mut scene.app, 64);
        (scene, bad)
    });
    let (ref mut scene, bad) = scene;
    assert!(
        names(&warnings, bad),
        "no warning names {bad}: {warnings:?}"
    );
    // The engine gives a body with no valid pose yet the origin, which here is inside the
    // stack, so the stack may be shoved; only finiteness and the witness are checked.
    world_is_healthy(scene, 64, &[]);
}

#[test]
fn zero_size_and_non_finite_colliders_are_reported_and_ignored() {
    let ((mut scene, bad), warnings) = capture_warnings(|| {
        let mut scene = scene();
        let shapes = [
            Collider::cuboid(0.0, 0.0, 0.0),
            Collider::sphere(0.0),
            Collider::sphere(f32::NAN),
            Collider::cuboid(f32::INFINITY, 1.0, 1.0),
            Collider::capsule(0.0, 0.0),
        ];
        let bad: Vec<Entity> = shapes
            .into_iter()
            .enumerate()
            .map(|(i, collider)| {
                spawn(
                    &mut scene.app,
                    (
                        RigidBody::Dynamic,
                        collider,
                        Transform::from_xyz(3.0 * i as f32 - 6.0, 3.0, 5.0),
                    ),
                )
            })
            .collect();
        step(&mut scene.app, 64);
        (scene, bad)
    });
    for &e in &bad {
        assert!(names(&warnings, e), "no warning names {e}: {warnings:?}");
        // No usable collider: the body still gets a finite, positive mass.
        let m = computed_mass(&scene.app, e).mass();
        assert!(m.is_finite() && m > 0.0, "{e} has mass {m}");
    }
    let (lower, upper) = (scene.lower, scene.upper);
    world_is_healthy(&mut scene, 64, &[(lower, 0.5), (upper, 1.5)]);
}

#[test]
fn broken_meshes_hulls_fields_and_negative_or_huge_sizes_are_reported_and_ignored() {
    let ((mut scene, bad), warnings) = capture_warnings(|| {
        let mut scene = scene();
        let triangle = vec![Vec3::ZERO, Vec3::X, Vec3::Z];
        let shapes = [
            // An index past the vertex list: parry's mass computation read past it.
            (
                RigidBody::Static,
                Collider::trimesh(triangle.clone(), vec![[0, 1, 3]]),
            ),
            (
                RigidBody::Dynamic,
                Collider::trimesh(triangle, vec![[0, 1, 2], [2, 1, u32::MAX]]),
            ),
            (
                RigidBody::Dynamic,
                Collider::trimesh(vec![Vec3::ZERO, Vec3::X, Vec3::NAN], vec![[0, 1, 2]]),
            ),
            (
                RigidBody::Static,
                Collider::heightfield(vec![vec![0.0; 3], vec![0.0; 2]], Vec3::ONE),
            ),
            (RigidBody::Dynamic, Collider::cuboid(-1.0, 1.0, 1.0)),
            (RigidBody::Dynamic, Collider::capsule(-0.5, 1.0)),
            // parry's cylinder asserts that its sizes are positive.
            (RigidBody::Dynamic, Collider::cylinder(0.5, -1.0)),
            // Finite but absurd: its bounding sphere overflowed and panicked the broad phase.
            (RigidBody::Kinematic, Collider::cuboid(2e30, 0.2, 0.2)),
            (RigidBody::Static, Collider::sphere(2e6)),
        ];
        let bad: Vec<Entity> = shapes
            .into_iter()
            .enumerate()
            .map(|(i, (body, collider))| {
                spawn(
                    &mut scene.app,
                    (
                        body,
                        collider,
                        Transform::from_xyz(3.0 * i as f32 - 6.0, 3.0, 5.0),
                    ),
                )
            })
            .collect();
        step(&mut scene.app, 64);
        (scene, bad)
    });
    for &e in &bad {
        assert_warned(&warnings, e);
    }
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("triangle 0 names vertex 3"))
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("vertex 2 is not finite"))
    );
    let (lower, upper) = (scene.lower, scene.upper);
    world_is_healthy(&mut scene, 64, &[(lower, 0.5), (upper, 1.5)]);
}

#[test]
fn try_trimesh_returns_what_is_wrong_with_the_mesh() {
    use impetus3d::collision::TrimeshError;
    let vertices = vec![Vec3::ZERO, Vec3::X, Vec3::Z];
    let error = |vertices: Vec<Vec3>, indices| Collider::try_trimesh(vertices, indices).err();
    assert_eq!(
        error(vertices.clone(), vec![[0, 1, 2], [0, 7, 1]]),
        Some(TrimeshError::IndexOutOfRange {
            triangle: 1,
            index: 7,
            vertices: 3
        })
    );
    assert_eq!(
        error(vertices.clone(), vec![]),
        Some(TrimeshError::NoTriangles)
    );
    let mut nan = vertices.clone();
    nan[1].y = f32::NAN;
    assert_eq!(
        error(nan, vec![[0, 1, 2]]),
        Some(TrimeshError::NonFiniteVertex { vertex: 1 })
    );
    assert_eq!(error(vertices, vec![[0, 1, 2]]), None);
}

#[test]
fn a_huge_xpbd_iteration_count_is_capped_and_the_steps_finish() {
    let (app, warnings) = capture_warnings(|| {
        let mut app = app();
        let anchor = spawn(&mut app, (RigidBody::Static, Transform::default()));
        let bob = spawn(
            &mut app,
            (
                RigidBody::Dynamic,
                Collider::sphere(0.1),
                Transform::from_xyz(1.0, 0.0, 0.0),
            ),
        );
        spawn(
            &mut app,
            RevoluteJoint::new(anchor, bob).with_local_anchor2(Vec3::NEG_X),
        );
        // 20 million passes took more than 15 s for 5 steps of this joint before the cap.
        app.insert_resource(XpbdIterations(20_000_000));
        with_deadline(120, "5 steps at 20 million XPBD passes", || {
            step(&mut app, 5)
        });
        app
    });
    let cap = impetus3d::validation::MAX_XPBD_ITERATIONS;
    assert_eq!(app.world().resource::<XpbdIterations>().0, cap);
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("XpbdIterations") && w.contains("20000000")),
        "{warnings:?}"
    );
}

/// A fast body is a broad-phase candidate only of what its step can reach. A body at 10⁶ or
/// 10³⁰ m/s (from a file, or a world gone wild: a joint exploding) reaches what the speed cap
/// carries it to: before the cap its box swept past every body in its path. Bodies falling
/// side by side at the cap (a pile under a huge gravity) sweep boxes along their motion, not
/// boxes as far out on every side: before, each ball of a grid was a candidate of hundreds
/// (the level fuzzer found steps of 1,100 bodies with 457,000 pairs taking 1–2 s).
#[test]
fn fast_bodies_pair_only_with_what_their_step_can_reach() {
    use bevy::ecs::system::SystemParam;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    static CANDIDATES: AtomicUsize = AtomicUsize::new(0);

    #[derive(SystemParam)]
    struct CountPairs<'w> {
        _time: Res<'w, Time>,
    }

    impl CollisionHooks for CountPairs<'_> {
        fn filter_pairs(&self, _: Entity, _: Entity, _: &mut Commands) -> bool {
            CANDIDATES.fetch_add(1, Ordering::SeqCst);
            true
        }
    }

    fn app_counting_pairs() -> App {
        let dt = Duration::from_secs_f64(DT as f64);
        let mut app = App::new();
        app.add_plugins((
            MinimalPlugins,
            PhysicsPlugin::default().with_collision_hooks::<CountPairs<'static>>(),
        ))
        .insert_resource(Time::<Fixed>::from_duration(dt))
        .insert_resource(bevy::time::TimeUpdateStrategy::ManualDuration(dt));
        app.update();
        app
    }

    for speed in [1e6, 1e30] {
        CANDIDATES.store(0, Ordering::SeqCst);
        let mut app = app_counting_pairs();
        // Balls 20 m apart along the fast body's path, the first 20 m ahead, gravity off.
        for k in 1..=50 {
            spawn(
                &mut app,
                (
                    RigidBody::Dynamic,
                    Collider::sphere(0.5),
                    Transform::from_xyz(20.0 * k as f32, 0.0, 0.0),
                    GravityScale(0.0),
                ),
            );
        }
        spawn(
            &mut app,
            (
                RigidBody::Dynamic,
                Collider::sphere(0.5),
                Transform::default(),
                LinearVelocity(Vec3::new(speed, 0.0, 0.0)),
                GravityScale(0.0),
                ActiveCollisionHooks::FILTER_PAIRS,
            ),
        );
        step(&mut app, 1);
        // It reaches 400 m/s × 1/64 s = 6.25 m (plus the speculative margin): no ball.
        assert_eq!(
            CANDIDATES.load(Ordering::SeqCst),
            0,
            "candidate pairs at {speed} m/s"
        );
        assert!(all_bodies_finite(&mut app));
    }

    CANDIDATES.store(0, Ordering::SeqCst);
    let mut app = app_counting_pairs();
    for i in 0..10 {
        for j in 0..10 {
            spawn(
                &mut app,
                (
                    RigidBody::Dynamic,
                    Collider::sphere(0.2),
                    Transform::from_xyz(0.6 * i as f32, 100.0, 0.6 * j as f32),
                    LinearVelocity(Vec3::new(0.0, -400.0, 0.0)),
                    ActiveCollisionHooks::FILTER_PAIRS,
                ),
            );
        }
    }
    step(&mut app, 1);
    let candidates = CANDIDATES.load(Ordering::SeqCst);
    assert_eq!(candidates, 0, "candidate pairs side by side");
}

/// A rotation whose components are finite but whose length overflows f32 (a 10³⁰ from a
/// file) is a bad pose like a NaN one: normalising it gave a zero rotation, and a ray cast
/// against the body's collider panicked in parry.
#[test]
fn a_rotation_too_long_to_normalise_is_reported_and_the_last_pose_kept() {
    let ((mut scene, bad, hits), warnings) = capture_warnings(|| {
        let mut scene = scene();
        let bad = spawn(
            &mut scene.app,
            (
                RigidBody::Dynamic,
                Collider::cuboid(1.0, 1.0, 1.0),
                Transform::from_xyz(5.0, 3.0, 5.0),
            ),
        );
        let caster = spawn(
            &mut scene.app,
            RayCaster::new(Vec3::new(5.0, 10.0, 5.0), Dir3::NEG_Y),
        );
        step(&mut scene.app, 2);
        set(
            &mut scene.app,
            bad,
            Rotation(Quat::from_xyzw(0.0, -1e30, 0.48, 0.88)),
        );
        step(&mut scene.app, 2);
        let hits = scene
            .app
            .world()
            .get::<RayHits>(caster)
            .unwrap()
            .iter()
            .count();
        (scene, bad, hits)
    });
    assert_warned(&warnings, bad);
    assert!(rotation(&scene.app, bad).is_normalized());
    assert_eq!(hits, 1, "the ray still hits the body");
    let (lower, upper) = (scene.lower, scene.upper);
    world_is_healthy(&mut scene, 4, &[(lower, 0.5), (upper, 1.5)]);
}

/// A collider on a child entity whose `Transform` is not finite (a NaN from a file) is
/// reported and takes no part in collision detection; its body keeps simulating.
#[test]
fn a_child_collider_at_a_non_finite_offset_is_reported_and_ignored() {
    let ((mut scene, child, body), warnings) = capture_warnings(|| {
        let mut scene = scene();
        let body = spawn(
            &mut scene.app,
            (
                RigidBody::Dynamic,
                Collider::sphere(0.5),
                Transform::from_xyz(5.0, 0.5, 5.0),
            ),
        );
        let child = spawn(
            &mut scene.app,
            (
                Collider::sphere(0.25),
                Transform::from_xyz(f32::NAN, 0.0, 0.0),
                ChildOf(body),
            ),
        );
        step(&mut scene.app, 8);
        (scene, child, body)
    });
    assert_warned(&warnings, child);
    let mass = computed_mass(&scene.app, body).mass();
    assert!(mass.is_finite() && mass > 0.0, "mass {mass}");
    assert!((position(&scene.app, body).y - 0.5).abs() < 2.0 * slop());
    let (lower, upper) = (scene.lower, scene.upper);
    world_is_healthy(&mut scene, 8, &[(lower, 0.5), (upper, 1.5)]);
}

#[test]
fn non_positive_mass_is_reported_and_collider_mass_used() {
    let ((mut scene, bad), warnings) = capture_warnings(|| {
        let mut scene = scene();
        let bad: Vec<Entity> = [0.0, -5.0, f32::NAN, f32::INFINITY]
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                spawn(
                    &mut scene.app,
                    (
                        RigidBody::Dynamic,
                        Collider::cuboid(1.0, 1.0, 1.0),
                        Mass(m),
                        Transform::from_xyz(3.0 * i as f32 - 4.5, 0.55, -4.0),
                    ),
                )
            })
            .collect();
        step(&mut scene.app, 64);
        (scene, bad)
    });
    for &e in &bad {
        assert!(names(&warnings, e), "no warning names {e}: {warnings:?}");
        // The documented fallback: the colliders' mass, 1000 kg for a unit cube of density
        // 1000 (relative f32 rounding of 1 / (1 / 1000)).
        let m = computed_mass(&scene.app, e).mass();
        assert!((m - 1000.0).abs() <= 1000.0 * 1e-6, "{e} has mass {m}");
        // And it behaves like a body: it landed and rests on the ground.
        let y = position(&scene.app, e).y;
        assert!((y - 0.5).abs() <= slop(), "{e} at height {y}");
    }
    let (lower, upper) = (scene.lower, scene.upper);
    world_is_healthy(&mut scene, 64, &[(lower, 0.5), (upper, 1.5)]);
}

#[test]
fn unusable_angular_inertia_is_reported_and_collider_inertia_used() {
    let bad_inertias = [
        AngularInertia::new(Vec3::new(-1.0, 1.0, 1.0)),
        AngularInertia::new(Vec3::new(1.0, f32::NAN, 1.0)),
        AngularInertia::new(Vec3::new(1.0, 1.0, f32::INFINITY)),
        AngularInertia::new_with_local_frame(Vec3::ONE, Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)),
    ];
    let ((mut scene, bad), warnings) = capture_warnings(|| {
        let mut scene = scene();
        let bad: Vec<Entity> = bad_inertias
            .into_iter()
            .enumerate()
            .map(|(i, inertia)| {
                spawn(
                    &mut scene.app,
                    (
                        RigidBody::Dynamic,
                        Collider::cuboid(1.0, 1.0, 1.0),
                        inertia,
                        Transform::from_xyz(3.0 * i as f32 - 4.5, 0.55, -4.0),
                    ),
                )
            })
            .collect();
        step(&mut scene.app, 64);
        (scene, bad)
    });
    for &e in &bad {
        assert!(names(&warnings, e), "no warning names {e}: {warnings:?}");
        // The documented fallback: the colliders' inertia, m (1 + 1) / 12 = 1000 / 6 kg·m²
        // for the unit cube of 1000 kg (f32 rounding of the inverse, 1e-5 relative).
        let inverse = computed_mass(&scene.app, e).local_inverse_inertia();
        let expected = Mat3::from_diagonal(Vec3::splat(6.0 / 1000.0));
        assert!(
            inverse.abs_diff_eq(expected, 6e-3 * 1e-5),
            "{e} has inverse inertia {inverse}"
        );
        let y = position(&scene.app, e).y;
        assert!((y - 0.5).abs() <= slop(), "{e} at height {y}");
    }
    let (lower, upper) = (scene.lower, scene.upper);
    world_is_healthy(&mut scene, 64, &[(lower, 0.5), (upper, 1.5)]);
}

#[test]
fn bad_density_does_not_break_the_body() {
    let (mut scene, _warnings) = capture_warnings(|| {
        let mut scene = scene();
        for (i, density) in [0.0, -1.0, f32::NAN, f32::INFINITY].into_iter().enumerate() {
            spawn(
                &mut scene.app,
                (
                    RigidBody::Dynamic,
                    Collider::sphere(0.5),
                    ColliderDensity(density),
                    Transform::from_xyz(3.0 * i as f32 - 4.5, 0.6, 4.0),
                ),
            );
        }
        step(&mut scene.app, 64);
        scene
    });
    let (lower, upper) = (scene.lower, scene.upper);
    world_is_healthy(&mut scene, 64, &[(lower, 0.5), (upper, 1.5)]);
}

#[test]
fn despawning_bodies_and_colliders_mid_simulation_is_safe() {
    let mut scene = scene();
    let app = &mut scene.app;
    // A third box on top, a body whose collider is a child entity, and a sleeping-capable pile.
    let top = spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 2.5, 0.0),
            SleepingDisabled,
        ),
    );
    let parent = spawn(
        app,
        (
            RigidBody::Dynamic,
            Transform::from_xyz(5.0, 0.5, 0.0),
            SleepingDisabled,
        ),
    );
    let child = app
        .world_mut()
        .spawn((
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::default(),
            ChildOf(parent),
        ))
        .id();
    let resting = spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(-5.0, 0.5, 0.0),
        ),
    );
    step(app, 20);
    // The middle of a stack, while its contacts are warm-started.
    app.world_mut().despawn(scene.upper);
    step(app, 2);
    // A child collider: its body loses its only collider.
    app.world_mut().despawn(child);
    step(app, 2);
    // A collider component removed from a body in contact.
    app.world_mut().entity_mut(scene.lower).remove::<Collider>();
    step(app, 40);
    assert!(all_bodies_finite(app));
    // The top box fell onto... nothing: the box under it lost its collider, so it ends on
    // the ground, and the parent with no collider falls through the ground.
    let y_top = position(app, top).y;
    assert!(
        (y_top - 0.5).abs() <= slop(),
        "top box at {y_top}, expected on the ground"
    );
    assert!(
        position(app, parent).y < 0.0,
        "collider-less body did not fall"
    );
    assert!((position(app, resting).y - 0.5).abs() <= slop());
    // Finally the ground itself: everything on it falls.
    let floor = {
        let world = app.world_mut();
        let mut q = world.query::<(Entity, &RigidBody)>();
        q.iter(world)
            .find(|(_, rb)| rb.is_static())
            .map(|(e, _)| e)
            .unwrap()
    };
    app.world_mut().despawn(floor);
    step(app, 32);
    assert!(all_bodies_finite(app));
    assert!(
        position(app, resting).y < 0.0,
        "sphere did not fall after the ground was despawned"
    );
    assert!(
        position(app, top).y < 0.0,
        "box did not fall after the ground was despawned"
    );
    // The witness never noticed any of it.
    world_is_healthy(&mut scene, 96, &[]);
}

#[test]
fn despawning_a_sleeping_body_and_its_neighbour_is_safe() {
    let mut app = app();
    ground(&mut app);
    let a = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.5, 0.0),
        ),
    );
    let b = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 1.5, 0.0),
        ),
    );
    let c = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 2.5, 0.0),
        ),
    );
    // Wait for the stack to sleep, then pull out its middle and its bottom.
    let asleep = (0..192).any(|_| {
        app.update();
        is_sleeping(&app, b)
    });
    assert!(asleep, "stack did not sleep within 3 s");
    app.world_mut().despawn(b);
    step(&mut app, 1);
    app.world_mut().despawn(a);
    step(&mut app, 60);
    assert!(all_bodies_finite(&mut app));
    // c lost both supports and fell 2 m onto the ground.
    let y = position(&app, c).y;
    assert!((y - 0.5).abs() <= slop(), "top box at {y}");
}

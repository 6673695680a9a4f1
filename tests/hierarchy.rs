//! Bodies and colliders in entity hierarchies: a body that is the child of a (non-body) parent
//! uses its world pose, follows its parent when the parent is moved, and keeps its `Transform`
//! relative to the parent; colliders several levels below a body give it its mass and collide
//! where they are in the world.

use crate::common;

use std::f32::consts::FRAC_PI_2;
use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use common::*;
use impetus3d::prelude::*;

/// A headless app like `common::app()` that also propagates `GlobalTransform`s (Bevy's
/// `TransformPlugin`), so the tests can compare with what a renderer would draw.
fn app_with_transforms() -> App {
    let step = Duration::from_secs_f32(DT);
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, TransformPlugin, PhysicsPlugin::default()))
        .insert_resource(Time::<Fixed>::from_duration(step))
        .insert_resource(TimeUpdateStrategy::ManualDuration(step));
    app.update();
    app
}

fn global(app: &App, e: Entity) -> GlobalTransform {
    *app.world().get::<GlobalTransform>(e).unwrap()
}

fn transform(app: &App, e: Entity) -> Transform {
    *app.world().get::<Transform>(e).unwrap()
}

/// Substep length with the default 4 substeps.
const H: f32 = DT / 4.0;

/// Height fallen from rest after `k` steps by the integrator's discrete free fall (see
/// tests/free_fall.rs): g h² n (n + 1) / 2 over n = 4 k substeps.
fn fallen(k: u32) -> f32 {
    let n = 4.0 * k as f32;
    g() * H * H * n * (n + 1.0) / 2.0
}

/// Checks that the body's world pose, as Bevy draws it (its `GlobalTransform`, propagated from
/// the parent's through its `Transform`), is its `Position`/`Rotation`.
fn assert_transform_consistent(app: &App, body: Entity, parent: Entity) {
    let drawn = global(app, parent).mul_transform(transform(app, body));
    let (_, rotation, translation) = drawn.to_scale_rotation_translation();
    let p = position(app, body);
    assert!(
        translation.distance(p) < 1e-4,
        "drawn at {translation}, Position {p}"
    );
    let r = self::rotation(app, body);
    assert!(
        rotation.angle_between(r) < 1e-4,
        "drawn rotation {rotation}, Rotation {r}"
    );
    // And what the app propagated agrees (it ran after the step wrote the Transform).
    let propagated = global(app, body).translation();
    assert!(
        propagated.distance(p) < 1e-4,
        "GlobalTransform at {propagated}, Position {p}"
    );
}

#[test]
fn body_under_a_moved_parent_falls_from_the_parents_frame() {
    let mut app = app_with_transforms();
    let parent = spawn(&mut app, Transform::default());
    let local = Vec3::new(1.0, 0.5, -0.25);
    let body = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::sphere(0.2),
            Transform::from_translation(local),
            ChildOf(parent),
        ))
        .id();
    // Spawned under a parent at the origin: its world position is its local one.
    assert!(position(&app, body).distance(local) < 1e-6);

    // The parent is moved and turned (a quarter turn about Y, then tilted about X) before the
    // first step: the body goes with it.
    let parent_pose = Transform::from_xyz(5.0, 10.0, -3.0)
        .with_rotation(Quat::from_rotation_y(FRAC_PI_2) * Quat::from_rotation_x(0.3));
    set(&mut app, parent, parent_pose);
    let start = parent_pose.transform_point(local);
    for k in 1..=32u32 {
        app.update();
        let expected = start - Vec3::Y * fallen(k);
        let p = position(&app, body);
        assert!(
            p.distance(expected) < 2e-4,
            "step {k}: at {p}, free fall from {start} puts it at {expected}"
        );
        let v = velocity(&app, body);
        let t = k as f32 * DT;
        assert!(
            v.distance(Vec3::new(0.0, -g() * t, 0.0)) < 2e-4,
            "step {k}: velocity {v}"
        );
        assert_transform_consistent(&app, body, parent);
    }

    // Moved again in flight: the body keeps its place in the parent's frame (a teleport
    // with the parent) and its velocity, and falls on from there.
    let local_now = transform(&app, body);
    let velocity_before = velocity(&app, body);
    let moved = Transform::from_xyz(-4.0, 20.0, 2.0).with_rotation(Quat::from_rotation_z(0.5));
    set(&mut app, parent, moved);
    app.update();
    let teleported = moved.transform_point(local_now.translation);
    // One more step of free fall from `teleported` at `velocity_before`.
    let n = 4.0;
    let one_step = velocity_before * DT - Vec3::Y * g() * H * H * n * (n + 1.0) / 2.0;
    let p = position(&app, body);
    assert!(
        p.distance(teleported + one_step) < 2e-4,
        "after the parent moved: at {p}, expected {}",
        teleported + one_step
    );
    let v = velocity(&app, body);
    assert!(
        v.distance(velocity_before - Vec3::Y * g() * DT) < 2e-4,
        "velocity {v} after the teleport, {velocity_before} before"
    );
    assert_transform_consistent(&app, body, parent);
}

#[test]
fn body_spawned_under_a_placed_parent_starts_at_its_world_pose() {
    let mut app = app_with_transforms();
    let parent_pose = Transform::from_xyz(2.0, 3.0, 4.0).with_rotation(Quat::from_rotation_y(1.0));
    let parent = spawn(&mut app, parent_pose);
    // One level deeper: the parent's child is a plain entity, and the body is under that.
    let middle = spawn(
        &mut app,
        (Transform::from_xyz(0.0, 1.0, 0.0), ChildOf(parent)),
    );
    let body = spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(1.0, 1.0, 1.0),
            ChildOf(middle),
        ),
    );
    // No pose of its own: it starts at its parent's origin, already before the first step.
    let expected = parent_pose.transform_point(Vec3::Y);
    assert!(
        position(&app, body).distance(expected) < 1e-5,
        "at {}, expected {expected}",
        position(&app, body)
    );
    assert!(rotation(&app, body).angle_between(parent_pose.rotation) < 1e-5);
    assert_eq!(transform(&app, body).translation, Vec3::ZERO);
    app.update();
    assert_transform_consistent(&app, body, middle);
    // A ray from above hits its top where the world pose puts it.
    let hit = ray_down(&mut app, expected + Vec3::Y * 5.0);
    assert_eq!(hit.map(|h| h.0), Some(body));
    let top = hit.unwrap().1;
    assert!((top - (expected.y + 0.5)).abs() < 1e-4, "top at {top}");
}

/// The first collider straight below `from`, and the height it is hit at.
fn ray_down(app: &mut App, from: Vec3) -> Option<(Entity, f32)> {
    use bevy::ecs::system::SystemState;
    let mut state = SystemState::<SpatialQuery>::new(app.world_mut());
    let query = state.get(app.world()).unwrap();
    query
        .cast_ray(
            from,
            Dir3::NEG_Y,
            100.0,
            true,
            &SpatialQueryFilter::default(),
        )
        .map(|hit| (hit.entity, from.y - hit.distance))
}

#[test]
fn colliders_three_levels_below_a_body_give_its_mass_and_collide_in_place() {
    let mut app = app_with_transforms();
    ground(&mut app);
    // A body turned about Y, three levels of children each moved and turned, and a sphere on
    // the last. With only that sphere, the centre of mass is the sphere's centre, so the body
    // falls and rests without turning over.
    let body_pose = Transform::from_xyz(0.5, 4.0, -1.0).with_rotation(Quat::from_rotation_y(0.7));
    let body = spawn(&mut app, (RigidBody::Dynamic, body_pose));
    let a_pose = Transform::from_xyz(1.0, 0.0, 0.0).with_rotation(Quat::from_rotation_z(0.4));
    let b_pose = Transform::from_xyz(0.0, 0.5, 0.3).with_rotation(Quat::from_rotation_x(-0.6));
    let c_pose = Transform::from_xyz(0.2, -0.4, 0.5).with_rotation(Quat::from_rotation_y(1.1));
    let a = spawn(&mut app, (a_pose, ChildOf(body)));
    let b = spawn(&mut app, (b_pose, ChildOf(a)));
    let radius = 0.3;
    let density = 500.0;
    let c = spawn(
        &mut app,
        (
            c_pose,
            Collider::sphere(radius),
            ColliderDensity(density),
            ChildOf(b),
        ),
    );
    let local = (a_pose * b_pose * c_pose).translation;

    // Mass and centre of mass at once, from the sphere three levels down.
    let mass = computed_mass(&app, body);
    let expected_mass = density * 4.0 / 3.0 * std::f32::consts::PI * radius.powi(3);
    assert!(
        (mass.mass() - expected_mass).abs() < 1e-3 * expected_mass,
        "mass {} kg, expected {expected_mass}",
        mass.mass()
    );
    assert!(
        mass.local_center_of_mass().distance(local) < 1e-5,
        "centre of mass {}, expected {local}",
        mass.local_center_of_mass()
    );

    // Where the world pose puts it, a ray from above hits it (before any step, once the query
    // tree has seen the new colliders).
    app.world_mut()
        .run_system_cached(update_spatial_query_pipeline)
        .unwrap();
    let world = body_pose.transform_point(local);
    let hit = ray_down(&mut app, world + Vec3::Y * 5.0);
    assert_eq!(hit.map(|h| h.0), Some(c), "the ray hits the sphere");
    assert!((hit.unwrap().1 - (world.y + radius)).abs() < 1e-4);
    // Beside it (by more than the radius, where the body's origin is), it does not.
    let miss = ray_down(&mut app, world + Vec3::new(radius + 0.05, 5.0, 0.0));
    assert_ne!(miss.map(|h| h.0), Some(c));

    // It falls onto the ground and rests with the sphere's bottom on it, straight below where
    // it started.
    step(&mut app, 192);
    let centre = global(&app, c).translation();
    assert!(
        (centre.y - radius).abs() <= slop(),
        "sphere centre at {centre}, expected height {radius}"
    );
    assert!(
        Vec2::new(centre.x - world.x, centre.z - world.z).length() < 1e-3,
        "sphere at {centre}, dropped from {world}"
    );
    // The body's own pose agrees with the sphere's.
    let from_body = position(&app, body) + rotation(&app, body) * local;
    assert!(from_body.distance(centre) < 1e-4);
}

#[test]
fn root_bodies_are_unchanged_by_the_parent_rules() {
    // A root body spawned with only `Position` keeps it (the first-step rule), and one moved
    // through its Transform teleports.
    let mut app = app();
    let body = spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::sphere(0.5),
            Position(Vec3::new(1.0, 2.0, 3.0)),
        ),
    );
    assert_eq!(position(&app, body), Vec3::new(1.0, 2.0, 3.0));
    assert_eq!(
        app.world().get::<Transform>(body).unwrap().translation,
        Vec3::new(1.0, 2.0, 3.0)
    );
    set(&mut app, body, Transform::from_xyz(-1.0, 0.0, 0.0));
    app.update();
    assert_eq!(position(&app, body), Vec3::new(-1.0, 0.0, 0.0));
}

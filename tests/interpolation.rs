//! Transform interpolation and extrapolation: the rendered `Transform` between fixed steps.
//!
//! The apps here advance the clock by a quarter of the 1/64 s step per update (or by 1/60 s
//! for the frame-rate test), so the fixed clock's overstep fraction runs 1/4, 2/4, 3/4 and a
//! step runs every fourth update. Durations of 1/64 s and 1/256 s are whole nanoseconds, so
//! the fractions are exact.

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use impetus3d::prelude::*;

const DT: f64 = 1.0 / 64.0;

/// A headless app stepping physics at 1/64 s, with each update advancing the clock by `frame`.
fn app_with_frame(frame: Duration) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, PhysicsPlugin::default()))
        .insert_resource(Time::<Fixed>::from_seconds(DT))
        .insert_resource(TimeUpdateStrategy::ManualDuration(frame));
    app.update();
    app
}

/// Updates a quarter step long.
fn quarter_app() -> App {
    app_with_frame(Duration::from_secs_f64(DT / 4.0))
}

fn steps(app: &App) -> u64 {
    app.world().resource::<PhysicsStepTime>().step_count
}

fn overstep_fraction(app: &App) -> f32 {
    app.world().resource::<Time<Fixed>>().overstep_fraction()
}

fn pose(app: &App, e: Entity) -> (Vec3, Quat) {
    let world = app.world();
    (
        world.get::<Position>(e).unwrap().0,
        world.get::<Rotation>(e).unwrap().0,
    )
}

fn transform(app: &App, e: Entity) -> (Vec3, Quat) {
    let t = app.world().get::<Transform>(e).unwrap();
    (t.translation, t.rotation)
}

/// Updates until the update in which a step runs; returns the physics pose before and after
/// that step.
fn update_through_step(app: &mut App, e: Entity) -> ((Vec3, Quat), (Vec3, Quat)) {
    for _ in 0..8 {
        let before = pose(app, e);
        let count = steps(app);
        app.update();
        if steps(app) > count {
            assert_eq!(steps(app), count + 1, "one step per update at most here");
            return (before, pose(app, e));
        }
    }
    panic!("no step ran");
}

/// A tumbling ball flying through the air (gravity on, no ground).
fn spawn_ball(app: &mut App, extra: impl Bundle) -> Entity {
    app.world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(0.0, 10.0, 0.0),
            LinearVelocity(Vec3::new(3.0, 2.0, -1.0)),
            AngularVelocity(Vec3::new(1.0, 4.0, 2.0)),
            extra,
        ))
        .id()
}

fn assert_pose_near(actual: (Vec3, Quat), expected: (Vec3, Quat), tolerance: f32, what: &str) {
    let (dp, dq) = (
        (actual.0 - expected.0).abs().max_element(),
        Vec4::from(actual.1 - expected.1).abs().max_element(),
    );
    assert!(
        dp <= tolerance && dq <= tolerance,
        "{what}: {actual:?} is not {expected:?} (off by {dp:e} m, {dq:e} in the quaternion)"
    );
}

#[test]
fn interpolated_transform_blends_the_last_two_steps_by_the_overstep_fraction() {
    let mut app = quarter_app();
    let ball = spawn_ball(&mut app, TransformInterpolation);
    update_through_step(&mut app, ball);
    let (start, end) = update_through_step(&mut app, ball);
    assert_ne!(start.0, end.0);
    assert_ne!(start.1, end.1);
    // The update right after the step: a quarter of the next step has gone by.
    app.update();
    assert_eq!(overstep_fraction(&app), 0.25);
    let expected = (start.0.lerp(end.0, 0.25), start.1.slerp(end.1, 0.25));
    assert_pose_near(
        transform(&app, ball),
        expected,
        1e-5,
        "rendered pose at 1/4",
    );
    // The physics pose is untouched.
    assert_eq!(pose(&app, ball), end);
    // And at 3/4.
    app.update();
    app.update();
    assert_eq!(overstep_fraction(&app), 0.75);
    let expected = (start.0.lerp(end.0, 0.75), start.1.slerp(end.1, 0.75));
    assert_pose_near(
        transform(&app, ball),
        expected,
        1e-5,
        "rendered pose at 3/4",
    );
    assert_eq!(pose(&app, ball), end);
}

#[test]
fn a_body_without_interpolation_is_drawn_at_its_physics_pose() {
    let mut app = quarter_app();
    let ball = spawn_ball(&mut app, ());
    update_through_step(&mut app, ball);
    let (_, end) = update_through_step(&mut app, ball);
    app.update();
    assert_eq!(overstep_fraction(&app), 0.25);
    assert_eq!(transform(&app, ball), end);
}

#[test]
fn extrapolation_predicts_from_the_velocities_over_the_overstep() {
    let mut app = quarter_app();
    app.insert_resource(Gravity(Vec3::ZERO));
    let ball = spawn_ball(&mut app, TransformExtrapolation);
    update_through_step(&mut app, ball);
    update_through_step(&mut app, ball);
    app.update();
    let t = (DT / 4.0) as f32;
    let (position, rotation) = pose(&app, ball);
    let v = app.world().get::<LinearVelocity>(ball).unwrap().0;
    let w = app.world().get::<AngularVelocity>(ball).unwrap().0;
    let expected = (position + v * t, Quat::from_scaled_axis(w * t) * rotation);
    assert_pose_near(transform(&app, ball), expected, 1e-5, "extrapolated pose");
    assert!((transform(&app, ball).0 - position).length() > 0.01);
}

#[test]
fn nan_velocities_and_positions_are_not_drawn_and_nothing_panics() {
    let mut app = quarter_app();
    let ball = spawn_ball(&mut app, TransformExtrapolation);
    update_through_step(&mut app, ball);
    app.world_mut().get_mut::<LinearVelocity>(ball).unwrap().0 = Vec3::NAN;
    app.update();
    let (translation, rotation) = transform(&app, ball);
    assert!(translation.is_finite() && rotation.is_finite());
    assert_eq!((translation, rotation), pose(&app, ball));
    // The step resets the velocity; the body goes on.
    for _ in 0..8 {
        app.update();
    }
    assert!(transform(&app, ball).0.is_finite());
    // Nor is a NaN position: the visual pose is not written, and the step keeps the body
    // where it was.
    let before = pose(&app, ball);
    app.world_mut().get_mut::<Position>(ball).unwrap().0 = Vec3::NAN;
    app.update();
    assert!(transform(&app, ball).0.is_finite());
    update_through_step(&mut app, ball);
    assert!(pose(&app, ball).0.is_finite() && pose(&app, ball).0.distance(before.0) < 0.5);
    app.update();
    assert!(transform(&app, ball).0.is_finite());
    // A despawned body is no trouble either.
    app.world_mut().despawn(ball);
    app.update();
}

#[test]
fn a_teleport_through_position_snaps() {
    let mut app = quarter_app();
    let ball = spawn_ball(&mut app, TransformInterpolation);
    update_through_step(&mut app, ball);
    update_through_step(&mut app, ball);
    app.update();
    let far = Vec3::new(100.0, 50.0, 0.0);
    app.world_mut().get_mut::<Position>(ball).unwrap().0 = far;
    app.update();
    assert_eq!(steps(&app), 2, "no step ran yet");
    assert_eq!(
        transform(&app, ball).0,
        far,
        "drawn at the new place at once"
    );
    // Through the next step the body is drawn between the new place and where it moved from
    // there, never on the way from the old place.
    update_through_step(&mut app, ball);
    for _ in 0..3 {
        app.update();
        let drawn = transform(&app, ball).0;
        assert!(
            drawn.distance(far) < 0.2,
            "drawn at {drawn}, far from {far}"
        );
    }
}

#[test]
fn a_teleport_through_transform_snaps_and_is_applied() {
    let mut app = quarter_app();
    let ball = spawn_ball(&mut app, TransformInterpolation);
    update_through_step(&mut app, ball);
    update_through_step(&mut app, ball);
    app.update();
    // Written after this frame's visual pose, as a system in `Last` would.
    let far = Vec3::new(-50.0, 20.0, 5.0);
    app.world_mut()
        .get_mut::<Transform>(ball)
        .unwrap()
        .translation = far;
    app.update();
    assert_eq!(steps(&app), 2, "no step ran yet");
    assert_eq!(transform(&app, ball).0, far, "the user's Transform is kept");
    let (_, end) = update_through_step(&mut app, ball);
    assert!(
        end.0.distance(far) < 0.2,
        "the step moved the body from {far}: {}",
        end.0
    );
    for _ in 0..3 {
        app.update();
        let drawn = transform(&app, ball).0;
        assert!(
            drawn.distance(far) < 0.2,
            "drawn at {drawn}, far from {far}"
        );
    }
}

#[test]
fn a_teleport_written_in_update_is_applied() {
    #[derive(Resource)]
    struct Target(Entity, Vec3);
    fn teleport(target: Option<Res<Target>>, mut transforms: Query<&mut Transform>) {
        if let Some(target) = target {
            transforms.get_mut(target.0).unwrap().translation = target.1;
        }
    }
    let mut app = quarter_app();
    app.add_systems(Update, teleport);
    let ball = spawn_ball(&mut app, TransformInterpolation);
    update_through_step(&mut app, ball);
    let far = Vec3::new(30.0, 30.0, 30.0);
    app.insert_resource(Target(ball, far));
    app.update();
    assert_eq!(transform(&app, ball).0, far);
    app.world_mut().remove_resource::<Target>();
    let (_, end) = update_through_step(&mut app, ball);
    assert!(end.0.distance(far) < 0.2, "{}", end.0);
}

/// A box spun onto the ground and a ball, stepped with frames of `frame`; returns the bit
/// patterns of every body's pose after each frame.
fn trajectory(frame: Duration, interpolation: Option<PhysicsInterpolation>) -> Vec<[u32; 14]> {
    let mut app = app_with_frame(frame);
    if let Some(settings) = interpolation {
        app.insert_resource(settings);
    }
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::cuboid(20.0, 1.0, 20.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));
    let cube = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 2.0, 0.0).with_rotation(Quat::from_rotation_z(0.4)),
            AngularVelocity(Vec3::new(0.5, 3.0, 1.0)),
            LinearVelocity(Vec3::new(1.0, 0.0, 0.0)),
        ))
        .id();
    let ball = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::sphere(0.3),
            Transform::from_xyz(0.2, 4.0, 0.1),
            Restitution::new(0.5),
        ))
        .id();
    let mut out = Vec::new();
    for _ in 0..240 {
        app.update();
        let bits = |e: Entity| {
            let (p, q) = pose(&app, e);
            [p.x, p.y, p.z, q.x, q.y, q.z, q.w].map(f32::to_bits)
        };
        let (a, b) = (bits(cube), bits(ball));
        let mut row = [0; 14];
        row[..7].copy_from_slice(&a);
        row[7..].copy_from_slice(&b);
        out.push(row);
    }
    let interpolated = app
        .world_mut()
        .query::<&TransformInterpolation>()
        .iter(app.world())
        .count();
    let expected = interpolation.map_or(0, |s| if s.interpolate_all { 2 } else { 0 });
    assert_eq!(interpolated, expected);
    out
}

#[test]
fn interpolation_never_changes_the_simulation() {
    // 60 Hz frames over 64 Hz steps: most frames leave a visual pose in `Transform`.
    let frame = Duration::from_nanos(16_666_667);
    let plain = trajectory(frame, None);
    let interpolated = trajectory(frame, Some(PhysicsInterpolation::interpolate_all()));
    let extrapolated = trajectory(frame, Some(PhysicsInterpolation::extrapolate_all()));
    assert!(plain.len() == 240 && plain[0] != plain[239]);
    for (i, ((a, b), c)) in plain
        .iter()
        .zip(&interpolated)
        .zip(&extrapolated)
        .enumerate()
    {
        assert_eq!(a, b, "frame {i}: interpolation changed the physics");
        assert_eq!(a, c, "frame {i}: extrapolation changed the physics");
    }
}

#[test]
fn interpolate_all_marks_moving_bodies_only() {
    let mut app = quarter_app();
    let before = spawn_ball(&mut app, ());
    app.insert_resource(PhysicsInterpolation::interpolate_all());
    app.update();
    let after = spawn_ball(&mut app, ());
    let ground = app
        .world_mut()
        .spawn((RigidBody::Static, Collider::cuboid(5.0, 1.0, 5.0)))
        .id();
    let kinematic = app.world_mut().spawn(RigidBody::Kinematic).id();
    let explicit = spawn_ball(&mut app, TransformExtrapolation);
    app.update();
    let world = app.world();
    assert!(world.get::<TransformInterpolation>(before).is_some());
    assert!(world.get::<TransformInterpolation>(after).is_some());
    assert!(world.get::<TransformInterpolation>(kinematic).is_some());
    assert!(world.get::<TransformInterpolation>(ground).is_none());
    assert!(world.get::<TransformInterpolation>(explicit).is_none());
}

#[test]
fn the_plugin_setting_interpolates_every_body() {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        impetus3d::PhysicsPlugins::new(FixedPostUpdate)
            .set(PhysicsInterpolationPlugin::interpolate_all()),
    ));
    let ball = app
        .world_mut()
        .spawn((RigidBody::Dynamic, Collider::sphere(0.5)))
        .id();
    app.update();
    assert!(app.world().get::<TransformInterpolation>(ball).is_some());
    assert_eq!(
        *app.world().resource::<PhysicsInterpolation>(),
        PhysicsInterpolation::interpolate_all()
    );
}

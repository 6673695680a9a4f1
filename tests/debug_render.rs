//! Debug rendering (feature `debug-render`): the gizmo lines drawn for known scenes, read back
//! headless from Bevy's gizmo storage (no renderer).
#![cfg(feature = "debug-render")]

use std::any::TypeId;
use std::time::Duration;

use bevy::asset::AssetPlugin;
use bevy::gizmos::{GizmoAsset, GizmoHandles};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use impetus3d::prelude::*;

/// Segments per circle with the default config.
const N: usize = 32;

/// A headless app with Bevy's gizmo storage and the debug plugin drawing only what `gizmos`
/// turns on. Each update is one physics step.
fn app(gizmos: PhysicsGizmos) -> App {
    let step = Duration::from_secs_f64(1.0 / 64.0);
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default()))
        // The gizmo assets `GizmoPlugin` would set up, without its camera-dependent parts.
        .init_asset::<GizmoAsset>()
        .add_plugins((PhysicsPlugin::default(), PhysicsDebugPlugin))
        .insert_gizmo_config(gizmos, GizmoConfig::default())
        .insert_resource(Time::<Fixed>::from_duration(step))
        .insert_resource(TimeUpdateStrategy::ManualDuration(step));
    app.update();
    app
}

fn outlines() -> PhysicsGizmos {
    PhysicsGizmos::none().with_collider_color(Color::WHITE)
}

/// The lines drawn in the last update: (start, end, colour) of every segment, from the line
/// lists and the line strips (whose strips are separated by NaN positions).
fn lines(app: &App) -> Vec<(Vec3, Vec3, LinearRgba)> {
    let world = app.world();
    let handles = world.resource::<GizmoHandles>().handles();
    let Some(Some(handle)) = handles.get(&TypeId::of::<PhysicsGizmos>()) else {
        return Vec::new();
    };
    let asset = world.resource::<Assets<GizmoAsset>>().get(handle).unwrap();
    let buffer = asset.buffer();
    let mut out: Vec<_> = buffer
        .list_positions
        .chunks(2)
        .zip(buffer.list_colors.chunks(2))
        .map(|(p, c)| (p[0], p[1], c[0]))
        .collect();
    for (i, pair) in buffer.strip_positions.windows(2).enumerate() {
        if pair[0].is_finite() && pair[1].is_finite() {
            out.push((pair[0], pair[1], buffer.strip_colors[i]));
        }
    }
    out
}

fn spawn(app: &mut App, bundle: impl Bundle) -> Entity {
    app.world_mut().spawn(bundle).id()
}

#[test]
fn a_box_is_twelve_edges_at_its_pose() {
    let mut app = app(outlines());
    let pose = Transform::from_xyz(1.0, 2.0, 3.0).with_rotation(Quat::from_rotation_y(0.3));
    spawn(
        &mut app,
        (RigidBody::Static, Collider::cuboid(2.0, 4.0, 6.0), pose),
    );
    app.update();
    let lines = lines(&app);
    assert_eq!(lines.len(), 12);
    // Every edge is one of the box's: its ends are corners, one axis apart.
    for (a, b, color) in &lines {
        let local_a = pose.rotation.inverse() * (*a - pose.translation);
        let local_b = pose.rotation.inverse() * (*b - pose.translation);
        for local in [local_a, local_b] {
            let corner = (local.abs() - Vec3::new(1.0, 2.0, 3.0)).abs().max_element();
            assert!(corner < 1e-5, "{local} is not a corner");
        }
        let differ = (local_a - local_b).abs().cmpgt(Vec3::splat(1e-4));
        assert_eq!(
            differ.bitmask().count_ones(),
            1,
            "edge {local_a} -> {local_b}"
        );
        assert_eq!(*color, LinearRgba::from(Color::WHITE));
    }
}

#[test]
fn every_shape_kind_is_outlined() {
    let hull = Collider::convex_hull(vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z]).unwrap();
    let mesh = Collider::trimesh(
        vec![Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::new(1.0, 0.0, 1.0)],
        vec![[0, 1, 2], [1, 3, 2]],
    );
    let compound = Collider::compound(vec![
        (Vec3::ZERO, Quat::IDENTITY, Collider::cuboid(1.0, 1.0, 1.0)),
        (Vec3::Y, Quat::IDENTITY, Collider::sphere(0.5)),
    ]);
    let cases: [(&str, Collider, usize); 8] = [
        ("sphere: three circles", Collider::sphere(0.5), 3 * N),
        ("cuboid", Collider::cuboid(1.0, 1.0, 1.0), 12),
        // Two rings, four sides, two half circles over each end.
        ("capsule", Collider::capsule(0.5, 1.0), 2 * N + 4 + 2 * N),
        (
            "cylinder: two rings and four sides",
            Collider::cylinder(0.5, 1.0),
            2 * N + 4,
        ),
        ("convex hull: a tetrahedron's edges", hull, 6),
        ("trimesh: every triangle's edges", mesh, 6),
        ("compound: each part", compound, 12 + 3 * N),
        (
            "heightfield: two triangles per cell",
            Collider::from(parry3d::shape::SharedShape::heightfield(
                parry3d::utils::Array2::zeros(3, 3),
                Vec3::new(4.0, 1.0, 4.0),
            )),
            2 * 2 * 2 * 3,
        ),
    ];
    for (what, collider, expected) in cases {
        let mut app = app(outlines());
        let e = spawn(
            &mut app,
            (
                RigidBody::Static,
                collider,
                Transform::from_xyz(0.0, 1.0, 0.0),
            ),
        );
        app.update();
        assert_eq!(lines(&app).len(), expected, "{what}");
        // Hidden, it is gone.
        app.world_mut().entity_mut(e).insert(DebugRender::hidden());
        app.update();
        assert_eq!(lines(&app).len(), 0, "{what}, hidden");
    }
}

#[test]
fn a_sphere_is_drawn_on_its_surface() {
    let mut app = app(outlines());
    let center = Vec3::new(-2.0, 3.0, 1.0);
    spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::sphere(0.75),
            Transform::from_translation(center),
        ),
    );
    app.update();
    let lines = lines(&app);
    assert_eq!(lines.len(), 3 * N);
    for (a, b, _) in lines {
        assert!(
            (a.distance(center) - 0.75).abs() < 1e-5 && (b.distance(center) - 0.75).abs() < 1e-5
        );
    }
}

#[test]
fn a_hidden_body_hides_its_colliders_and_child_colliders_follow_the_body() {
    let mut app = app(outlines());
    let body = spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(5.0, 0.0, 0.0),
        ),
    );
    let child = app
        .world_mut()
        .spawn((
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 2.0, 0.0),
            ChildOf(body),
        ))
        .id();
    app.update();
    let drawn = lines(&app);
    assert_eq!(drawn.len(), 24);
    // The child's box is centred 2 m above the body.
    let top = drawn
        .iter()
        .filter(|(a, b, _)| a.y > 1.0 && b.y > 1.0)
        .count();
    assert_eq!(top, 12, "the child's box sits 2 m above the body's");
    // The body's `DebugRender` hides both; the child's own overrides it.
    app.world_mut()
        .entity_mut(body)
        .insert(DebugRender::hidden());
    app.update();
    assert_eq!(lines(&app).len(), 0);
    let green = Color::srgb(0.0, 1.0, 0.0);
    app.world_mut()
        .entity_mut(child)
        .insert(DebugRender::default().with_collider_color(green));
    app.update();
    let drawn = lines(&app);
    assert_eq!(drawn.len(), 12);
    assert!(drawn.iter().all(|l| l.2 == LinearRgba::from(green)));
}

#[test]
fn aabbs_are_off_by_default_and_drawn_when_asked() {
    let mut app = app(PhysicsGizmos::default());
    spawn(
        &mut app,
        (RigidBody::Static, Collider::cuboid(1.0, 1.0, 1.0)),
    );
    app.update();
    assert_eq!(lines(&app).len(), 12, "outline only");
    app.insert_gizmo_config(
        PhysicsGizmos::none().with_aabb_color(Color::WHITE),
        GizmoConfig::default(),
    );
    let rotated = Transform::from_rotation(Quat::from_rotation_y(std::f32::consts::FRAC_PI_4));
    spawn(
        &mut app,
        (RigidBody::Static, Collider::cuboid(1.0, 1.0, 1.0), rotated),
    );
    app.update();
    let drawn = lines(&app);
    assert_eq!(drawn.len(), 24, "an AABB per collider");
    let widest = drawn
        .iter()
        .map(|l| l.0.x.abs().max(l.1.x.abs()))
        .fold(0.0, f32::max);
    assert!(
        (widest - 0.5 * 2f32.sqrt()).abs() < 1e-4,
        "the rotated box's AABB: {widest}"
    );
}

#[test]
fn joints_draw_their_anchors_and_separation() {
    let mut app = app(PhysicsGizmos::none().with_joint_colors(Color::WHITE, Color::BLACK));
    let a = spawn(
        &mut app,
        (RigidBody::Static, Transform::from_xyz(0.0, 5.0, 0.0)),
    );
    let b = spawn(
        &mut app,
        (RigidBody::Static, Transform::from_xyz(3.0, 5.0, 0.0)),
    );
    let joint = spawn(
        &mut app,
        DistanceJoint::new(a, b)
            .with_local_anchor1(Vec3::X)
            .with_local_anchor2(-Vec3::X)
            .with_rest_length(1.0),
    );
    app.update();
    let drawn = lines(&app);
    assert_eq!(
        drawn.len(),
        3,
        "two anchor arms and the separation: {drawn:?}"
    );
    let white = LinearRgba::from(Color::WHITE);
    let arms: Vec<_> = drawn.iter().filter(|l| l.2 == white).collect();
    assert_eq!(arms.len(), 2);
    assert!(
        arms.iter()
            .any(|l| l.0 == Vec3::new(0.0, 5.0, 0.0) && l.1 == Vec3::new(1.0, 5.0, 0.0))
    );
    assert!(
        arms.iter()
            .any(|l| l.0 == Vec3::new(3.0, 5.0, 0.0) && l.1 == Vec3::new(2.0, 5.0, 0.0))
    );
    let gap = drawn.iter().find(|l| l.2 != white).unwrap();
    assert_eq!(
        (gap.0, gap.1),
        (Vec3::new(1.0, 5.0, 0.0), Vec3::new(2.0, 5.0, 0.0))
    );
    // Touching anchors have no separation line; a hidden joint nothing.
    let c = spawn(
        &mut app,
        (RigidBody::Static, Transform::from_xyz(10.0, 0.0, 0.0)),
    );
    spawn(&mut app, SphericalJoint::new(c, c));
    app.world_mut()
        .entity_mut(joint)
        .insert(DebugRender::hidden());
    app.update();
    assert_eq!(lines(&app).len(), 2);
    // A joint to a despawned body is skipped.
    app.world_mut().despawn(c);
    app.update();
    assert_eq!(lines(&app).len(), 0);
}

#[test]
fn contacts_and_axes_and_sleeping_colour() {
    let point = Color::srgb(1.0, 0.0, 0.0);
    let normal = Color::srgb(0.0, 0.0, 1.0);
    let mut app = app(PhysicsGizmos::none().with_contact_colors(point, normal));
    spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(10.0, 1.0, 10.0),
            Transform::from_xyz(0.0, -0.5, 0.0),
        ),
    );
    let cube = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.5, 0.0),
        ),
    );
    for _ in 0..5 {
        app.update();
    }
    let points: usize = app
        .world_mut()
        .run_system_cached(|collisions: Collisions| {
            collisions.iter().map(|p| p.points().count()).sum::<usize>()
        })
        .unwrap();
    assert!(
        points >= 4,
        "a resting cube has its corners in contact: {points}"
    );
    let drawn = lines(&app);
    let (point, normal) = (LinearRgba::from(point), LinearRgba::from(normal));
    assert_eq!(
        drawn.iter().filter(|l| l.2 == point).count(),
        3 * points,
        "a cross per point"
    );
    let normals: Vec<_> = drawn.iter().filter(|l| l.2 == normal).collect();
    assert_eq!(normals.len(), points, "a normal per point");
    for l in normals {
        assert!(
            (l.1 - l.0).normalize().y.abs() > 0.99,
            "normals are vertical"
        );
    }
    // Hiding the cube hides its contacts.
    app.world_mut()
        .entity_mut(cube)
        .insert(DebugRender::hidden());
    app.update();
    assert_eq!(lines(&app).len(), 0);

    // Axes: three per moving body, in the sleeping colour while it sleeps.
    let grey = Color::srgb(0.5, 0.5, 0.5);
    app.insert_gizmo_config(
        PhysicsGizmos::none()
            .with_axis_length(1.0)
            .with_collider_color(Color::WHITE)
            .with_sleeping_color(grey),
        GizmoConfig::default(),
    );
    app.world_mut().entity_mut(cube).remove::<DebugRender>();
    app.update();
    let drawn = lines(&app);
    assert_eq!(drawn.len(), 12 + 12 + 3, "two outlines and the cube's axes");
    assert!(drawn.iter().all(|l| l.2 != LinearRgba::from(grey)));
    app.world_mut().entity_mut(cube).insert(Sleeping);
    app.update();
    let drawn = lines(&app);
    let grey_lines = drawn
        .iter()
        .filter(|l| l.2 == LinearRgba::from(grey))
        .count();
    assert_eq!(grey_lines, 12 + 3, "the sleeping cube's outline and axes");
}

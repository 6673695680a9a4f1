//! Pointer events on colliders with [`PhysicsPickingPlugin`], the physics backend for Bevy's
//! picking: the pointer's ray is cast into the physics world, so anything with a collider can
//! be hovered and clicked, mesh or not.
//!
//! A row of shapes stands on the ground, each with observers for `Pointer<Over>`,
//! `Pointer<Out>`, `Pointer<Move>` and `Pointer<Click>`:
//!
//! - hovering a shape lights it up, and a ring and an arrow show the hit point and surface
//!   normal the backend reported;
//! - clicking a shape kicks it upwards at the point clicked (so it spins) and gives it the
//!   next colour.
//!
//! The dumbbell's colliders are on its child entities: the events name the child collider hit
//! and bubble up to the body, where its observers are. The grey slab is [`Pickable::IGNORE`]:
//! the pointer sees straight through it.
//!
//! In screenshot mode a scripted pointer (drawn as a white ring) does what a mouse would: it
//! clicks two shapes and then rests on a third.
//!
//! ```text
//! cargo run --features examples-render --example picking_3d
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

mod common_3d;

use bevy::camera::RenderTarget;
use bevy::picking::pointer::{Location, PointerAction, PointerButton, PointerId, PointerInput};
use bevy::prelude::*;
use bevy::window::{PrimaryWindow, WindowRef};
use common_3d::{ExamplePlugin, OrbitCamera, PALETTE, material, spawn_ground};
use impetus3d::prelude::*;

/// Upward impulse of a click, per kg of the body clicked, N·s/kg (a change of speed, m/s).
const KICK: f32 = 6.0;

fn main() {
    App::new()
        .add_plugins(ExamplePlugin {
            title: "impetus3d: picking",
            help: "hover a shape to light it up, click it to kick it",
            camera: OrbitCamera {
                focus: Vec3::new(0.0, 1.0, 0.0),
                distance: 15.0,
                yaw: 0.0,
                pitch: 0.4,
            },
        })
        // The physics backend; Bevy's pointer, hover and event plugins come with
        // `DefaultPlugins` (feature `bevy_picking`).
        .add_plugins(PhysicsPickingPlugin)
        .init_resource::<HoverMark>()
        .add_systems(Startup, (setup, spawn_ghost_cursor))
        .add_systems(Update, (draw_hover_mark, scripted_pointer))
        .run();
}

/// A pickable shape: its place in the row, its own material (lit up while hovered) and its
/// colour's place in the palette.
#[derive(Component)]
struct Shape {
    index: usize,
    paint: Handle<StandardMaterial>,
    colour: usize,
}

/// Where the pointer last hit a shape, and the surface normal there.
#[derive(Resource, Default)]
struct HoverMark(Option<(Vec3, Vec3)>);

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    spawn_ground(&mut commands, &mut meshes, &mut materials, 40.0);

    let shapes: [(Collider, Mesh, f32); 5] = [
        (
            Collider::cuboid(1.2, 1.2, 1.2),
            Cuboid::new(1.2, 1.2, 1.2).into(),
            0.6,
        ),
        (Collider::sphere(0.7), Sphere::new(0.7).into(), 0.7),
        (
            Collider::capsule(0.45, 0.8),
            Capsule3d::new(0.45, 0.8).into(),
            0.85,
        ),
        (
            Collider::cylinder(0.6, 1.3),
            Cylinder::new(0.6, 1.3).into(),
            0.65,
        ),
        (
            Collider::from(Cone::new(0.7, 1.4)),
            Cone::new(0.7, 1.4).into(),
            0.7,
        ),
    ];
    let mut x = -6.0;
    for (i, (collider, mesh, half_height)) in shapes.into_iter().enumerate() {
        let paint = material(&mut materials, PALETTE[i]);
        let body = commands
            .spawn((
                RigidBody::Dynamic,
                collider,
                Mesh3d(meshes.add(mesh)),
                MeshMaterial3d(paint.clone()),
                Transform::from_xyz(x, half_height, 0.0),
                Shape {
                    index: i,
                    paint,
                    colour: i,
                },
            ))
            .id();
        observe_pointer(&mut commands, body);
        x += 2.4;
        if i == 1 {
            // Leave room for the dumbbell.
            x += 0.4;
        }
    }

    // The dumbbell: the body has no collider of its own; its two balls and its bar are child
    // colliders, each hit on its own, and the events bubble up to the body.
    let paint = material(&mut materials, PALETTE[5]);
    let dumbbell = commands
        .spawn((
            RigidBody::Dynamic,
            Transform::from_xyz(0.0, 0.4, 2.2),
            Visibility::default(),
            Shape {
                index: 5,
                paint: paint.clone(),
                colour: 5,
            },
        ))
        .with_children(|parts| {
            let ball = meshes.add(Sphere::new(0.4));
            for x in [-0.8, 0.8] {
                parts.spawn((
                    Collider::sphere(0.4),
                    Mesh3d(ball.clone()),
                    MeshMaterial3d(paint.clone()),
                    Transform::from_xyz(x, 0.0, 0.0),
                ));
            }
            parts.spawn((
                Collider::capsule(0.12, 1.2),
                Mesh3d(meshes.add(Capsule3d::new(0.12, 1.2))),
                MeshMaterial3d(paint.clone()),
                Transform::from_rotation(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2)),
            ));
        })
        .id();
    observe_pointer(&mut commands, dumbbell);

    // A thin static slab in front, which pointers ignore: they pick what is behind it.
    commands.spawn((
        RigidBody::Static,
        Collider::cuboid(4.0, 0.6, 0.1),
        Mesh3d(meshes.add(Cuboid::new(4.0, 0.6, 0.1))),
        MeshMaterial3d(material(&mut materials, Color::srgb(0.6, 0.6, 0.62))),
        Transform::from_xyz(3.5, 0.3, 2.0),
        Pickable::IGNORE,
    ));
}

/// The observers that make `body` react to the pointer.
fn observe_pointer(commands: &mut Commands, body: Entity) {
    commands
        .entity(body)
        .observe(light_up)
        .observe(dim)
        .observe(mark_hit)
        .observe(kick);
}

/// Hovered: the shape glows.
fn light_up(
    over: On<Pointer<Over>>,
    shapes: Query<&Shape>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut mark: ResMut<HoverMark>,
) {
    if let Ok(shape) = shapes.get(over.entity)
        && let Some(mut paint) = materials.get_mut(&shape.paint)
    {
        paint.emissive = glow(shape.colour);
    }
    mark.0 = over.hit.position.zip(over.hit.normal);
}

/// No longer hovered: back to its colour.
fn dim(
    out: On<Pointer<Out>>,
    shapes: Query<&Shape>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut mark: ResMut<HoverMark>,
) {
    if let Ok(shape) = shapes.get(out.entity)
        && let Some(mut paint) = materials.get_mut(&shape.paint)
    {
        paint.emissive = LinearRgba::BLACK;
    }
    mark.0 = None;
}

/// The pointer moved over the shape: keep the hit for the marker.
fn mark_hit(moved: On<Pointer<Move>>, mut mark: ResMut<HoverMark>) {
    mark.0 = moved.hit.position.zip(moved.hit.normal);
}

/// Clicked: an upward kick at the point clicked, and the next colour.
fn kick(
    click: On<Pointer<Click>>,
    mut bodies: Query<(Forces, &ComputedMass, &mut Shape)>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    let Ok((mut body, mass, mut shape)) = bodies.get_mut(click.entity) else {
        return;
    };
    let at = click.hit.position.unwrap_or(body.center_of_mass());
    body.apply_linear_impulse_at_point(Vec3::Y * KICK * mass.mass(), at);
    shape.colour = (shape.colour + 1) % PALETTE.len();
    if let Some(mut paint) = materials.get_mut(&shape.paint) {
        paint.base_color = PALETTE[shape.colour].into();
        paint.emissive = glow(shape.colour);
    }
}

/// The emissive colour of a hovered shape: its own colour, bright enough to stand out under
/// the scene's sunlight (emissive is in nits).
fn glow(colour: usize) -> LinearRgba {
    LinearRgba::from(PALETTE[colour]) * 4.0
}

/// A ring on the surface where the pointer hits, and the normal there.
fn draw_hover_mark(mark: Res<HoverMark>, mut gizmos: Gizmos) {
    let Some((point, normal)) = mark.0 else {
        return;
    };
    let normal = Dir3::new(normal).unwrap_or(Dir3::Y);
    let ring = Isometry3d::new(
        point + *normal * 0.01,
        Quat::from_rotation_arc(Vec3::Z, *normal),
    );
    gizmos.circle(ring, 0.2, Color::WHITE);
    gizmos.arrow(point, point + *normal * 0.7, Color::WHITE);
}

/// The scripted pointer's ring on screen.
#[derive(Component)]
struct GhostCursor;

/// Screenshot mode: a pointer that does what a mouse would, by writing the same
/// `PointerInput` messages the mouse does. It clicks the cube, then the dumbbell, then rests
/// on the ball, so the picture shows a hovered shape.
fn scripted_pointer(
    mut frame: Local<u32>,
    mut last: Local<Vec2>,
    window: Query<Entity, With<PrimaryWindow>>,
    camera: Query<(&Camera, &GlobalTransform)>,
    shapes: Query<(&Shape, &GlobalTransform)>,
    mut inputs: MessageWriter<PointerInput>,
    mut ghost: Query<&mut Node, With<GhostCursor>>,
) {
    if !common_3d::screenshot_mode() {
        return;
    }
    *frame += 1;
    let (Ok(window), Ok((camera, camera_transform))) = (window.single(), camera.single()) else {
        return;
    };
    let Some(target) = RenderTarget::Window(WindowRef::Primary).normalize(Some(window)) else {
        return;
    };
    // The screen position of the shape at `index` in the row.
    let aim = |index: usize| {
        let (_, at) = shapes.iter().find(|(s, _)| s.index == index)?;
        camera
            .world_to_viewport(camera_transform, at.translation())
            .ok()
    };
    // Which shape to point at, and what to do there.
    let (aimed, action) = match *frame {
        // The cube.
        10..=29 => (Some(0), None),
        30 => (Some(0), Some(PointerAction::Press(PointerButton::Primary))),
        32 => (None, Some(PointerAction::Release(PointerButton::Primary))),
        // The dumbbell.
        50..=59 => (Some(5), None),
        60 => (Some(5), Some(PointerAction::Press(PointerButton::Primary))),
        62 => (None, Some(PointerAction::Release(PointerButton::Primary))),
        // The ball, to rest on.
        90.. => (Some(1), None),
        _ => (None, None),
    };
    let position = aimed.and_then(aim).unwrap_or(*last);
    if position != *last {
        let location = Location {
            target: target.clone(),
            position,
        };
        let delta = position - *last;
        inputs.write(PointerInput::new(
            PointerId::Mouse,
            location,
            PointerAction::Move { delta },
        ));
        *last = position;
    }
    if let Some(action) = action {
        let location = Location { target, position };
        inputs.write(PointerInput::new(PointerId::Mouse, location, action));
    }
    // Where the pointer is, since a screenshot shows no cursor.
    if let Ok(mut node) = ghost.single_mut() {
        node.left = Val::Px(position.x - 9.0);
        node.top = Val::Px(position.y - 9.0);
    }
}

/// Screenshot mode: the scripted pointer's ring.
fn spawn_ghost_cursor(mut commands: Commands) {
    if common_3d::screenshot_mode() {
        commands.spawn((
            GhostCursor,
            Node {
                position_type: PositionType::Absolute,
                width: Val::Px(18.0),
                height: Val::Px(18.0),
                border: UiRect::all(Val::Px(3.0)),
                border_radius: BorderRadius::MAX,
                ..default()
            },
            BorderColor::all(Color::WHITE),
        ));
    }
}

//! The physics picking backend (feature `picking`), headless: rays put into Bevy's `RayMap` by
//! hand, as Bevy's picking would build them from a pointer and a camera, are cast against the
//! colliders; the `PointerHits` messages are checked against closed forms (the distance along
//! a ray to a sphere's surface), and Bevy's hover system is checked to take them up.
#![cfg(feature = "picking")]

use bevy::picking::backend::PointerHits;
use bevy::picking::backend::ray::{RayId, RayMap};
use bevy::picking::hover::HoverMap;
use bevy::picking::pointer::PointerId;
use bevy::picking::{InteractionPlugin, Pickable, PickingPlugin, PickingSettings};
use bevy::prelude::*;
use impetus3d::picking::{
    PhysicsPickable, PhysicsPickingFilter, PhysicsPickingPlugin, PhysicsPickingSettings,
};
use impetus3d::prelude::*;

/// Radius of the target spheres, m.
const R: f32 = 0.75;

/// A headless app with the physics plugin, Bevy's picking and hover plugins (with pointer
/// input off, so that the rays written into the `RayMap` stay there) and the physics backend,
/// and one pointer.
fn app() -> App {
    let mut app = impetus3d::headless_app(1.0 / 64.0);
    app.insert_resource(PickingSettings {
        is_input_enabled: false,
        ..default()
    })
    .add_plugins((PickingPlugin, InteractionPlugin, PhysicsPickingPlugin));
    app.world_mut().spawn(PointerId::Mouse);
    app
}

/// A static sphere of radius `R` at `at`.
fn sphere(app: &mut App, at: Vec3) -> Entity {
    (app.world_mut())
        .spawn((
            RigidBody::Static,
            Collider::sphere(R),
            Transform::from_translation(at),
        ))
        .id()
}

/// Puts one ray into the `RayMap` for the mouse pointer and `camera` (which need not be a
/// camera), runs a frame and returns the `PointerHits` the frame produced.
fn pick(app: &mut App, camera: Entity, origin: Vec3, direction: Dir3) -> Vec<PointerHits> {
    let mut rays = app.world_mut().resource_mut::<RayMap>();
    rays.map.clear();
    rays.map.insert(
        RayId::new(camera, PointerId::Mouse),
        Ray3d::new(origin, direction),
    );
    app.update();
    let messages = app.world().resource::<Messages<PointerHits>>();
    messages.iter_current_update_messages().cloned().collect()
}

/// The entities the mouse pointer hovers, per Bevy's hover system.
fn hovered(app: &App) -> Vec<Entity> {
    let map = app.world().resource::<HoverMap>();
    map.get(&PointerId::Mouse)
        .map(|hits| hits.keys().copied().collect())
        .unwrap_or_default()
}

#[test]
fn a_ray_over_a_sphere_hits_it_at_its_surface() {
    let mut app = app();
    let centre = Vec3::new(1.0, 2.0, -3.0);
    let target = sphere(&mut app, centre);
    let camera = app.world_mut().spawn_empty().id();
    // A ray along -Z passing 0.4 m beside the centre (in x): it meets the surface at
    // depth d - sqrt(R² - b²), d the distance along the ray to the centre's foot.
    let b = 0.4;
    let origin = Vec3::new(centre.x + b, centre.y, centre.z + 10.0);
    let hits = pick(&mut app, camera, origin, Dir3::NEG_Z);
    assert_eq!(hits.len(), 1, "one message for the one ray: {hits:?}");
    assert_eq!(hits[0].pointer, PointerId::Mouse);
    assert_eq!(hits[0].order, 0.0, "a ray of no camera has order 0");
    let picks = &hits[0].picks;
    assert_eq!(picks.len(), 1, "the sphere blocks: {picks:?}");
    let (entity, data) = &picks[0];
    assert_eq!(*entity, target);
    assert_eq!(data.camera, camera);
    let depth = 10.0 - (R * R - b * b).sqrt();
    assert!(
        (data.depth - depth).abs() < 1e-4,
        "depth {} against {depth}",
        data.depth
    );
    let point = data.position.expect("a position");
    assert!(
        point.distance(origin + Vec3::NEG_Z * depth) < 1e-4,
        "{point}"
    );
    let normal = data.normal.expect("a normal");
    assert!(normal.distance((point - centre) / R) < 1e-3, "{normal}");
    // Bevy's hover system takes the hit up.
    assert_eq!(hovered(&app), vec![target]);
}

#[test]
fn a_ray_that_misses_writes_nothing() {
    let mut app = app();
    let centre = Vec3::new(0.0, 1.0, 0.0);
    sphere(&mut app, centre);
    let camera = app.world_mut().spawn_empty().id();
    // 0.1 m wide of the sphere, and then pointing away from it.
    let beside = Vec3::new(R + 0.1, 1.0, 10.0);
    assert!(pick(&mut app, camera, beside, Dir3::NEG_Z).is_empty());
    let behind = Vec3::new(0.0, 1.0, 10.0);
    assert!(pick(&mut app, camera, behind, Dir3::Z).is_empty());
    assert!(hovered(&app).is_empty());
    // A ray from nowhere near any camera entity that exists still casts.
    let hits = pick(&mut app, Entity::PLACEHOLDER, behind, Dir3::NEG_Z);
    assert_eq!(hits.len(), 1);
}

#[test]
fn the_order_is_the_cameras() {
    let mut app = app();
    let target = sphere(&mut app, Vec3::ZERO);
    let camera = (app.world_mut())
        .spawn(Camera {
            order: 3,
            ..default()
        })
        .id();
    let hits = pick(&mut app, camera, Vec3::new(0.0, 0.0, 5.0), Dir3::NEG_Z);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].order, 3.0);
    assert_eq!(hits[0].picks[0].0, target);
}

#[test]
fn markers_when_required() {
    let mut app = app();
    app.insert_resource(PhysicsPickingSettings {
        require_markers: true,
        ..default()
    });
    let near = sphere(&mut app, Vec3::new(0.0, 0.0, 2.0));
    let far = sphere(&mut app, Vec3::new(0.0, 0.0, -2.0));
    let origin = Vec3::new(0.0, 0.0, 10.0);
    let camera = app.world_mut().spawn_empty().id();
    // Neither the camera nor a collider is marked: nothing.
    assert!(pick(&mut app, camera, origin, Dir3::NEG_Z).is_empty());
    // The camera is marked, no collider is: nothing.
    app.world_mut().entity_mut(camera).insert(PhysicsPickable);
    assert!(pick(&mut app, camera, origin, Dir3::NEG_Z).is_empty());
    // Only the far sphere is marked: the ray passes the near one and picks it.
    app.world_mut().entity_mut(far).insert(PhysicsPickable);
    let hits = pick(&mut app, camera, origin, Dir3::NEG_Z);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].picks[0].0, far);
    assert!((hits[0].picks[0].1.depth - (12.0 - R)).abs() < 1e-4);
    // A marked body marks its colliders.
    let body = (app.world_mut())
        .spawn((
            RigidBody::Static,
            Transform::from_xyz(0.0, 0.0, 4.0),
            PhysicsPickable,
        ))
        .with_child((Collider::sphere(R), Transform::default()))
        .id();
    // A child collider is placed by the physics step: step once before picking it.
    app.update();
    let hits = pick(&mut app, camera, origin, Dir3::NEG_Z);
    let child = app.world().get::<Children>(body).unwrap()[0];
    assert_eq!(hits[0].picks[0].0, child);
    assert_ne!(hits[0].picks[0].0, near);
}

#[test]
fn pickable_lets_rays_through_or_ignores() {
    let mut app = app();
    let near = sphere(&mut app, Vec3::new(0.0, 0.0, 2.0));
    let far = sphere(&mut app, Vec3::new(0.0, 0.0, -2.0));
    let origin = Vec3::new(0.0, 0.0, 10.0);
    let camera = app.world_mut().spawn_empty().id();
    let entities = |hits: &[PointerHits]| -> Vec<Entity> {
        hits.iter()
            .flat_map(|h| h.picks.iter().map(|p| p.0))
            .collect()
    };
    // By default the near sphere blocks the ray.
    let hits = pick(&mut app, camera, origin, Dir3::NEG_Z);
    assert_eq!(entities(&hits), vec![near]);
    // Not blocking: both, nearest first, each at its own depth; both hovered.
    app.world_mut().entity_mut(near).insert(Pickable {
        should_block_lower: false,
        is_hoverable: true,
    });
    let hits = pick(&mut app, camera, origin, Dir3::NEG_Z);
    assert_eq!(entities(&hits), vec![near, far]);
    let depths: Vec<f32> = hits[0].picks.iter().map(|p| p.1.depth).collect();
    assert!((depths[0] - (8.0 - R)).abs() < 1e-4 && (depths[1] - (12.0 - R)).abs() < 1e-4);
    let mut hover = hovered(&app);
    hover.sort();
    let mut both = vec![near, far];
    both.sort();
    assert_eq!(hover, both);
    // Ignored: only the far one.
    app.world_mut().entity_mut(near).insert(Pickable::IGNORE);
    let hits = pick(&mut app, camera, origin, Dir3::NEG_Z);
    assert_eq!(entities(&hits), vec![far]);
}

#[test]
fn a_cameras_filter_narrows_what_it_picks() {
    let mut app = app();
    let near = sphere(&mut app, Vec3::new(0.0, 0.0, 2.0));
    let far = sphere(&mut app, Vec3::new(0.0, 0.0, -2.0));
    let camera = (app.world_mut())
        .spawn(PhysicsPickingFilter(
            SpatialQueryFilter::from_excluded_entities([near]),
        ))
        .id();
    let hits = pick(&mut app, camera, Vec3::new(0.0, 0.0, 10.0), Dir3::NEG_Z);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].picks[0].0, far);
    // Beyond the settings' maximum distance nothing is picked.
    app.insert_resource(PhysicsPickingSettings {
        max_distance: 11.0,
        ..default()
    });
    assert!(pick(&mut app, camera, Vec3::new(0.0, 0.0, 10.0), Dir3::NEG_Z).is_empty());
}

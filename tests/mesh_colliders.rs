//! Colliders from Bevy meshes (feature `collider-from-mesh`): triangle meshes, convex hulls and
//! convex decompositions of `Mesh` assets, `ColliderConstructor` on `Mesh3d` entities and
//! `ColliderConstructorHierarchy` on a hierarchy of them, and bad meshes reported without a
//! panic.
#![cfg(feature = "collider-from-mesh")]

use crate::common;

use std::time::Duration;

use bevy::asset::{AssetPlugin, RenderAssetUsages};
use bevy::ecs::schedule::SingleThreadedExecutor;
use bevy::mesh::{Indices, Mesh, Mesh3d, PrimitiveTopology};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use common::*;
use impetus3d::prelude::*;
use parry3d::query::Ray;

/// The first hit of a ray on a collider at the origin: distance and normal.
fn ray_hit(collider: &Collider, origin: Vec3, direction: Vec3) -> Option<(f32, Vec3)> {
    let ray = Ray::new(origin, direction.normalize());
    collider
        .shape()
        .cast_local_ray_and_get_normal(&ray, 100.0, true)
        .map(|hit| (hit.time_of_impact, hit.normal))
}

#[test]
fn trimesh_of_a_cuboid_mesh_matches_the_cuboid_collider() {
    let (x, y, z) = (2.0, 1.0, 3.0);
    let mesh = Mesh::from(Cuboid::new(x, y, z));
    let trimesh = Collider::trimesh_from_mesh(&mesh).expect("a cuboid mesh has triangles");
    assert!(trimesh.shape().as_trimesh().is_some());
    let cuboid = Collider::cuboid(x, y, z);

    let (a, b) = (
        trimesh.shape().compute_local_aabb(),
        cuboid.shape().compute_local_aabb(),
    );
    assert!(
        a.mins.distance(b.mins) < 1e-6 && a.maxs.distance(b.maxs) < 1e-6,
        "trimesh AABB {a:?}, cuboid {b:?}"
    );

    // Rays from every side and from oblique directions, none through an edge or corner.
    let rays = [
        (Vec3::new(5.0, 0.1, 0.2), Vec3::NEG_X),
        (Vec3::new(-5.0, -0.2, 0.3), Vec3::X),
        (Vec3::new(0.3, 5.0, -0.4), Vec3::NEG_Y),
        (Vec3::new(-0.3, -5.0, 0.6), Vec3::Y),
        (Vec3::new(0.4, 0.2, 5.0), Vec3::NEG_Z),
        (Vec3::new(-0.5, 0.1, -5.0), Vec3::Z),
        (Vec3::new(4.0, 3.0, 2.0), Vec3::new(-1.0, -0.8, -0.55)),
        (Vec3::new(-3.0, 2.0, -4.0), Vec3::new(0.9, -0.45, 1.0)),
        (Vec3::new(0.2, -3.0, 5.0), Vec3::new(-0.05, 0.6, -1.0)),
    ];
    for (origin, direction) in rays {
        let expected = ray_hit(&cuboid, origin, direction).expect("the ray hits the cuboid");
        let got = ray_hit(&trimesh, origin, direction).expect("the ray hits the trimesh");
        assert!(
            (got.0 - expected.0).abs() < 1e-4,
            "ray from {origin} along {direction}: trimesh at {}, cuboid at {}",
            got.0,
            expected.0
        );
        assert!(
            got.1.distance(expected.1) < 1e-4,
            "ray from {origin} along {direction}: trimesh normal {}, cuboid {}",
            got.1,
            expected.1
        );
    }
    // A ray beside it misses both.
    let beside = (Vec3::new(1.2, 5.0, 0.0), Vec3::NEG_Y);
    assert!(ray_hit(&cuboid, beside.0, beside.1).is_none());
    assert!(ray_hit(&trimesh, beside.0, beside.1).is_none());

    // The convex hull of the same mesh is the box too, with the box's mass.
    let hull = Collider::convex_hull_from_mesh(&mesh).unwrap();
    let (m1, m2) = (
        hull.shape().mass_properties(1.0).mass(),
        cuboid.shape().mass_properties(1.0).mass(),
    );
    assert!((m1 - m2).abs() < 1e-4 * m2, "hull mass {m1}, box {m2}");
}

/// A closed L-shaped prism: the polygon (0,0) (2,0) (2,0.5) (0.5,0.5) (0.5,2) (0,2) in the XY
/// plane (counter-clockwise), extruded from z = -0.5 to 0.5. The horizontal arm's top is at
/// y = 0.5; the vertical arm rises to y = 2 at x ≤ 0.5.
fn l_mesh() -> Mesh {
    let outline = [
        Vec2::new(0.0, 0.0),
        Vec2::new(2.0, 0.0),
        Vec2::new(2.0, 0.5),
        Vec2::new(0.5, 0.5),
        Vec2::new(0.5, 2.0),
        Vec2::new(0.0, 2.0),
    ];
    let n = outline.len() as u32;
    let mut positions: Vec<[f32; 3]> = Vec::new();
    for z in [-0.5, 0.5] {
        positions.extend(outline.iter().map(|p| [p.x, p.y, z]));
    }
    let (back, front) = (0, n);
    let mut indices = Vec::new();
    // Caps: a fan from the outer corner (0, 0), which sees the whole outline.
    for i in 1..n - 1 {
        indices.extend([front, front + i, front + i + 1]);
        indices.extend([back, back + i + 1, back + i]);
    }
    // Sides: outward for a counter-clockwise outline.
    for i in 0..n {
        let j = (i + 1) % n;
        indices.extend([back + i, back + j, front + j]);
        indices.extend([back + i, front + j, front + i]);
    }
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_indices(Indices::U32(indices))
}

#[test]
fn convex_decomposition_of_an_l_keeps_its_inner_corner() {
    let mesh = l_mesh();
    let collider = Collider::convex_decomposition_from_mesh(&mesh).expect("the L decomposes");
    let parts = collider
        .shape()
        .as_compound()
        .expect("a decomposition is a compound")
        .shapes()
        .len();
    assert!(parts > 1, "the L gave {parts} part(s)");
    // A 0.4 m box dropped into the inner corner region (centred at x = 0.8, 0.1 m from the
    // upright arm) does not sink into the lower arm, whose top is at y = 0.5. V-HACD cuts on
    // its voxel grid (2 m / 64 voxels here), so the part under the box may stand up to two
    // voxels (6 cm) proud of the top near the corner; the L's convex hull would hold the box
    // up on its slant face instead, at y ≈ 1.6.
    let rest = |collider: Collider| {
        let mut app = app();
        spawn(&mut app, (RigidBody::Static, collider));
        let half = 0.2;
        let cube = spawn(
            &mut app,
            (
                RigidBody::Dynamic,
                Collider::cuboid(2.0 * half, 2.0 * half, 2.0 * half),
                Transform::from_xyz(0.8, 2.2, 0.0),
                SleepingDisabled,
            ),
        );
        let mut lowest = f32::INFINITY;
        for _ in 0..192 {
            app.update();
            lowest = lowest.min(position(&app, cube).y - half);
        }
        (position(&app, cube), lowest)
    };
    let surface = 0.5;
    let (p, lowest) = rest(collider.clone());
    assert!(
        lowest >= surface - slop(),
        "the box's bottom sank to {lowest}, below the arm's top at {surface}"
    );
    let bottom = p.y - 0.2;
    assert!(
        bottom - surface < 0.065,
        "the box rests with its bottom at {bottom}, {} above the arm",
        bottom - surface
    );
    assert!((p.x - 0.8).abs() < 0.15, "the box slid to {p}");
    // Where the box stands, the convex hull's top is the slant face.
    let hull = Collider::convex_hull_from_mesh(&mesh).unwrap();
    let (down, top) = (Vec3::NEG_Y, Vec3::new(0.8, 5.0, 0.0));
    let hull_top = 5.0 - ray_hit(&hull, top, down).unwrap().0;
    assert!(hull_top > 1.5, "the hull's top at x = 0.8 is {hull_top}");
}

#[test]
fn vhacd_parameters_are_checked() {
    let mesh = l_mesh();
    let coarse = VhacdParameters {
        resolution: 32,
        ..default()
    };
    assert!(Collider::convex_decomposition_from_mesh_with_config(&mesh, &coarse).is_some());
    for bad in [
        VhacdParameters {
            resolution: 0,
            ..default()
        },
        VhacdParameters {
            resolution: 100_000,
            ..default()
        },
        VhacdParameters {
            concavity: f32::NAN,
            ..default()
        },
        VhacdParameters {
            max_convex_hulls: 0,
            ..default()
        },
    ] {
        assert!(
            Collider::convex_decomposition_from_mesh_with_config(&mesh, &bad).is_none(),
            "{bad:?}"
        );
    }
}

#[test]
fn bad_meshes_give_none_not_a_panic() {
    let empty = Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    );
    let lines = Mesh::new(PrimitiveTopology::LineList, RenderAssetUsages::default())
        .with_inserted_attribute(
            Mesh::ATTRIBUTE_POSITION,
            vec![[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        );
    let no_vertices = Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, Vec::<[f32; 3]>::new());
    let nan = Mesh::from(Cuboid::new(1.0, 1.0, 1.0))
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, vec![[f32::NAN, 0.0, 0.0]; 24]);
    let out_of_range = Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(
        Mesh::ATTRIBUTE_POSITION,
        vec![[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
    )
    .with_inserted_indices(Indices::U16(vec![0, 1, 7]));
    let flat = Mesh::from(Plane3d::default().mesh().size(2.0, 2.0));
    for (name, mesh) in [
        ("empty", &empty),
        ("lines", &lines),
        ("no vertices", &no_vertices),
        ("NaN", &nan),
        ("index out of range", &out_of_range),
    ] {
        assert!(Collider::trimesh_from_mesh(mesh).is_none(), "{name}");
        assert!(Collider::convex_hull_from_mesh(mesh).is_none(), "{name}");
        assert!(
            Collider::convex_decomposition_from_mesh(mesh).is_none(),
            "{name}"
        );
    }
    // A flat mesh is a fine triangle mesh but has no hull or parts.
    assert!(Collider::trimesh_from_mesh(&flat).is_some());
    assert!(Collider::convex_hull_from_mesh(&flat).is_none());
    assert!(Collider::convex_decomposition_from_mesh(&flat).is_none());
}

/// A headless app with assets and the `Mesh` asset type, stepping once per update.
fn app_with_meshes() -> App {
    let step = Duration::from_secs_f32(DT);
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        TransformPlugin,
        AssetPlugin::default(),
        PhysicsPlugin::default(),
    ))
    .init_asset::<Mesh>()
    .insert_resource(Time::<Fixed>::from_duration(step))
    .insert_resource(TimeUpdateStrategy::ManualDuration(step));
    // The constructors warn from `PreUpdate`; on one thread, so that `capture_warnings` (a
    // thread-local subscriber) hears them with the `parallel` feature too.
    app.edit_schedule(PreUpdate, |schedule| {
        schedule.set_executor(SingleThreadedExecutor::new());
    });
    app.update();
    app
}

fn add_mesh(app: &mut App, mesh: Mesh) -> Handle<Mesh> {
    app.world_mut().resource_mut::<Assets<Mesh>>().add(mesh)
}

#[test]
fn collider_constructor_waits_for_the_mesh_then_builds_the_collider() {
    let mut app = app_with_meshes();
    ground(&mut app);
    // A handle whose asset is not there yet, as while a file loads.
    let handle = app.world().resource::<Assets<Mesh>>().reserve_handle();
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Mesh3d(handle.clone()),
            ColliderConstructor::ConvexHullFromMesh,
            Transform::from_xyz(0.0, 3.0, 0.0),
        ),
    );
    step(&mut app, 3);
    assert!(app.world().get::<Collider>(body).is_none());
    assert!(app.world().get::<ColliderConstructor>(body).is_some());

    // The mesh arrives: the collider is built and the constructor removed.
    app.world_mut()
        .resource_mut::<Assets<Mesh>>()
        .insert(handle.id(), Mesh::from(Cuboid::new(1.0, 0.5, 1.0)))
        .unwrap();
    app.update();
    let collider = app.world().get::<Collider>(body).expect("built");
    assert!(collider.shape().as_convex_polyhedron().is_some());
    assert!(app.world().get::<ColliderConstructor>(body).is_none());
    // It has the hull's mass (1 × 0.5 × 1 m at 1000 kg/m³) and lands on its 0.5 m height.
    assert!((computed_mass(&app, body).mass() - 500.0).abs() < 0.5);
    step(&mut app, 192);
    assert!((position(&app, body).y - 0.25).abs() <= slop());
}

#[test]
fn constructor_uses_the_world_scale_of_the_mesh() {
    let mut app = app_with_meshes();
    let handle = add_mesh(&mut app, Mesh::from(Cuboid::new(1.0, 1.0, 1.0)));
    let parent = spawn(&mut app, Transform::from_scale(Vec3::splat(2.0)));
    let e = spawn(
        &mut app,
        (
            Mesh3d(handle),
            ColliderConstructor::TrimeshFromMesh,
            Transform::from_scale(Vec3::new(1.0, 3.0, 1.0)),
            ChildOf(parent),
        ),
    );
    app.update();
    let aabb = app
        .world()
        .get::<Collider>(e)
        .expect("built")
        .shape()
        .compute_local_aabb();
    assert!(
        (aabb.maxs - Vec3::new(1.0, 3.0, 1.0)).length() < 1e-5,
        "{aabb:?}"
    );
}

#[test]
fn collider_constructor_primitives_and_bad_input() {
    let (results, warnings) = capture_warnings(|| {
        let mut app = app_with_meshes();
        let sphere = spawn(&mut app, ColliderConstructor::Sphere { radius: 0.5 });
        let no_mesh = spawn(&mut app, ColliderConstructor::TrimeshFromMesh);
        let empty = add_mesh(
            &mut app,
            Mesh::new(
                PrimitiveTopology::TriangleList,
                RenderAssetUsages::default(),
            ),
        );
        let empty_mesh = spawn(
            &mut app,
            (
                Mesh3d(empty),
                ColliderConstructor::ConvexDecompositionFromMesh,
                Name::new("hollow"),
            ),
        );
        let bad_size = spawn(&mut app, ColliderConstructor::Sphere { radius: f32::NAN });
        // What a scene file could carry: an index past the vertex list (it panicked in
        // `Collider::trimesh`), no hull points, a ragged heightfield.
        let bad_index = spawn(
            &mut app,
            ColliderConstructor::Trimesh {
                vertices: vec![Vec3::ZERO, Vec3::X, Vec3::Z],
                indices: vec![[0, 1, 9]],
            },
        );
        let no_points = spawn(&mut app, ColliderConstructor::ConvexHull { points: vec![] });
        let ragged = spawn(
            &mut app,
            ColliderConstructor::Heightfield {
                heights: vec![vec![0.0; 3], vec![0.0; 2]],
                scale: Vec3::ONE,
            },
        );
        app.update();
        let world = app.world();
        let state = |e: Entity| {
            (
                world.get::<Collider>(e).is_some(),
                world.get::<ColliderConstructor>(e).is_some(),
            )
        };
        (
            [
                state(sphere),
                state(no_mesh),
                state(empty_mesh),
                state(bad_size),
                state(bad_index),
                state(no_points),
                state(ragged),
            ],
            [no_mesh, empty_mesh, bad_size, bad_index, no_points, ragged],
        )
    });
    let (states, warned) = results;
    assert_eq!(states[0], (true, false), "the sphere is built");
    for (i, state) in states[1..].iter().enumerate() {
        assert_eq!(
            *state,
            (false, false),
            "case {i}: no collider, constructor gone"
        );
    }
    for entity in warned {
        assert!(
            warnings.iter().any(|w| w.contains(&entity.to_string())),
            "no warning names {entity}: {warnings:?}"
        );
    }
    assert!(warnings.iter().any(|w| w.contains("\"hollow\"")));
}

#[test]
fn hierarchy_gives_each_mesh_below_a_collider_with_overrides() {
    let mut app = app_with_meshes();
    let cube = add_mesh(&mut app, Mesh::from(Cuboid::new(1.0, 1.0, 1.0)));
    let root = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Transform::from_xyz(0.0, 5.0, 0.0),
            ColliderConstructorHierarchy::new(ColliderConstructor::ConvexHullFromMesh)
                .with_default_density(200.0)
                .with_constructor_for_name("Wheel", ColliderConstructor::Sphere { radius: 0.5 })
                .with_density_for_name("Wheel", 50.0)
                .with_config_for_name(
                    "Sensor",
                    ColliderConstructorHierarchyConfig {
                        layers: Some(CollisionLayers::new(2, 2)),
                        density: Some(0.0),
                        ..default()
                    },
                )
                .without_constructor_for_name("Decal"),
        ),
    );
    let child = |app: &mut App, parent: Entity, name: &str, x: f32| {
        spawn(
            app,
            (
                Mesh3d(cube.clone()),
                Name::new(name.to_string()),
                Transform::from_xyz(x, 0.0, 0.0),
                ChildOf(parent),
            ),
        )
    };
    let plain = child(&mut app, root, "Plain", 1.0);
    let wheel = child(&mut app, root, "Wheel", -1.0);
    let sensor = child(&mut app, root, "Sensor", 2.0);
    let decal = child(&mut app, root, "Decal", 3.0);
    // Two levels down, with no name of its own: it gets the plain default.
    let group = spawn(
        &mut app,
        (Transform::from_xyz(0.0, 0.0, 2.0), ChildOf(root)),
    );
    let nested = spawn(
        &mut app,
        (Mesh3d(cube.clone()), Transform::default(), ChildOf(group)),
    );
    // A mesh under a named node takes the node's entry (as glTF primitives under a node).
    let under_wheel = spawn(
        &mut app,
        (Mesh3d(cube.clone()), Transform::default(), ChildOf(wheel)),
    );
    app.update();

    let world = app.world();
    let shape = |e: Entity| world.get::<Collider>(e).map(|c| c.shape().shape_type());
    use parry3d::shape::ShapeType;
    assert_eq!(shape(plain), Some(ShapeType::ConvexPolyhedron));
    assert_eq!(shape(nested), Some(ShapeType::ConvexPolyhedron));
    assert_eq!(shape(wheel), Some(ShapeType::Ball));
    assert_eq!(shape(under_wheel), Some(ShapeType::Ball));
    assert_eq!(shape(sensor), Some(ShapeType::ConvexPolyhedron));
    assert_eq!(shape(decal), None);
    assert_eq!(world.get::<ColliderDensity>(plain).unwrap().0, 200.0);
    assert_eq!(world.get::<ColliderDensity>(under_wheel).unwrap().0, 50.0);
    assert_eq!(world.get::<ColliderDensity>(sensor).unwrap().0, 0.0);
    assert_eq!(
        world.get::<CollisionLayers>(sensor),
        Some(&CollisionLayers::new(2, 2))
    );
    assert!(world.get::<ColliderConstructorHierarchy>(root).is_none());
    // The body's mass: two unit cubes (plain and nested) at 200 kg/m³ and two balls of radius
    // 0.5 at 50 kg/m³ (the sensor's cube has density 0 and the decal no collider).
    let ball = 50.0 * 4.0 / 3.0 * std::f32::consts::PI * 0.125;
    let expected = 2.0 * 200.0 + 2.0 * ball;
    let mass = computed_mass(&app, root).mass();
    assert!(
        (mass - expected).abs() < 1e-2,
        "mass {mass}, expected {expected}"
    );
}

/// A hierarchy whose parts' meshes are still loading reports ready only once they have
/// loaded and built their colliders.
#[test]
fn hierarchy_reports_ready_when_its_last_mesh_has_built() {
    let mut app = app_with_meshes();
    let loaded = add_mesh(&mut app, Mesh::from(Cuboid::new(1.0, 1.0, 1.0)));
    let loading = app.world().resource::<Assets<Mesh>>().reserve_handle();
    let root = spawn(
        &mut app,
        (
            RigidBody::Static,
            ColliderConstructorHierarchy::new(ColliderConstructor::ConvexHullFromMesh),
        ),
    );
    for (x, mesh) in [(0.0, loaded), (2.0, loading.clone())] {
        spawn(
            &mut app,
            (
                Mesh3d(mesh),
                Transform::from_xyz(x, 0.0, 0.0),
                ChildOf(root),
            ),
        );
    }
    #[derive(Resource, Default)]
    struct ReadyWith(Vec<usize>);
    app.init_resource::<ReadyWith>();
    app.world_mut().entity_mut(root).observe(
        |_: On<ColliderConstructorHierarchyReady>,
         colliders: Query<(), With<Collider>>,
         mut ready: ResMut<ReadyWith>| ready.0.push(colliders.iter().count()),
    );
    step(&mut app, 3);
    assert!(
        app.world().resource::<ReadyWith>().0.is_empty(),
        "one mesh is still loading"
    );
    app.world_mut()
        .resource_mut::<Assets<Mesh>>()
        .insert(&loading, Mesh::from(Cuboid::new(1.0, 1.0, 1.0)))
        .unwrap();
    step(&mut app, 2);
    assert_eq!(app.world().resource::<ReadyWith>().0, [2]);
}

#[test]
fn hierarchy_on_a_scene_waits_until_it_has_spawned() {
    use bevy::world_serialization::{WorldAsset, WorldAssetRoot, WorldSerializationPlugin};
    let mut app = app_with_meshes();
    app.add_plugins(WorldSerializationPlugin)
        .register_type::<Mesh3d>()
        .register_type::<Transform>()
        .register_type::<GlobalTransform>()
        .register_type::<bevy::transform::components::TransformTreeChanged>()
        .register_type::<Name>()
        .register_type::<ChildOf>()
        .register_type::<Children>();
    let cube = add_mesh(&mut app, Mesh::from(Cuboid::new(1.0, 1.0, 1.0)));
    let scene = app
        .world()
        .resource::<Assets<WorldAsset>>()
        .reserve_handle();
    let root = spawn(
        &mut app,
        (
            WorldAssetRoot(scene.clone()),
            ColliderConstructorHierarchy::new(ColliderConstructor::TrimeshFromMesh)
                .with_constructor_for_name("Crate", ColliderConstructor::ConvexHullFromMesh)
                .without_constructor_for_name("Grass"),
        ),
    );
    // When the hierarchy reports ready, its colliders are in place: count them then.
    #[derive(Resource, Default)]
    struct ReadyWith(Vec<usize>);
    app.init_resource::<ReadyWith>();
    app.world_mut().entity_mut(root).observe(
        |_: On<ColliderConstructorHierarchyReady>,
         colliders: Query<(), With<Collider>>,
         mut ready: ResMut<ReadyWith>| ready.0.push(colliders.iter().count()),
    );
    // The scene has not loaded: nothing happens, and the hierarchy waits.
    step(&mut app, 3);
    assert!(app.world().resource::<ReadyWith>().0.is_empty());
    assert!(
        app.world()
            .get::<ColliderConstructorHierarchy>(root)
            .is_some()
    );

    // The scene arrives (as a glTF file would): a node with two meshes and another mesh.
    let mut asset = WorldAsset {
        world: World::new(),
    };
    let node = asset.world.spawn(Transform::default()).id();
    for (name, x) in [("Crate", 0.0), ("Grass", 2.0), ("Floor", 4.0)] {
        asset.world.spawn((
            Mesh3d(cube.clone()),
            Name::new(name),
            Transform::from_xyz(x, 0.0, 0.0),
            ChildOf(node),
        ));
    }
    app.world_mut()
        .resource_mut::<Assets<WorldAsset>>()
        .insert(&scene, asset)
        .unwrap();
    step(&mut app, 5);

    assert!(
        app.world()
            .get::<ColliderConstructorHierarchy>(root)
            .is_none()
    );
    let world = app.world_mut();
    let mut meshes = world.query::<(&Name, Option<&Collider>)>();
    let mut found: Vec<(String, Option<parry3d::shape::ShapeType>)> = meshes
        .iter(world)
        .map(|(name, collider)| (name.to_string(), collider.map(|c| c.shape().shape_type())))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    use parry3d::shape::ShapeType;
    assert_eq!(
        found,
        vec![
            ("Crate".to_string(), Some(ShapeType::ConvexPolyhedron)),
            ("Floor".to_string(), Some(ShapeType::TriMesh)),
            ("Grass".to_string(), None),
        ]
    );
    // Reported once, with the two colliders built.
    assert_eq!(app.world().resource::<ReadyWith>().0, [2]);
}

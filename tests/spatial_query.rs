//! Spatial queries against analytic answers: ray casts on every shape kind, shape casts,
//! point queries, filters, casters, and which poses the queries see.
//!
//! parry's ray casts are exact up to f32 round-off on coordinates of a few metres (~1e-6), and
//! its shape casts converge to a tolerance of about 1e-6 m; 1e-4 leaves room for both.

use crate::common;

use bevy::ecs::system::{RunSystemOnce, SystemParam};
use bevy::math::bounding::Aabb3d;
use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

const EPS: f32 = 1e-4;

/// Runs `f` on a [`SpatialQuery`] of the app's world, as a system would.
fn query<R: 'static>(app: &mut App, f: impl Fn(&SpatialQuery) -> R + Send + Sync + 'static) -> R {
    app.world_mut()
        .run_system_once(move |q: SpatialQuery| f(&q))
        .unwrap()
}

fn down() -> Dir3 {
    Dir3::NEG_Y
}

fn all() -> SpatialQueryFilter {
    SpatialQueryFilter::default()
}

fn fixed(app: &mut App, collider: Collider, transform: Transform) -> Entity {
    spawn(app, (RigidBody::Static, collider, transform))
}

fn assert_hit(hit: Option<RayHitData>, entity: Entity, distance: f32, normal: Vec3, what: &str) {
    let hit = hit.unwrap_or_else(|| panic!("{what}: no hit"));
    assert_eq!(hit.entity, entity, "{what}: wrong entity");
    assert!(
        (hit.distance - distance).abs() < EPS,
        "{what}: distance {} against {distance}",
        hit.distance
    );
    assert!(
        (hit.normal - normal.normalize()).length() < EPS,
        "{what}: normal {} against {}",
        hit.normal,
        normal.normalize()
    );
}

/// One shape of each kind, 10 m apart along x, each hit by a ray straight down from y = 5.
#[test]
fn rays_hit_every_shape_kind_at_the_analytic_point() {
    let mut app = app();
    let sphere = fixed(&mut app, Collider::sphere(0.5), Transform::default());
    let tilt = Quat::from_rotation_z(30f32.to_radians());
    let cuboid = fixed(
        &mut app,
        Collider::cuboid(2.0, 1.0, 2.0),
        Transform::from_xyz(10.0, 0.0, 0.0).with_rotation(tilt),
    );
    let capsule = fixed(
        &mut app,
        Collider::capsule(0.3, 1.0),
        Transform::from_xyz(20.0, 0.0, 0.0),
    );
    // The octahedron |x| + |y| + |z| <= 1.
    let octahedron: Vec<Vec3> = [Vec3::X, Vec3::Y, Vec3::Z]
        .into_iter()
        .flat_map(|a| [a, -a])
        .collect();
    let hull = fixed(
        &mut app,
        Collider::convex_hull(octahedron).unwrap(),
        Transform::from_xyz(30.0, 0.0, 0.0),
    );
    // A quad on the plane y = 1 + (x - 40) / 2.
    let vertices = vec![
        Vec3::new(38.0, 0.0, -2.0),
        Vec3::new(42.0, 2.0, -2.0),
        Vec3::new(42.0, 2.0, 2.0),
        Vec3::new(38.0, 0.0, 2.0),
    ];
    let mesh = spawn(
        &mut app,
        Collider::trimesh(vertices, vec![[0, 2, 1], [0, 3, 2]]),
    );
    step(&mut app, 1);

    let cast = |app: &mut App, x: f32, z: f32| {
        query(app, move |q| {
            q.cast_ray(Vec3::new(x, 5.0, z), down(), 100.0, true, &all())
        })
    };
    // Sphere: the ray at x = 0.3 meets x² + y² = 0.25 at y = 0.4.
    assert_hit(
        cast(&mut app, 0.3, 0.0),
        sphere,
        4.6,
        Vec3::new(0.3, 0.4, 0.0),
        "sphere",
    );
    // Tilted box: the top face is the plane n·(p − c) = 0.5 with n = (−sin 30°, cos 30°, 0).
    let n = tilt * Vec3::Y;
    assert_hit(
        cast(&mut app, 10.0, 0.0),
        cuboid,
        5.0 - 0.5 / n.y,
        n,
        "cuboid",
    );
    // Capsule: the top cap is the sphere of radius 0.3 about (20, 0.5, 0).
    let cap_y = (0.09f32 - 0.01).sqrt();
    assert_hit(
        cast(&mut app, 20.1, 0.0),
        capsule,
        5.0 - 0.5 - cap_y,
        Vec3::new(0.1, cap_y, 0.0),
        "capsule",
    );
    // Octahedron: the face x + y + z = 1 at x = 0.2, z = 0.1.
    assert_hit(
        cast(&mut app, 30.2, 0.1),
        hull,
        4.3,
        Vec3::ONE,
        "convex hull",
    );
    // Mesh plane at x = 40.4: y = 1.2; its normal, facing the ray, is (−1/2, 1, 0).
    let hit = cast(&mut app, 40.4, 0.3).expect("trimesh: no hit");
    assert_eq!(hit.entity, mesh);
    assert!(
        (hit.distance - 3.8).abs() < EPS,
        "trimesh: {}",
        hit.distance
    );
    let expected = Vec3::new(-0.5, 1.0, 0.0).normalize();
    assert!(
        hit.normal.dot(expected).abs() > 1.0 - EPS,
        "trimesh normal {}",
        hit.normal
    );
    // Between the shapes the ray meets nothing.
    assert!(cast(&mut app, 5.0, 0.0).is_none());
}

/// parry casts rays on convex hulls with GJK, whose normals are off by up to about 1e-4 for
/// rays starting near the face (8e-5 from 2 mm above it, 3e-7 from 5 m); the query returns the
/// normal of the face hit, exact to the f32 round-off of the hull's face normals (~1e-7).
#[test]
fn ray_normals_on_a_convex_hull_are_its_face_normals() {
    let mut app = app();
    // A wedge rising along +x at 30° from x = 0 to 4, 4 m wide.
    let slope = 30f32.to_radians();
    let height = 4.0 * slope.tan();
    let points = [-2.0, 2.0]
        .into_iter()
        .flat_map(|z| {
            [
                Vec3::new(0.0, 0.0, z),
                Vec3::new(4.0, 0.0, z),
                Vec3::new(4.0, height, z),
            ]
        })
        .collect();
    let wedge = fixed(
        &mut app,
        Collider::convex_hull(points).unwrap(),
        Transform::default(),
    );
    step(&mut app, 1);
    let normal = Vec3::new(-slope.sin(), slope.cos(), 0.0);
    for (x, z) in [(0.5, 0.0), (1.7, 1.3), (3.2, -1.9)] {
        for above in [5.0, 0.002] {
            let origin = Vec3::new(x, x * slope.tan() + above, z);
            let hit = query(&mut app, move |q| {
                q.cast_ray(origin, down(), 10.0, true, &all())
            })
            .expect("no hit on the slope");
            assert_eq!(hit.entity, wedge);
            assert!(
                (hit.normal - normal).length() < 1e-6,
                "from {origin}: normal {} against {normal}",
                hit.normal
            );
        }
    }
    // From inside, a non-solid ray leaves through the back face x = 4, its normal facing in.
    let hit = query(&mut app, |q| {
        q.cast_ray(Vec3::new(3.0, 0.1, 0.3), Dir3::X, 10.0, false, &all())
    })
    .expect("no hit from inside");
    assert!((hit.distance - 1.0).abs() < EPS);
    assert!(
        (hit.normal + Vec3::X).length() < 1e-6,
        "back face normal {}",
        hit.normal
    );
}

/// Spheres of radius 0.5 at x = 2, 4, 6, 8, 10 on the x axis.
fn row_of_spheres(app: &mut App) -> Vec<Entity> {
    (1..=5)
        .map(|i| {
            fixed(
                app,
                Collider::sphere(0.5),
                Transform::from_xyz(2.0 * i as f32, 0.0, 0.0),
            )
        })
        .collect()
}

#[test]
fn ray_hits_returns_every_hit_nearest_first() {
    let mut app = app();
    let spheres = row_of_spheres(&mut app);
    step(&mut app, 1);
    let hits = query(&mut app, |q| {
        q.ray_hits(Vec3::ZERO, Dir3::X, 100.0, 10, true, &all())
    });
    assert_eq!(hits.len(), 5);
    for (i, hit) in hits.iter().enumerate() {
        assert_eq!(hit.entity, spheres[i]);
        let expected = 2.0 * (i + 1) as f32 - 0.5;
        assert!(
            (hit.distance - expected).abs() < EPS,
            "hit {i}: {}",
            hit.distance
        );
        assert!((hit.normal + Vec3::X).length() < EPS);
    }
    // A limit keeps the nearest ones; a short ray reaches only the first two.
    let three = query(&mut app, |q| {
        q.ray_hits(Vec3::ZERO, Dir3::X, 100.0, 3, true, &all())
    });
    assert_eq!(three, hits[..3]);
    let short = query(&mut app, |q| {
        q.ray_hits(Vec3::ZERO, Dir3::X, 4.0, 10, true, &all())
    });
    assert_eq!(short, hits[..2]);
}

#[test]
fn hollow_ray_from_inside_hits_the_far_side() {
    let mut app = app();
    let cube = fixed(
        &mut app,
        Collider::cuboid(2.0, 2.0, 2.0),
        Transform::default(),
    );
    step(&mut app, 1);
    let origin = Vec3::new(0.25, 0.0, 0.0);
    let solid = query(&mut app, move |q| {
        q.cast_ray(origin, Dir3::X, 10.0, true, &all())
    });
    assert_eq!(solid.map(|h| (h.entity, h.distance)), Some((cube, 0.0)));
    let hollow = query(&mut app, move |q| {
        q.cast_ray(origin, Dir3::X, 10.0, false, &all())
    })
    .expect("no far-side hit");
    assert_eq!(hollow.entity, cube);
    assert!((hollow.distance - 0.75).abs() < EPS, "{}", hollow.distance);
}

#[test]
fn shape_cast_distance_matches_the_time_of_impact() {
    let mut app = app();
    // A box whose top face is at y = 1.
    let cube = fixed(
        &mut app,
        Collider::cuboid(2.0, 2.0, 2.0),
        Transform::default(),
    );
    step(&mut app, 1);
    let ball = Collider::sphere(0.5);
    let hit = query(&mut app, move |q| {
        q.cast_shape(
            &ball,
            Vec3::new(0.2, 5.0, -0.3),
            Quat::IDENTITY,
            down(),
            &ShapeCastConfig::from_max_distance(10.0),
            &all(),
        )
    })
    .expect("no hit");
    // The sphere's lowest point, 0.5 below its centre, reaches y = 1 after 5 − 1 − 0.5.
    assert_eq!(hit.entity, cube);
    assert!((hit.distance - 3.5).abs() < EPS, "{}", hit.distance);
    assert!((hit.point2 - Vec3::new(0.2, 1.0, -0.3)).length() < EPS);
    assert!((hit.point1 - hit.point2).length() < EPS);
    assert!((hit.normal2 - Vec3::Y).length() < EPS);
    assert!((hit.normal1 + Vec3::Y).length() < EPS);

    // A cube rotated 45° about y falls flat on the box: its bottom face (0.5 below) decides.
    let corner = query(&mut app, |q| {
        q.cast_shape(
            &Collider::cuboid(1.0, 1.0, 1.0),
            Vec3::new(0.0, 4.0, 0.0),
            Quat::from_rotation_y(45f32.to_radians()),
            down(),
            &default(),
            &all(),
        )
    })
    .expect("no hit");
    assert!((corner.distance - 2.5).abs() < EPS, "{}", corner.distance);

    // Every hit, nearest first: the sphere cast along the row meets all five.
    let mut app = self::app();
    let spheres = row_of_spheres(&mut app);
    step(&mut app, 1);
    let hits = query(&mut app, |q| {
        q.shape_hits(
            &Collider::sphere(0.25),
            Vec3::ZERO,
            Quat::IDENTITY,
            Dir3::X,
            10,
            &default(),
            &all(),
        )
    });
    assert_eq!(hits.iter().map(|h| h.entity).collect::<Vec<_>>(), spheres);
    for (i, hit) in hits.iter().enumerate() {
        assert!((hit.distance - (2.0 * (i + 1) as f32 - 0.75)).abs() < EPS);
    }
}

#[test]
fn filters_exclude_what_they_name() {
    let mut app = app();
    let spheres = row_of_spheres(&mut app);
    set(&mut app, spheres[0], CollisionLayers::new(0b10, u32::MAX));
    set(&mut app, spheres[1], Sensor);
    step(&mut app, 1);
    let first = |app: &mut App, filter: SpatialQueryFilter| {
        query(app, move |q| {
            q.cast_ray(Vec3::ZERO, Dir3::X, 100.0, true, &filter)
                .map(|h| h.entity)
        })
    };
    // Sensors are skipped by default: the nearest hit is the first sphere, then the third.
    assert_eq!(first(&mut app, all()), Some(spheres[0]));
    assert_eq!(first(&mut app, all().with_sensors(true)), Some(spheres[0]));
    let not_layer_2 = SpatialQueryFilter::from_mask(!0b10);
    assert_eq!(first(&mut app, not_layer_2.clone()), Some(spheres[2]));
    assert_eq!(
        first(&mut app, not_layer_2.with_sensors(true)),
        Some(spheres[1])
    );
    let excluded = all().with_excluded_entities([spheres[0], spheres[2]]);
    assert_eq!(first(&mut app, excluded), Some(spheres[3]));
    let excluded = SpatialQueryFilter::from_excluded_entities([spheres[0], spheres[2]]);
    assert_eq!(first(&mut app, excluded), Some(spheres[3]));
    // The predicate form.
    let skip = spheres[0];
    let hit = query(&mut app, move |q| {
        q.cast_ray_predicate(Vec3::ZERO, Dir3::X, 100.0, true, &all(), &|e| e != skip)
            .map(|h| h.entity)
    });
    assert_eq!(hit, Some(spheres[2]));
}

#[test]
fn excluding_a_body_excludes_its_child_colliders() {
    let mut app = app();
    let body = spawn(
        &mut app,
        (
            RigidBody::Static,
            Transform::from_xyz(3.0, 0.0, 0.0),
            children![(Collider::sphere(0.5), Transform::from_xyz(0.0, 0.0, 0.0))],
        ),
    );
    step(&mut app, 1);
    let hit = query(&mut app, |q| {
        q.cast_ray(Vec3::ZERO, Dir3::X, 100.0, true, &all())
    })
    .expect("child collider not hit");
    assert!((hit.distance - 2.5).abs() < EPS);
    let filter = all().with_excluded_entities([body]);
    assert!(
        query(&mut app, move |q| {
            q.cast_ray(Vec3::ZERO, Dir3::X, 100.0, true, &filter)
        })
        .is_none()
    );
}

/// Rays against a capsule (radius 0.5, a 2 m segment along y, turned 30° about z) meet its
/// surface where the closed forms put it, to 1e-5 of the ray's length (Jolt's bar for its
/// capsule test; an iterated cast stopped 78 µm short of the side): through the side, into an
/// end ball, along the axis, from inside (the far side, not solid), and a miss.
#[test]
fn rays_hit_a_capsule_exactly() {
    let mut app = app();
    let turn = Quat::from_rotation_z(30f32.to_radians());
    let capsule = fixed(
        &mut app,
        Collider::capsule(0.5, 2.0),
        Transform::from_xyz(5.0, 2.0, 0.0).with_rotation(turn),
    );
    step(&mut app, 1);
    // In the capsule's frame a ray is (origin, direction), a point of the world p = c + R q.
    let world = |local: Vec3| Vec3::new(5.0, 2.0, 0.0) + turn * local;
    let hit = |app: &mut App, from: Vec3, along: Vec3, solid: bool| {
        let (origin, direction) = (world(from), Dir3::new(turn * along).unwrap());
        query(app, move |q| {
            q.cast_ray(origin, direction, 10.0, solid, &all())
        })
    };
    let check = |hit: Option<RayHitData>, distance: f32, normal: Vec3, what: &str| {
        let hit = hit.unwrap_or_else(|| panic!("{what}: no hit"));
        assert_eq!(hit.entity, capsule, "{what}");
        assert!(
            (hit.distance - distance).abs() <= 1e-5 * 10.0,
            "{what}: hit at {}, expected {distance}",
            hit.distance
        );
        assert!(
            (hit.normal - turn * normal).length() < 1e-4,
            "{what}: normal {}",
            hit.normal
        );
    };
    // The side, at y = 0.3: x² = 0.25 → x = −0.5, from x = −2.
    check(
        hit(&mut app, Vec3::new(-2.0, 0.3, 0.0), Vec3::X, true),
        1.5,
        -Vec3::X,
        "side",
    );
    // The side at a glancing height: the cylinder x² + z² = 0.25 at z = 0.4, x = −0.3.
    check(
        hit(&mut app, Vec3::new(-2.0, -0.7, 0.4), Vec3::X, true),
        1.7,
        Vec3::new(-0.6, 0.0, 0.8),
        "glancing",
    );
    // The upper ball about (0, 1, 0): from (0.3, 5, 0) down, y = 1 + √(0.25 − 0.09) = 1.4.
    check(
        hit(&mut app, Vec3::new(0.3, 5.0, 0.0), -Vec3::Y, true),
        3.6,
        Vec3::new(0.6, 0.8, 0.0),
        "end ball",
    );
    // Along the axis from below: the lower pole at y = −1.5.
    check(
        hit(&mut app, Vec3::new(0.0, -4.0, 0.0), Vec3::Y, true),
        2.5,
        -Vec3::Y,
        "pole",
    );
    // From inside, not solid: the far side at x = 0.5, its normal facing the ray.
    check(
        hit(&mut app, Vec3::ZERO, Vec3::X, false),
        0.5,
        -Vec3::X,
        "from inside",
    );
    // From inside, solid: at once.
    let inside = hit(&mut app, Vec3::ZERO, Vec3::X, true).expect("solid hit from inside");
    assert_eq!(inside.distance, 0.0);
    // Past the side by 1 mm.
    assert!(hit(&mut app, Vec3::new(-2.0, 0.0, 0.501), Vec3::X, true).is_none());
}

#[test]
fn point_and_overlap_queries() {
    let mut app = app();
    let cube = fixed(
        &mut app,
        Collider::cuboid(2.0, 2.0, 2.0),
        Transform::default(),
    );
    let ball = fixed(
        &mut app,
        Collider::sphere(1.0),
        Transform::from_xyz(1.5, 0.0, 0.0),
    );
    let far = fixed(
        &mut app,
        Collider::sphere(1.0),
        Transform::from_xyz(20.0, 0.0, 0.0),
    );
    step(&mut app, 1);

    // Outside the cube's top face: projects straight down onto it.
    let projection = query(&mut app, |q| {
        q.project_point(Vec3::new(-0.3, 3.0, 0.2), true, &all())
    })
    .unwrap();
    assert_eq!(projection.entity, cube);
    assert!((projection.point - Vec3::new(-0.3, 1.0, 0.2)).length() < EPS);
    assert!(!projection.is_inside);
    // Near the far sphere: the closest point is on its surface, toward the query point.
    let projection = query(&mut app, |q| {
        q.project_point(Vec3::new(23.0, 0.0, 0.0), true, &all())
    })
    .unwrap();
    assert_eq!(projection.entity, far);
    assert!((projection.point - Vec3::new(21.0, 0.0, 0.0)).length() < EPS);

    // x = 0.8 is inside both the cube (|x| <= 1) and the ball (|x − 1.5| <= 1).
    let inside = query(&mut app, |q| {
        q.point_intersections(Vec3::new(0.8, 0.0, 0.0), &all())
    });
    // In creation order.
    assert_eq!(inside, vec![cube, ball]);
    let only_cube = query(&mut app, |q| {
        q.point_intersections(Vec3::new(-0.8, 0.0, 0.0), &all())
    });
    assert_eq!(only_cube, vec![cube]);
    // Inside the ball's bounding box but 1.13 m from its centre: inside nothing.
    let corner = query(&mut app, |q| {
        q.point_intersections(Vec3::new(2.3, 0.8, 0.0), &all())
    });
    assert!(corner.is_empty(), "{corner:?}");

    let boxes = query(&mut app, |q| {
        q.aabb_intersections_with_aabb(Aabb3d::new(Vec3::new(19.5, 0.0, 0.0), Vec3::splat(0.1)))
    });
    assert_eq!(boxes, vec![far]);

    // A sphere of radius 0.5 at x = 3: 0.5 from the ball's surface (x = 2.5) → touches only
    // the ball; at x = 3.1 it touches nothing.
    let touching = query(&mut app, |q| {
        q.shape_intersections(
            &Collider::sphere(0.5),
            Vec3::new(2.9, 0.0, 0.0),
            Quat::IDENTITY,
            &all(),
        )
    });
    assert_eq!(touching, vec![ball]);
    let clear = query(&mut app, |q| {
        q.shape_intersections(
            &Collider::sphere(0.5),
            Vec3::new(3.1, 0.0, 0.0),
            Quat::IDENTITY,
            &all(),
        )
    });
    assert!(clear.is_empty());
}

/// A gravity-free dynamic ball of radius 0.5 at `at`.
fn floating_ball(app: &mut App, at: Vec3) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_translation(at),
            GravityScale(0.0),
            SleepingDisabled,
        ),
    )
}

fn ray_down_at(app: &mut App, x: f32) -> Option<RayHitData> {
    query(app, move |q| {
        q.cast_ray(Vec3::new(x, 10.0, 0.0), down(), 100.0, true, &all())
    })
}

#[test]
fn a_body_moved_by_its_transform_is_hit_where_it_now_is() {
    let mut app = app();
    let ball = floating_ball(&mut app, Vec3::ZERO);
    step(&mut app, 2);
    assert_eq!(ray_down_at(&mut app, 0.0).map(|h| h.entity), Some(ball));

    // Teleport it 5 m along x by writing its Transform, then refresh the tree in the same
    // frame, as a game would between moving and shooting.
    app.world_mut()
        .get_mut::<Transform>(ball)
        .unwrap()
        .translation = Vec3::new(5.0, 1.0, 0.0);
    update_spatial_query_pipeline(app.world_mut());
    assert!(
        ray_down_at(&mut app, 0.0).is_none(),
        "still hit at its old place"
    );
    let hit = ray_down_at(&mut app, 5.0).expect("not hit at its new place");
    assert_eq!(hit.entity, ball);
    assert!((hit.distance - 8.5).abs() < EPS, "{}", hit.distance);

    // The same through its Position (after a step has synchronised the Transform).
    step(&mut app, 1);
    app.world_mut().get_mut::<Position>(ball).unwrap().0 = Vec3::new(-5.0, 2.0, 0.0);
    update_spatial_query_pipeline(app.world_mut());
    let hit = ray_down_at(&mut app, -5.0).expect("not hit after a Position write");
    assert!((hit.distance - 7.5).abs() < EPS, "{}", hit.distance);
}

#[test]
fn queries_after_a_step_see_the_poses_it_produced() {
    let mut app = app();
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(0.0, 5.0, 0.0),
            SleepingDisabled,
        ),
    );
    for _ in 0..20 {
        step(&mut app, 1);
        let top = position(&app, ball).y + 0.5;
        let hit = ray_down_at(&mut app, 0.0).expect("falling ball not hit");
        assert!(
            (hit.distance - (10.0 - top)).abs() < EPS,
            "hit at {} while the ball's top is {} below the origin",
            hit.distance,
            10.0 - top
        );
    }
}

#[test]
fn queries_after_a_step_see_a_body_that_left_its_broad_phase_box() {
    // A ball at rest is joined to a static anchor 1.5 m away: the joint pulls it most of the
    // way in the first step, far outside the box the broad phase gave it (its pose at the
    // step's start, enlarged by the speculative margin and a zero motion). The tree must
    // follow it there, boxes above its leaf included, or a ray at its new place misses it.
    // Three more colliders give the tree inner nodes; the one at x = 3 shares the ball's.
    let mut app = app();
    for x in [3.0, 20.0, 22.0] {
        fixed(
            &mut app,
            Collider::sphere(0.5),
            Transform::from_xyz(x, 0.0, 0.0),
        );
    }
    let anchor = spawn(&mut app, (RigidBody::Static, Transform::default()));
    let ball = floating_ball(&mut app, Vec3::new(1.5, 0.0, 0.0));
    spawn(&mut app, SphericalJoint::new(anchor, ball));
    step(&mut app, 1);
    let x = position(&app, ball).x;
    assert!(x < 0.5, "the joint moved the ball only to x = {x}");
    let hit = ray_down_at(&mut app, x).expect("the moved ball is not hit");
    assert_eq!(hit.entity, ball);
    assert!((hit.distance - 9.5).abs() < 1e-3, "{}", hit.distance);
    assert!(ray_down_at(&mut app, 1.5).is_none(), "hit at its old place");
}

#[test]
fn queries_work_before_the_first_physics_step() {
    // Real time, not manual: the first updates run no physics step.
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, PhysicsPlugin::default()));
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(3.0, 1.0, 0.0),
        ),
    );
    let wall = spawn(
        &mut app,
        (
            Collider::cuboid(1.0, 4.0, 4.0),
            Transform::from_xyz(-3.0, 0.0, 0.0),
        ),
    );
    app.update();
    assert_eq!(steps(&app), 0, "a physics step ran");
    let hit = ray_down_at(&mut app, 3.0).expect("body not hit before the first step");
    assert_eq!(hit.entity, ball);
    assert!((hit.distance - 8.5).abs() < EPS);
    let hit = ray_down_at(&mut app, -3.0).expect("static collider not hit");
    assert_eq!(hit.entity, wall);
    assert!((hit.distance - 8.0).abs() < EPS);
}

#[test]
fn a_despawned_collider_is_never_reported() {
    let mut app = app();
    let ball = floating_ball(&mut app, Vec3::ZERO);
    step(&mut app, 1);
    app.world_mut().despawn(ball);
    assert!(ray_down_at(&mut app, 0.0).is_none());
    step(&mut app, 1);
    assert!(ray_down_at(&mut app, 0.0).is_none());
}

#[test]
fn invalid_query_input_gives_no_hit() {
    let mut app = app();
    row_of_spheres(&mut app);
    ground(&mut app);
    step(&mut app, 1);
    let results = query(&mut app, |q| {
        let f = all();
        // A zero or non-finite direction cannot become a `Dir3`: the error value is the
        // constructor's.
        assert!(Dir3::new(Vec3::ZERO).is_err() && Dir3::new(Vec3::NAN).is_err());
        let mut any = false;
        any |= q.cast_ray(Vec3::NAN, Dir3::X, 10.0, true, &f).is_some();
        any |= q.cast_ray(Vec3::ZERO, Dir3::X, -1.0, true, &f).is_some();
        any |= q
            .cast_ray(Vec3::ZERO, Dir3::X, f32::NAN, true, &f)
            .is_some();
        any |= q
            .cast_shape(
                &Collider::sphere(0.1),
                Vec3::ZERO,
                Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
                Dir3::X,
                &default(),
                &f,
            )
            .is_some();
        any |= q
            .cast_shape(
                &Collider::sphere(0.0),
                Vec3::ZERO,
                Quat::IDENTITY,
                Dir3::X,
                &default(),
                &f,
            )
            .is_some();
        any |= q.project_point(Vec3::NAN, true, &f).is_some();
        any |= !q.point_intersections(Vec3::INFINITY, &f).is_empty();
        any |= !q
            .shape_intersections(&Collider::sphere(1.0), Vec3::NAN, Quat::IDENTITY, &f)
            .is_empty();
        // A valid ray along +x still hits, and an infinite distance is accepted.
        let valid = q
            .cast_ray(Vec3::ZERO, Dir3::X, f32::INFINITY, true, &f)
            .is_some();
        (any, valid)
    });
    assert_eq!(results, (false, true));
}

/// A body falling onto the ground with a ray pointing down from its centre.
fn falling_caster(app: &mut App, caster: impl Bundle) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(0.0, 3.0, 0.0),
            SleepingDisabled,
            caster,
        ),
    )
}

#[test]
fn ray_caster_follows_its_body_and_ignores_itself() {
    let mut app = app();
    let ground = ground(&mut app);
    let body = falling_caster(&mut app, RayCaster::new(Vec3::ZERO, down()));
    for _ in 0..30 {
        step(&mut app, 1);
        let hits = app.world().get::<RayHits>(body).unwrap();
        let hit = hits.first().expect("caster hit nothing");
        assert_eq!(hit.entity, ground, "the caster hit its own body");
        let height = position(&app, body).y;
        assert!(
            (hit.distance - height).abs() < EPS,
            "distance {} at height {height}",
            hit.distance
        );
    }
    // Without ignoring itself, the ray starts inside its own ball.
    set(
        &mut app,
        body,
        RayCaster::new(Vec3::ZERO, down()).with_ignore_self(false),
    );
    step(&mut app, 1);
    let hits = app.world().get::<RayHits>(body).unwrap();
    assert_eq!(
        hits.first().map(|h| (h.entity, h.distance)),
        Some((body, 0.0))
    );
}

#[test]
fn shape_caster_on_a_child_entity_follows_the_body() {
    let mut app = app();
    let ground = ground(&mut app);
    let caster = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, -0.25, 0.0),
            ShapeCaster::new(Collider::sphere(0.2), Vec3::ZERO, Quat::IDENTITY, down()),
        ))
        .id();
    let body = falling_caster(&mut app, ());
    app.world_mut().entity_mut(body).add_child(caster);
    for _ in 0..20 {
        step(&mut app, 1);
        let hits = app.world().get::<ShapeHits>(caster).unwrap();
        let hit = hits.first().expect("shape caster hit nothing");
        assert_eq!(hit.entity, ground);
        // Its sphere starts 0.25 below the body's centre and touches the ground 0.2 higher.
        let expected = position(&app, body).y - 0.25 - 0.2;
        assert!(
            (hit.distance - expected).abs() < EPS,
            "distance {} against {expected}",
            hit.distance
        );
    }
}

#[test]
fn a_caster_with_a_bad_direction_warns_once_naming_its_entity() {
    let (entity, warnings) = capture_warnings(|| {
        let mut app = app();
        ground(&mut app);
        let bad = spawn(
            &mut app,
            (
                // A non-finite rotation leaves the ray without a world direction.
                Transform::from_xyz(0.0, 2.0, 0.0).with_rotation(Quat::from_xyzw(
                    f32::NAN,
                    0.0,
                    0.0,
                    1.0,
                )),
                RayCaster::new(Vec3::ZERO, down()),
            ),
        );
        let good = spawn(
            &mut app,
            (
                Transform::from_xyz(1.0, 2.0, 0.0),
                RayCaster::new(Vec3::ZERO, down()),
            ),
        );
        step(&mut app, 10);
        assert!(app.world().get::<RayHits>(bad).unwrap().is_empty());
        let hit = app.world().get::<RayHits>(good).unwrap().first().copied();
        assert!(hit.is_some_and(|h| (h.distance - 2.0).abs() < EPS));
        bad
    });
    let naming: Vec<_> = warnings
        .iter()
        .filter(|w| w.contains(&entity.to_string()))
        .collect();
    assert_eq!(naming.len(), 1, "warnings: {warnings:?}");
}

/// Queries are ordinary system parameters: they run beside other queries of the world.
#[derive(SystemParam)]
struct Shooter<'w, 's> {
    query: SpatialQuery<'w, 's>,
    targets: Query<'w, 's, &'static Position>,
}

#[test]
fn spatial_query_is_an_ordinary_system_param() {
    let mut app = app();
    let spheres = row_of_spheres(&mut app);
    step(&mut app, 1);
    let (entity, x) = app
        .world_mut()
        .run_system_once(|s: Shooter| {
            let hit = s
                .query
                .cast_ray(Vec3::ZERO, Dir3::X, 100.0, true, &all())
                .unwrap();
            (hit.entity, s.targets.get(hit.entity).unwrap().x)
        })
        .unwrap();
    assert_eq!((entity, x), (spheres[0], 2.0));
}

/// A shape cast onto an upturned heightfield (turned half a turn about X, as a level file's
/// rotation of (4294967295, 0, 0, 1) normalises to) with no distance limit finds the field's
/// underside, now its top, and returns: parry's walk over the field's cells never ended for a
/// cast leaving the field sideways with a far limit, and hung the app.
#[test]
fn a_shape_cast_onto_an_upturned_heightfield_ends() {
    let mut app = app();
    let heights = vec![vec![0.0; 7]; 7];
    let field = fixed(
        &mut app,
        Collider::heightfield(heights, Vec3::new(6.0, 1.0, 6.0)),
        Transform::from_rotation(Quat::from_xyzw(4294967295.0, 0.0, 0.0, 1.0).normalize()),
    );
    step(&mut app, 1);
    let hit = with_deadline(60, "a shape cast onto an upturned heightfield", || {
        query(&mut app, |q| {
            q.cast_shape(
                &Collider::sphere(0.25),
                Vec3::new(0.5, 5.0, 0.5),
                Quat::IDENTITY,
                down(),
                &ShapeCastConfig::default(),
                &all(),
            )
        })
    });
    let hit = hit.expect("the field is hit");
    assert_eq!(hit.entity, field);
    // The flat field lies in the plane y = 0: the sphere's centre stops its radius above it.
    assert!(
        (hit.distance - 4.75).abs() < 1e-3,
        "distance {}",
        hit.distance
    );
}

/// Two colliders a ray hits at exactly the same distance are reported newest first (the
/// nearest hit is the newest of them), and
/// overlap queries list colliders oldest first: in the order of `CreationOrder`, which every
/// peer of a networked game shares, also when the query tree was just rebuilt for a spawn and
/// no step has run; not in `Entity` order, which differs between peers. Checked with the newer
/// collider on the lower and on the higher entity index.
#[test]
fn query_results_follow_creation_order_not_entity_order() {
    for newer_on_lower_index in [false, true] {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, PhysicsPlugin::default()));
        let world = app.world_mut();
        let (low, high) = (world.spawn_empty().id(), world.spawn_empty().id());
        let (older, newer) = if newer_on_lower_index {
            (high, low)
        } else {
            (low, high)
        };
        for entity in [older, newer] {
            let plate = (RigidBody::Static, Collider::cuboid(2.0, 1.0, 2.0));
            world.entity_mut(entity).insert(plate);
        }
        update_spatial_query_pipeline(world);
        assert_eq!(steps(&app), 0);
        let hits = query(&mut app, |q| {
            q.ray_hits(Vec3::new(0.0, 5.0, 0.0), down(), 10.0, 4, true, &all())
        });
        let order: Vec<Entity> = hits.iter().map(|hit| hit.entity).collect();
        assert_eq!(
            order,
            vec![newer, older],
            "newer collider on the lower index: {newer_on_lower_index}"
        );
        let nearest = query(&mut app, |q| {
            q.cast_ray(Vec3::new(0.0, 5.0, 0.0), down(), 10.0, true, &all())
        });
        assert_eq!(nearest.map(|hit| hit.entity), Some(newer));
        let inside = query(&mut app, |q| q.point_intersections(Vec3::ZERO, &all()));
        assert_eq!(inside, vec![older, newer]);
    }
}

//! Every collider shape collides and rests at its geometric height, and mass properties come
//! from shape and density, with user overrides.

use crate::common;

use std::f32::consts::{FRAC_PI_2, PI};

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// Drops `collider` (origin `rest_y` above the ground when resting, given `rotation`) from
/// 0.2 m above rest, runs 2 s and checks it rests at that height: the solver may leave
/// linear_slop of penetration, and a resting body does not float above the surface either.
fn rests_at(collider: Collider, rotation: Quat, rest_y: f32) -> (App, Entity) {
    let mut app = app();
    ground(&mut app);
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            collider,
            Transform::from_xyz(0.0, rest_y + 0.2, 0.0).with_rotation(rotation),
            SleepingDisabled,
        ),
    );
    step(&mut app, 128);
    let y = position(&app, body).y;
    assert!(
        (y - rest_y).abs() <= slop(),
        "rests at y = {y}, expected {rest_y}"
    );
    // At rest: the 1 mm/s bar of resting.rs.
    assert!(
        speed(&app, body) < 1e-3,
        "still moving at {} m/s",
        speed(&app, body)
    );
    (app, body)
}

#[test]
fn sphere_rests_at_its_radius() {
    let _ = rests_at(Collider::sphere(0.3), Quat::IDENTITY, 0.3);
}

#[test]
fn cuboid_rests_at_half_its_height() {
    // Full lengths, like Bevy's Cuboid::new: 0.6 m tall rests with its centre at 0.3.
    let _ = rests_at(Collider::cuboid(2.0, 0.6, 1.0), Quat::IDENTITY, 0.3);
}

#[test]
fn capsule_lying_down_rests_at_its_radius() {
    // Turned onto its side (an upright capsule balances on a point, an unstable equilibrium).
    let (app, body) = rests_at(
        Collider::capsule(0.3, 1.0),
        Quat::from_rotation_z(FRAC_PI_2),
        0.3,
    );
    // Still lying flat: its axis stays horizontal within slop over its 0.5 m half length.
    let axis = rotation(&app, body) * Vec3::Y;
    assert!(axis.y.abs() <= slop() / 0.5, "capsule axis {axis}");
}

#[test]
fn capsule_length_is_the_cylinder_part() {
    // Bevy's Capsule3d::new(radius, length): standing upright and held upright by locked
    // rotation, its origin rests at radius + length / 2. It is set tipping at 2 rad/s, which
    // would topple it on its round end if the lock did not hold.
    let mut app = app();
    ground(&mut app);
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::capsule(0.25, 1.0),
            LockedAxes::ROTATION_LOCKED,
            Transform::from_xyz(0.0, 1.0, 0.0),
            AngularVelocity(Vec3::new(0.0, 0.0, 2.0)),
            SleepingDisabled,
        ),
    );
    step(&mut app, 128);
    let y = position(&app, body).y;
    assert!((y - 0.75).abs() <= slop(), "rests at {y}, expected 0.75");
}

#[test]
fn cylinder_standing_rests_at_half_its_height() {
    let _ = rests_at(Collider::cylinder(0.5, 0.8), Quat::IDENTITY, 0.4);
}

#[test]
fn cylinder_on_its_side_rests_at_its_radius() {
    let (app, body) = rests_at(
        Collider::cylinder(0.4, 1.0),
        Quat::from_rotation_x(FRAC_PI_2),
        0.4,
    );
    let axis = rotation(&app, body) * Vec3::Y;
    assert!(axis.y.abs() <= slop() / 0.5, "cylinder axis {axis}");
}

#[test]
fn convex_hull_rests_on_its_face() {
    // A hexagonal prism, circumradius 0.5 m, 0.4 m tall, centred on its origin.
    let points: Vec<Vec3> = (0..6)
        .flat_map(|i| {
            let a = i as f32 * PI / 3.0;
            let (x, z) = (0.5 * a.cos(), 0.5 * a.sin());
            [Vec3::new(x, -0.2, z), Vec3::new(x, 0.2, z)]
        })
        .collect();
    let hull = Collider::convex_hull(points).expect("a prism is a valid hull");
    let _ = rests_at(hull, Quat::IDENTITY, 0.2);
}

#[test]
fn coplanar_convex_hull_is_none() {
    // Documented: coplanar points have no volume and give `None`.
    let flat = vec![Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::new(1.0, 0.0, 1.0)];
    assert!(
        Collider::convex_hull(flat).is_none(),
        "a flat hull was accepted"
    );
}

#[test]
fn too_few_or_non_finite_hull_points_are_none() {
    assert!(Collider::convex_hull(vec![Vec3::ZERO, Vec3::X]).is_none());
    assert!(Collider::convex_hull(vec![Vec3::NAN, Vec3::X, Vec3::Y, Vec3::Z]).is_none());
}

#[test]
fn compound_rests_on_its_lowest_part() {
    // A 0.2 m thick plate with a ball on top: rests on the plate, origin at the plate centre.
    let compound = Collider::compound(vec![
        (Vec3::ZERO, Quat::IDENTITY, Collider::cuboid(1.5, 0.2, 1.5)),
        (
            Vec3::new(0.0, 0.4, 0.0),
            Quat::IDENTITY,
            Collider::sphere(0.3),
        ),
    ]);
    let _ = rests_at(compound, Quat::IDENTITY, 0.1);
}

#[test]
fn compound_parts_each_collide() {
    // A dumbbell: two balls joined by nothing but the compound. Both balls touch the ground,
    // so it rests level at the balls' radius.
    let compound = Collider::compound(vec![
        (
            Vec3::new(-1.0, 0.0, 0.0),
            Quat::IDENTITY,
            Collider::sphere(0.25),
        ),
        (
            Vec3::new(1.0, 0.0, 0.0),
            Quat::IDENTITY,
            Collider::sphere(0.25),
        ),
    ]);
    let (app, body) = rests_at(compound, Quat::IDENTITY, 0.25);
    // Level: the balls 2 m apart differ in height by less than 2 slop.
    let tilt = (rotation(&app, body) * Vec3::X).y;
    assert!(
        (tilt * 2.0).abs() <= 2.0 * slop(),
        "dumbbell tilted, axis {}",
        rotation(&app, body) * Vec3::X
    );
}

#[test]
fn trimesh_ground_supports_bodies() {
    // A 20 m × 20 m floor at y = 0 made of a 4 × 4 grid of quads (32 triangles), static.
    let mut app = app();
    let n = 4;
    let size = 20.0;
    let mut vertices = Vec::new();
    for i in 0..=n {
        for j in 0..=n {
            let x = -size / 2.0 + size * i as f32 / n as f32;
            let z = -size / 2.0 + size * j as f32 / n as f32;
            vertices.push(Vec3::new(x, 0.0, z));
        }
    }
    let mut indices = Vec::new();
    let at = |i: u32, j: u32| i * (n + 1) + j;
    for i in 0..n {
        for j in 0..n {
            // Counter-clockwise seen from above, so the normals point up.
            indices.push([at(i, j), at(i, j + 1), at(i + 1, j)]);
            indices.push([at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)]);
        }
    }
    spawn(
        &mut app,
        (RigidBody::Static, Collider::trimesh(vertices, indices)),
    );
    let boxed = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            // Straddling a triangle edge and a grid line.
            Transform::from_xyz(0.0, 1.0, 0.3),
            SleepingDisabled,
        ),
    );
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(3.0, 2.0, -2.0),
            SleepingDisabled,
        ),
    );
    step(&mut app, 128);
    for (e, rest_y) in [(boxed, 0.5), (ball, 0.5)] {
        let y = position(&app, e).y;
        assert!(
            (y - rest_y).abs() <= slop(),
            "{e} rests at {y}, expected {rest_y}"
        );
        assert!(
            speed(&app, e) < 1e-3,
            "{e} still moving at {} m/s",
            speed(&app, e)
        );
    }
}

#[test]
fn collider_on_child_entity_with_offset() {
    // The body's origin carries no shape; its child holds a unit cube 0.5 m above the origin.
    // Resting, the cube's bottom is on the ground, so the body origin is at y = 0.
    let mut app = app();
    ground(&mut app);
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Transform::from_xyz(0.0, 0.3, 0.0),
            SleepingDisabled,
        ),
    );
    app.world_mut().spawn((
        Collider::cuboid(1.0, 1.0, 1.0),
        Transform::from_xyz(0.0, 0.5, 0.0),
        ChildOf(body),
    ));
    step(&mut app, 128);
    let y = position(&app, body).y;
    assert!(
        y.abs() <= slop(),
        "body origin at {y}, expected 0 (cube on the ground)"
    );
    assert!(speed(&app, body) < 1e-3);
    // Mass properties come from the child: 1000 kg, centre of mass at the cube's centre.
    let mass = computed_mass(&app, body);
    assert!(
        (mass.mass() - 1000.0).abs() <= 1000.0 * 1e-6,
        "mass {}",
        mass.mass()
    );
    assert!(
        (mass.local_center_of_mass() - Vec3::new(0.0, 0.5, 0.0)).length() <= 1e-6,
        "centre of mass {}",
        mass.local_center_of_mass()
    );
}

#[test]
fn rotated_child_collider_uses_its_rotation() {
    // A 2 × 0.4 × 0.4 bar turned upright by its child transform: it stands 2 m tall, so with
    // rotation locked (so it cannot fall over) the body origin rests at y = 1. It is set
    // tipping at 2 rad/s: unlocked, that is ½ I ω² = 2.9 J/kg against a 0.19 J/kg barrier to
    // toppling over its edge.
    let mut app = app();
    ground(&mut app);
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            LockedAxes::ROTATION_LOCKED,
            Transform::from_xyz(0.0, 1.2, 0.0),
            AngularVelocity(Vec3::new(0.0, 0.0, 2.0)),
            SleepingDisabled,
        ),
    );
    app.world_mut().spawn((
        Collider::cuboid(2.0, 0.4, 0.4),
        Transform::from_rotation(Quat::from_rotation_z(FRAC_PI_2)),
        ChildOf(body),
    ));
    step(&mut app, 128);
    let y = position(&app, body).y;
    assert!((y - 1.0).abs() <= slop(), "body origin at {y}, expected 1");
}

/// f32 rounding of parry's volume × density and of 1 / (1 / m): a few ulps, 1e-6 relative.
const MASS_RTOL: f32 = 1e-6;

fn mass_of(collider: Collider, extra: impl Bundle) -> ComputedMass {
    let mut app = app();
    let e = spawn(
        &mut app,
        (RigidBody::Dynamic, collider, GravityScale(0.0), extra),
    );
    app.update();
    computed_mass(&app, e)
}

#[test]
fn mass_from_density() {
    // Default density 1000 kg/m³: a 1 m cube is 1000 kg.
    let m = mass_of(Collider::cuboid(1.0, 1.0, 1.0), ()).mass();
    assert!((m - 1000.0).abs() <= 1000.0 * MASS_RTOL, "cube mass {m}");
    // Density 500 on a 2 × 1 × 1 box: 1000 kg.
    let m = mass_of(Collider::cuboid(2.0, 1.0, 1.0), ColliderDensity(500.0)).mass();
    assert!((m - 1000.0).abs() <= 1000.0 * MASS_RTOL, "box mass {m}");
    // A unit sphere: 4/3 π r³ ρ = 4188.79 kg.
    let m = mass_of(Collider::sphere(1.0), ()).mass();
    let expected = 4.0 / 3.0 * PI * 1000.0;
    assert!(
        (m - expected).abs() <= expected * MASS_RTOL,
        "sphere mass {m}, expected {expected}"
    );
    // A compound adds its parts: two unit cubes = 2000 kg, centre of mass between them.
    let two = mass_of(
        Collider::compound(vec![
            (
                Vec3::new(-1.0, 0.0, 0.0),
                Quat::IDENTITY,
                Collider::cuboid(1.0, 1.0, 1.0),
            ),
            (
                Vec3::new(2.0, 0.0, 0.0),
                Quat::IDENTITY,
                Collider::cuboid(1.0, 1.0, 1.0),
            ),
        ]),
        (),
    );
    assert!(
        (two.mass() - 2000.0).abs() <= 2000.0 * MASS_RTOL,
        "compound mass {}",
        two.mass()
    );
    assert!(
        (two.local_center_of_mass() - Vec3::new(0.5, 0.0, 0.0)).length() <= 1e-6,
        "compound centre of mass {}",
        two.local_center_of_mass()
    );
}

#[test]
fn inertia_from_density() {
    // A 1 × 2 × 3 box of 6000 kg: I_x = m (b² + c²) / 12 = 6500, I_y = 5000, I_z = 2500.
    let props = mass_of(Collider::cuboid(1.0, 2.0, 3.0), ());
    let inv = props.local_inverse_inertia();
    let expected = [1.0 / 6500.0, 1.0 / 5000.0, 1.0 / 2500.0];
    for (axis, want) in expected.into_iter().enumerate() {
        let got = inv.col(axis)[axis];
        assert!(
            (got - want).abs() <= want * 1e-5,
            "1/I[{axis}] = {got}, expected {want}"
        );
    }
}

#[test]
fn mass_override_scales_mass_and_inertia() {
    let props = mass_of(Collider::cuboid(1.0, 1.0, 1.0), Mass(5.0));
    assert!(
        (props.mass() - 5.0).abs() <= 5.0 * MASS_RTOL,
        "mass {}",
        props.mass()
    );
    // Same shape, 5 kg: I = m (1 + 1) / 12 = 5/6, so 1/I = 1.2 about every axis.
    let inv = props.local_inverse_inertia();
    for axis in 0..3 {
        let got = inv.col(axis)[axis];
        assert!(
            (got - 1.2).abs() <= 1.2 * 1e-5,
            "1/I[{axis}] = {got}, expected 1.2"
        );
    }
}

#[test]
fn mass_override_changes_the_dynamics() {
    // The same impulse gives Δv = J / m: 10 N·s on a 5 kg cube (override) is 2 m/s, where the
    // 1000 kg density mass would give 0.01 m/s.
    let mut app = app();
    let e = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Mass(5.0),
            GravityScale(0.0),
            ExternalImpulse::new(Vec3::new(10.0, 0.0, 0.0)),
        ),
    );
    app.update();
    let v = velocity(&app, e).x;
    // 1 / 5 × 10 in f32.
    assert!((v - 2.0).abs() <= 2.0 * MASS_RTOL, "Δv = {v}, expected 2");
}

#[test]
fn center_of_mass_override_is_used() {
    let props = mass_of(
        Collider::cuboid(1.0, 1.0, 1.0),
        CenterOfMass(Vec3::new(0.0, -0.3, 0.1)),
    );
    assert_eq!(props.local_center_of_mass(), Vec3::new(0.0, -0.3, 0.1));
    // Mass is unchanged by moving the centre of mass.
    assert!((props.mass() - 1000.0).abs() <= 1000.0 * MASS_RTOL);
}

/// A collider made from a Bevy primitive has the primitive's size and frame: the same bounding
/// box as the primitive's own (as Bevy computes it for the mesh) and the primitive's volume.
#[test]
fn bevy_primitives_give_colliders_of_their_size_and_frame() {
    use bevy::math::bounding::Bounded3d;
    fn check(name: &str, primitive: impl Into<Collider> + Bounded3d + Copy, volume: f32) {
        let expected = primitive.aabb_3d(Isometry3d::IDENTITY);
        let collider: Collider = primitive.into();
        assert!(
            collider.validate().is_none(),
            "{name}: {:?}",
            collider.validate()
        );
        let aabb = collider.shape().compute_local_aabb();
        // f32 rounding of halved and doubled sizes.
        let near = |a: Vec3, b: Vec3| (a - b).abs().max_element() <= 1e-6;
        assert!(
            near(aabb.mins, expected.min.into()) && near(aabb.maxs, expected.max.into()),
            "{name}: box {:?}..{:?}, the primitive's {:?}..{:?}",
            aabb.mins,
            aabb.maxs,
            expected.min,
            expected.max
        );
        let got = collider.shape().mass_properties(1.0).mass();
        assert!(
            (got - volume).abs() <= volume * 1e-5,
            "{name}: volume {got}, expected {volume}"
        );
    }
    let (r, h) = (0.5, 1.5);
    check("sphere", Sphere::new(r), 4.0 / 3.0 * PI * r * r * r);
    check("cuboid", Cuboid::new(1.0, 2.0, 3.0), 6.0);
    let capsule_volume = PI * r * r * h + 4.0 / 3.0 * PI * r * r * r;
    check("capsule", Capsule3d::new(r, h), capsule_volume);
    check("cylinder", Cylinder::new(r, h), PI * r * r * h);
    check("cone", Cone::new(r, h), PI * r * r * h / 3.0);
    // Bevy gives a tetrahedron no bounding box; its corners are the box's.
    let tetrahedron = Collider::from(Tetrahedron::new(Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z));
    let aabb = tetrahedron.shape().compute_local_aabb();
    assert_eq!((aabb.mins, aabb.maxs), (Vec3::ZERO, Vec3::ONE));
    let volume = tetrahedron.shape().mass_properties(1.0).mass();
    assert!(
        (volume - 1.0 / 6.0).abs() <= 1e-7,
        "tetrahedron volume {volume}"
    );
    // The frustum's rims are regular 24-gons inscribed in the circles: every cross-section's
    // area, so the volume, is (24 / 2π) sin(2π / 24) of the round frustum's. Its box is the
    // polygon's: the corners lie on the circles along ±X, and along Z reach r sin(7.5° × 12)
    // = r, so the box is the round frustum's too.
    let frustum = ConicalFrustum {
        radius_top: 0.25,
        radius_bottom: r,
        height: h,
    };
    let round = PI * h / 3.0 * (r * r + r * 0.25 + 0.25 * 0.25);
    let n = impetus3d::collision::primitives::FRUSTUM_RIM_POINTS as f32;
    check(
        "conical frustum",
        frustum,
        round * n / (2.0 * PI) * (2.0 * PI / n).sin(),
    );
    // `.collider()` is the same conversion.
    let from_method = Cuboid::new(1.0, 2.0, 3.0).collider();
    assert_eq!(
        from_method.shape().as_cuboid().unwrap().half_extents,
        Vec3::new(0.5, 1.0, 1.5)
    );
}

/// `ColliderAabb`, where present, is the collider's world box at the end of the step: a
/// 2 × 1 × 1 box on a child entity 1 m along its body's X, the body turned a quarter about Z
/// and carried 1 m/s along X for one step of 1/64 s.
#[test]
fn collider_aabb_follows_its_body() {
    let mut app = app();
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            GravityScale(0.0),
            LinearVelocity(Vec3::X),
            Transform::from_xyz(0.0, 5.0, 0.0).with_rotation(Quat::from_rotation_z(FRAC_PI_2)),
        ),
    );
    let collider = app
        .world_mut()
        .spawn((
            Collider::cuboid(2.0, 1.0, 1.0),
            ColliderAabb::default(),
            Transform::from_xyz(1.0, 0.0, 0.0),
            ChildOf(body),
        ))
        .id();
    app.update();
    let x = position(&app, body).x;
    assert!((x - DT).abs() <= 1e-6, "body at x = {x}");
    let aabb = *app.world().get::<ColliderAabb>(collider).unwrap();
    // The child's X is the world's Y: the box spans y = 5 + 1 ± 1 and x = x ± 0.5.
    let (min, max) = (Vec3::new(x - 0.5, 5.0, -0.5), Vec3::new(x + 0.5, 7.0, 0.5));
    assert!(
        (aabb.min - min).length() <= 1e-5 && (aabb.max - max).length() <= 1e-5,
        "box {:?}..{:?}, expected {min}..{max}",
        aabb.min,
        aabb.max
    );
}

/// `Collider::scaled` stretches a shape along its axes: a box exactly; a ball scaled unevenly
/// becomes a hull of its sampled outline, an ellipsoid's box exactly (the samples include the
/// poles and the equator's extremes) and its volume from below within the sampling's error.
/// A zero factor gives an invalid collider.
#[test]
fn scaled_colliders_take_the_scaled_size() {
    let scale = Vec3::new(2.0, 1.0, 0.5);
    let boxed = Collider::cuboid(1.0, 1.0, 1.0).scaled(scale, 10);
    assert_eq!(boxed.shape().as_cuboid().unwrap().half_extents, 0.5 * scale);
    // avian's in-place name does the same.
    let mut in_place = Collider::cuboid(1.0, 1.0, 1.0);
    in_place.set_scale(scale, 10);
    assert_eq!(
        in_place.shape().as_cuboid().unwrap().half_extents,
        0.5 * scale
    );
    let ellipsoid = Collider::sphere(1.0).scaled(scale, 16);
    assert!(ellipsoid.validate().is_none(), "{:?}", ellipsoid.validate());
    let aabb = ellipsoid.shape().compute_local_aabb();
    assert!(
        (aabb.maxs - scale).abs().max_element() <= 1e-5,
        "box {:?}",
        aabb.maxs
    );
    assert!(
        (aabb.mins + scale).abs().max_element() <= 1e-5,
        "box {:?}",
        aabb.mins
    );
    // A hull inscribed in the ellipsoid with 16 segments per half-turn: its volume is below
    // the ellipsoid's 4/3 π a b c and, like the inscribed polygon's area (n / 2π) sin(2π / n)
    // in each direction, within a few per cent of it.
    let volume = ellipsoid.shape().mass_properties(1.0).mass();
    let exact = 4.0 / 3.0 * PI * scale.x * scale.y * scale.z;
    assert!(
        volume < exact && volume > 0.95 * exact,
        "volume {volume} of {exact}"
    );
    assert!(
        Collider::sphere(1.0)
            .scaled(Vec3::new(1.0, 0.0, 1.0), 10)
            .validate()
            .is_some()
    );
}

/// The angular velocity an angular impulse `impulse` (world frame) gives a weightless body
/// at rest, after one step. No torque acts after the impulse, and an impulse about a principal
/// axis turns the body about that axis only (no precession), so ω = I⁻¹ L to f32 rounding.
fn spin_from_impulse(impulse: Vec3, extra: impl Bundle) -> Vec3 {
    let mut app = app();
    let e = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            GravityScale(0.0),
            ExternalImpulse::new(Vec3::ZERO).with_angular(impulse),
            extra,
        ),
    );
    app.update();
    angular_velocity(&app, e)
}

#[test]
fn angular_inertia_override_sets_the_moments_about_its_axes() {
    // Moments 1, 2, 4 kg·m² about the axes of a quarter turn about X: the principal Y axis
    // (moment 2) lies along the body's Z, the principal Z axis (moment 4) along −Y. The
    // cube's own inertia would be 1000 / 6 about every axis.
    let inertia = AngularInertia::new_with_local_frame(
        Vec3::new(1.0, 2.0, 4.0),
        Quat::from_rotation_x(FRAC_PI_2),
    );
    let cases = [(Vec3::X, 1.0), (Vec3::Y, 4.0), (Vec3::Z, 2.0)];
    for (axis, moment) in cases {
        let omega = spin_from_impulse(3.0 * axis, inertia);
        let expected = 3.0 / moment * axis;
        // f32 rounding of the rotated tensor: cos(π/2) rounds to −4.4e-8, which mixes the
        // axes by that fraction of the moments.
        assert!(
            (omega - expected).length() <= 1e-6 * expected.length(),
            "impulse about {axis}: ω = {omega}, expected {expected}"
        );
    }
    // A zero moment is an infinite one: no impulse turns the body about that axis.
    let locked = AngularInertia::new(Vec3::new(0.0, 1.0, 1.0));
    assert_eq!(spin_from_impulse(3.0 * Vec3::X, locked), Vec3::ZERO);
    let free = spin_from_impulse(3.0 * Vec3::Y, locked);
    assert!((free - 3.0 * Vec3::Y).length() <= 3e-6, "ω = {free}");
}

#[test]
fn angular_inertia_override_is_read_back_and_removed() {
    let inertia = AngularInertia::new(Vec3::new(1.0, 2.0, 4.0));
    let props = mass_of(Collider::cuboid(1.0, 1.0, 1.0), inertia);
    let tensor = props.local_inertia();
    assert!(
        tensor.abs_diff_eq(inertia.tensor(), 4e-6),
        "inertia {tensor}, expected {}",
        inertia.tensor()
    );
    // The mass stays the colliders'.
    assert!((props.mass() - 1000.0).abs() <= 1000.0 * MASS_RTOL);
    // Removing the override goes back to the cube's 1000 / 6.
    let mut app = app();
    let e = spawn(
        &mut app,
        (RigidBody::Dynamic, Collider::cuboid(1.0, 1.0, 1.0), inertia),
    );
    app.update();
    app.world_mut().entity_mut(e).remove::<AngularInertia>();
    app.update();
    let moment = computed_mass(&app, e).local_inertia().x_axis.x;
    assert!(
        (moment - 1000.0 / 6.0).abs() <= 1000.0 / 6.0 * 1e-5,
        "moment {moment}"
    );
}

#[test]
fn a_body_without_colliders_takes_a_shapes_mass_properties() {
    // A 2 m cube of density 0.5: m = 4 kg, I = m (2² + 2²) / 12 = 8/3 kg·m², where a body
    // without colliders would otherwise get 1 kg and 0.4 kg·m².
    let mut app = app();
    let bundle = MassPropertiesBundle::from_shape(&Cuboid::from_length(2.0), 0.5);
    let e = spawn(&mut app, (RigidBody::Dynamic, GravityScale(0.0), bundle));
    app.update();
    let props = computed_mass(&app, e);
    assert!(
        (props.mass() - 4.0).abs() <= 4.0 * MASS_RTOL,
        "mass {}",
        props.mass()
    );
    let expected = Mat3::from_diagonal(Vec3::splat(8.0 / 3.0));
    assert!(
        props
            .local_inertia()
            .abs_diff_eq(expected, 8.0 / 3.0 * 1e-5),
        "inertia {}",
        props.local_inertia()
    );
    assert_eq!(props.local_center_of_mass(), Vec3::ZERO);
    // A sphere of mass 1 (density 3 / 4π): I = 2/5 m r² = 0.4 for r = 1.
    let ball = MassPropertiesBundle::from_shape(&Sphere::new(1.0), 3.0 / (4.0 * PI));
    assert!((ball.mass.0 - 1.0).abs() <= 1e-6, "mass {}", ball.mass.0);
    let moment = ball.angular_inertia.principal;
    assert!(
        (moment - Vec3::splat(0.4)).length() <= 1e-6,
        "moments {moment}"
    );
}

/// A 0.4 × 2 × 0.4 post stood on its end, tilted 20° with one bottom edge on the ground.
/// With the centre of mass at the geometric centre it is outside the base and the post
/// topples; with the centre of mass moved low (0.9 m below centre) it lies inside the base,
/// gravity's torque about the edge turns the post back, and it stands upright.
fn tilted_post(center_of_mass: Option<Vec3>) -> f32 {
    let mut app = app();
    ground(&mut app);
    let tilt = Quat::from_rotation_z(-20f32.to_radians());
    // Put the lowest corner (local (0.2, -1, 0)) exactly on the ground.
    let corner = tilt * Vec3::new(0.2, -1.0, 0.0);
    let mut body = app.world_mut().spawn((
        RigidBody::Dynamic,
        Collider::cuboid(0.4, 2.0, 0.4),
        Transform::from_xyz(0.0, -corner.y, 0.0).with_rotation(tilt),
        SleepingDisabled,
    ));
    if let Some(com) = center_of_mass {
        body.insert(CenterOfMass(com));
    }
    let body = body.id();
    step(&mut app, 192);
    // The angle between the post's axis and the vertical.
    (rotation(&app, body) * Vec3::Y).angle_between(Vec3::Y)
}

#[test]
fn center_of_mass_decides_whether_a_tilted_post_falls() {
    let toppled = tilted_post(None);
    // Lying on its side: 90° (the flat 0.4 m face down).
    assert!(
        toppled > 80f32.to_radians(),
        "default post ended {toppled} rad from vertical"
    );
    let righted = tilted_post(Some(Vec3::new(0.0, -0.9, 0.0)));
    // Standing: a tilt of θ lifts a base edge by θ × 0.2 m; bound it by linear_slop.
    assert!(
        righted <= slop() / 0.2,
        "low-COM post ended {righted} rad from vertical"
    );
}

/// Contact points stay where the shapes are: a cylinder landing on its rim (the fuzzer's seed
/// 75922: 6.5 cm across, 18 kg, at 22 m/s, e = 0.66) bounces at most as fast as it came.
///
/// parry's clipping put one ground-side witness of that landing 39 m away from the cylinder;
/// the solver's anchor midway between the witnesses then made a 20 m lever of it, the
/// cylinder's spin of 2 rad/s read as 160 m/s of approach there, and restitution threw the
/// cylinder up at 1,200 m/s. The narrow phase now drops a point whose witness lies outside
/// the other collider's reach.
#[test]
fn a_cylinder_landing_on_its_rim_bounces_no_faster_than_it_landed() {
    let mut app = app();
    ground(&mut app);
    let cylinder = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cylinder(0.032441724, 2.0 * 0.060901966),
            Mass(17.961676),
            Friction::new(0.9000906).with_combine_rule(CoefficientCombine::GeometricMean),
            Restitution::new(0.6551215).with_combine_rule(CoefficientCombine::Max),
            // 3.7 m up, ten steps before the landing: no contact yet, so the replay is exact.
            Transform::from_xyz(-9.93871, 3.6729553, 2.1765118).with_rotation(Quat::from_xyzw(
                -0.5818131,
                0.5823791,
                0.31451887,
                -0.47265857,
            )),
            LinearVelocity(Vec3::new(-6.412246, -20.417809, -3.3123565)),
            AngularVelocity(Vec3::new(-2.6996796, 1.6543437, 1.0642662)),
        ),
    );
    // Fall, land and leave: the fastest rebound against the speed at the landing.
    let (mut impact, mut rebound) = (0.0f32, 0.0f32);
    for _ in 0..16 {
        step(&mut app, 1);
        if velocity(&app, cylinder).y < 0.0 && rebound == 0.0 {
            impact = speed(&app, cylinder);
        } else {
            rebound = rebound.max(speed(&app, cylinder));
        }
    }
    assert!(rebound > 0.0, "the cylinder did not bounce");
    assert!(
        rebound <= impact,
        "landed at {impact} m/s, left at up to {rebound} m/s"
    );
}

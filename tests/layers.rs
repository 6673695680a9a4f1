//! Collision filtering with `CollisionLayers` and `Sensor`s, checked against free fall.
//!
//! A body that must not interact with the ground passes through it exactly as if the ground
//! were not there: its height follows the substepped semi-implicit Euler solution
//! y_k = y_0 - ½ g t² - ½ g h t (t = k dt, h = dt / 4; derived in tests/free_fall.rs), so only
//! f32 rounding is left as tolerance (3e-4 m over one second, as in tests/free_fall.rs). A body
//! that must collide is held with its bottom on the ground, within the contact tolerance.

use crate::common;
use crate::event_log;

use bevy::prelude::*;
use common::*;
use event_log::*;
use impetus3d::prelude::*;

/// f32 rounding over one second of free fall (see tests/free_fall.rs).
const ROUNDING: f32 = 3.0e-4;

/// Named layers, as a user would write them.
#[derive(PhysicsLayer, Clone, Copy)]
enum Layer {
    Ground,
    Player,
    Enemy,
    Ghost,
}

/// Height change after `k` steps of free fall from rest.
fn fall(k: u32) -> f32 {
    let t = k as f32 * DT;
    let h = DT / 4.0;
    -0.5 * g() * t * t - 0.5 * g() * h * t
}

/// A recording app with a ground (top at y = 0) on the given layers.
fn scene(ground_layers: CollisionLayers) -> (App, Entity) {
    let mut app = app();
    record_events(&mut app);
    let ground = ground(&mut app);
    set(&mut app, ground, ground_layers);
    (app, ground)
}

/// A unit cube on `layers`, its bottom 0.5 m above the ground, at `x`.
fn cube(app: &mut App, x: f32, layers: CollisionLayers) -> Entity {
    cube_at(app, Vec3::new(x, 1.0, 0.0), layers)
}

/// A unit cube on `layers`, centred at `at`.
fn cube_at(app: &mut App, at: Vec3, layers: CollisionLayers) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_translation(at),
            layers,
        ),
    )
}

/// Asserts the body has fallen freely for `k` steps from `y0`.
fn assert_free_fall(app: &App, body: Entity, y0: f32, k: u32) {
    let y = position(app, body).y;
    let expected = y0 + fall(k);
    assert!(
        (y - expected).abs() <= ROUNDING,
        "y = {y}, free fall gives {expected}"
    );
}

/// Asserts the unit cube rests on the ground.
fn assert_on_ground(app: &App, body: Entity) {
    let y = position(app, body).y;
    assert!((y - 0.5).abs() <= slop(), "y = {y}, resting height 0.5");
}

#[test]
fn layers_decide_who_collides_and_who_passes_through() {
    use Layer::*;
    let (mut app, ground) = scene(CollisionLayers::from_layers([Ground], [Player, Enemy]));
    let player = cube(
        &mut app,
        -3.0,
        CollisionLayers::from_layers([Player], [Ground, Enemy]),
    );
    let enemy = cube(
        &mut app,
        0.0,
        CollisionLayers::from_layers([Enemy], [Ground, Player]),
    );
    let ghost = cube(
        &mut app,
        3.0,
        CollisionLayers::from_layers([Ghost], [Player]),
    );
    step(&mut app, 64);
    assert_on_ground(&app, player);
    assert_on_ground(&app, enemy);
    // The ghost is in no group the ground collides with: it falls through as if alone.
    assert_free_fall(&app, ghost, 1.0, 64);
    let log = log(&app);
    assert_eq!(log.starts_between(player, ground).len(), 1);
    assert_eq!(log.starts_between(enemy, ground).len(), 1);
    assert!(log.starts_between(ghost, ground).is_empty());
}

#[test]
fn enemies_pass_through_each_other_but_not_the_player() {
    use Layer::*;
    let enemy_layers = CollisionLayers::from_layers([Enemy], [Ground, Player]);
    let (mut app, _) = scene(CollisionLayers::from_layers([Ground], [Player, Enemy]));
    // An enemy rests on the ground; another enemy dropped onto it passes through it (and
    // lands on the ground), while a player dropped onto an enemy lands on top of it.
    let lower_enemy = cube(&mut app, 0.0, enemy_layers);
    let lower_for_player = cube(&mut app, 3.0, enemy_layers);
    step(&mut app, 64);
    let upper_enemy = cube_at(&mut app, Vec3::new(0.0, 2.5, 0.0), enemy_layers);
    let player = cube_at(
        &mut app,
        Vec3::new(3.0, 2.5, 0.0),
        CollisionLayers::from_layers([Player], [Ground, Enemy]),
    );
    step(&mut app, 128);
    assert_on_ground(&app, lower_enemy);
    assert_on_ground(&app, upper_enemy);
    let y = position(&app, player).y;
    assert!(
        (y - 1.5).abs() <= 2.0 * slop(),
        "player on the enemy: y = {y}"
    );
    let log = log(&app);
    assert!(log.starts_between(upper_enemy, lower_enemy).is_empty());
    assert_eq!(log.starts_between(player, lower_for_player).len(), 1);
}

#[test]
fn one_sided_filters_do_not_collide() {
    use Layer::*;
    // The ground lists players in its filters, but the player's filters leave out the ground.
    let (mut app, ground) = scene(CollisionLayers::from_layers([Ground], [Player]));
    let player = cube(
        &mut app,
        0.0,
        CollisionLayers::from_layers([Player], [Enemy]),
    );
    // The other way round: this enemy lists the ground, but the ground leaves out enemies.
    let enemy = cube(
        &mut app,
        3.0,
        CollisionLayers::from_layers([Enemy], [Ground, Enemy]),
    );
    step(&mut app, 64);
    assert_free_fall(&app, player, 1.0, 64);
    assert_free_fall(&app, enemy, 1.0, 64);
    let log = log(&app);
    assert!(log.starts_between(player, ground).is_empty());
    assert!(log.starts_between(enemy, ground).is_empty());
}

#[test]
fn raw_masks_and_named_layers_agree() {
    use Layer::*;
    let named = CollisionLayers::from_layers([Player, Enemy], [Ground]);
    assert_eq!(named, CollisionLayers::new(0b110, 0b001));
    let by_ref = CollisionLayers::from_layers(&[Player, Enemy], &[Ground]);
    assert_eq!(by_ref, named);
    assert_eq!(
        CollisionLayers::from_layers([0b110u32], [1u32]),
        named,
        "u32 masks are layers"
    );
    assert_eq!(
        CollisionLayers::from_layers::<Layer>([], []),
        CollisionLayers::NONE
    );
}

/// The derived layers are bits in declaration order, whatever the discriminants, up to the
/// 32nd.
#[test]
fn derived_layers_are_bits_in_declaration_order() {
    assert_eq!(
        [Layer::Ground, Layer::Player, Layer::Enemy, Layer::Ghost].map(|l| l.to_bits()),
        [0b0001, 0b0010, 0b0100, 0b1000]
    );
    #[derive(PhysicsLayer)]
    #[allow(dead_code)]
    enum Numbered {
        Far = 40,
        Near = 3,
    }
    assert_eq!([Numbered::Far.to_bits(), Numbered::Near.to_bits()], [1, 2]);
    #[derive(PhysicsLayer)]
    #[rustfmt::skip]
    #[allow(dead_code)]
    enum Full {
        L0, L1, L2, L3, L4, L5, L6, L7, L8, L9, L10, L11, L12, L13, L14, L15, L16, L17, L18,
        L19, L20, L21, L22, L23, L24, L25, L26, L27, L28, L29, L30, L31,
    }
    assert_eq!(Full::L31.to_bits(), 1 << 31);
}

/// `CollisionLayers::new` takes a layer, an array of layers, a `u32` mask or a `LayerMask`
/// for either side, and they mean the same groups.
#[test]
fn layers_from_values_arrays_and_masks_agree() {
    let by_name = CollisionLayers::new(Layer::Player, [Layer::Ground, Layer::Enemy]);
    assert_eq!(by_name, CollisionLayers::from_bits(0b010, 0b101));
    assert_eq!(
        by_name,
        CollisionLayers::from_layers([Layer::Player], [Layer::Ground, Layer::Enemy])
    );
    assert_eq!(CollisionLayers::new(0b010, 0b101), by_name);
    let masks = CollisionLayers::new(
        LayerMask::from(Layer::Player),
        LayerMask::from(Layer::Ground) | LayerMask(0b100),
    );
    assert_eq!(masks, by_name);
    assert_eq!(
        CollisionLayers::new(LayerMask::DEFAULT, !LayerMask::DEFAULT & LayerMask::ALL),
        CollisionLayers::from_bits(1, u32::MAX - 1)
    );
    assert_eq!(
        LayerMask::from([Layer::Ghost, Layer::Ground]),
        LayerMask(0b1001)
    );
    // Query filters take the same.
    assert_eq!(SpatialQueryFilter::from_mask(Layer::Player).mask, 0b010);
    let both = SpatialQueryFilter::default().with_mask([Layer::Player, Layer::Enemy]);
    assert_eq!(both.mask, 0b110);
}

/// A static sensor slab 0.5 m thick, top at y = 0.
fn sensor_zone(app: &mut App) -> Entity {
    spawn(
        app,
        (
            Collider::cuboid(4.0, 0.5, 4.0),
            Sensor,
            Transform::from_xyz(0.0, -0.25, 0.0),
        ),
    )
}

#[test]
fn body_falls_through_a_sensor_and_the_crossing_is_reported() {
    let mut app = app();
    record_events(&mut app);
    let zone = sensor_zone(&mut app);
    // A ball of radius 0.25 whose bottom starts 1 m above the zone.
    let (r, y0) = (0.25, 1.25);
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(r),
            Transform::from_xyz(0.0, y0, 0.0),
        ),
    );
    step(&mut app, 64);
    assert_free_fall(&app, ball, y0, 64);
    let log = log(&app);
    // The overlap starts in the step after the one that takes the ball's bottom below the
    // zone's top (y = 0), and ends in the step after its top passes the zone's bottom
    // (y = -0.5): the narrow phase sees the positions the previous step ended with.
    let first_step = |below: f32| (1..).find(|&k| y0 + fall(k) < below).unwrap() as u64 + 1;
    assert_eq!(log.starts_between(ball, zone), vec![first_step(r)]);
    assert_eq!(log.ends_between(ball, zone), vec![first_step(-0.5 - r)]);
}

#[test]
fn sensor_on_a_dynamic_body_falls_through_the_ground() {
    let mut app = app();
    record_events(&mut app);
    let ground = ground(&mut app);
    let probe = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Sensor,
            Transform::from_xyz(0.0, 1.0, 0.0),
        ),
    );
    step(&mut app, 64);
    // It has mass (from its collider), falls under gravity and is never pushed.
    assert_free_fall(&app, probe, 1.0, 64);
    assert!(computed_mass(&app, probe).mass() > 0.0);
    let log = log(&app);
    assert_eq!(log.starts_between(probe, ground).len(), 1);
    // After 4.9 m of fall it is wholly below the 1 m thick ground box.
    assert_eq!(log.ends_between(probe, ground).len(), 1);
}

#[test]
fn sensors_obey_layers() {
    use Layer::*;
    let mut app = app();
    record_events(&mut app);
    let zone = sensor_zone(&mut app);
    set(
        &mut app,
        zone,
        CollisionLayers::from_layers([Ground], [Player]),
    );
    let ball = |app: &mut App, x: f32, layers: CollisionLayers| {
        spawn(
            app,
            (
                RigidBody::Dynamic,
                Collider::sphere(0.25),
                Transform::from_xyz(x, 1.0, 0.0),
                layers,
            ),
        )
    };
    let player = ball(
        &mut app,
        -1.0,
        CollisionLayers::from_layers([Player], [Ground]),
    );
    let enemy = ball(
        &mut app,
        1.0,
        CollisionLayers::from_layers([Enemy], [Ground]),
    );
    step(&mut app, 64);
    let log = log(&app);
    assert_eq!(log.starts_between(player, zone).len(), 1);
    assert_eq!(log.ends_between(player, zone).len(), 1);
    assert!(log.starts_between(enemy, zone).is_empty());
    assert!(log.ends.len() == 1 && log.starts.len() == 1);
}

#[test]
fn a_collider_in_no_group_meets_nothing_until_it_joins_one() {
    use bevy::ecs::system::RunSystemOnce;
    let (mut app, ground) = scene(CollisionLayers::default());
    // In no group: nothing collides with it and no query finds it (the broad phase leaves
    // it out). In a group but colliding with nothing: it falls through too, but queries
    // still find it.
    let inert = cube(&mut app, -2.0, CollisionLayers::NONE);
    let unfiltered = cube(&mut app, 2.0, CollisionLayers::new(1, 0));
    step(&mut app, 16);
    assert_free_fall(&app, inert, 1.0, 16);
    assert_free_fall(&app, unfiltered, 1.0, 16);
    let hit_below = |app: &mut App, x: f32| {
        app.world_mut()
            .run_system_once(move |q: SpatialQuery| {
                q.cast_ray(
                    Vec3::new(x, 5.0, 0.0),
                    Dir3::NEG_Y,
                    10.0,
                    true,
                    &SpatialQueryFilter::default(),
                )
                .map(|hit| hit.entity)
            })
            .unwrap()
    };
    assert_eq!(hit_below(&mut app, -2.0), Some(ground));
    assert_eq!(hit_below(&mut app, 2.0), Some(unfiltered));
    // 0.35 m of fall: the inert cube's bottom is still above the ground when it joins the
    // default groups, and from then on it lands like any other.
    set(&mut app, inert, CollisionLayers::default());
    step(&mut app, 64);
    assert_on_ground(&app, inert);
    assert_eq!(hit_below(&mut app, -2.0), Some(inert));
    assert_eq!(log(&app).starts_between(inert, ground).len(), 1);
}

//! Ray casts through the broad phase's BVH against a brute-force loop over every collider.
//!
//! The world: 10,000 static bodies (spheres of radius 0.5 m and unit cubes, alternating) on a
//! jittered 100 × 4 × 25 grid spanning 400 × 16 × 100 m. The rays: 10,000 of them from random
//! points in that volume along random directions, up to 30 m, nearest hit wanted.
//!
//! - `spatial_query/bvh_10k_rays`: `SpatialQuery::cast_ray` for each ray.
//! - `spatial_query/brute_force_10k_rays`: for each ray, every collider's precomputed world
//!   AABB is tested against the ray and the shapes it passes are ray cast exactly (parry, the
//!   same shape test the BVH path ends with); the nearest hit wins.
//!
//! Both return the same hits (checked before timing). Divide by 10,000 for the time per ray.
//!
//! ```text
//! cargo bench --bench spatial_query
//! ```

use std::hint::black_box;
use std::time::Duration;

use bevy::ecs::system::SystemState;
use bevy::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};
use impetus3d::prelude::*;
use parry3d::bounding_volume::Aabb;
use parry3d::math::Pose;
use parry3d::query::{Ray, RayCast};
use parry3d::shape::SharedShape;

const BODIES: usize = 10_000;
const RAYS: usize = 10_000;
const MAX_DISTANCE: f32 = 30.0;

/// A small deterministic generator (xorshift64*), so every run casts the same rays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32
    }

    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }
}

fn world() -> App {
    let mut app = impetus3d::headless_app(1.0 / 64.0);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for i in 0..BODIES {
        let (x, y, z) = (i % 100, (i / 100) % 4, i / 400);
        let at = Vec3::new(
            4.0 * x as f32 - 200.0 + rng.range(-1.0, 1.0),
            4.0 * y as f32 + rng.range(-1.0, 1.0),
            4.0 * z as f32 - 50.0 + rng.range(-1.0, 1.0),
        );
        let collider = if i % 2 == 0 {
            Collider::sphere(0.5)
        } else {
            Collider::cuboid(1.0, 1.0, 1.0)
        };
        app.world_mut()
            .spawn((RigidBody::Static, collider, Transform::from_translation(at)));
    }
    app.update();
    app
}

fn rays() -> Vec<(Vec3, Dir3)> {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    (0..RAYS)
        .map(|_| {
            let origin = Vec3::new(
                rng.range(-200.0, 200.0),
                rng.range(-2.0, 14.0),
                rng.range(-50.0, 50.0),
            );
            let direction = Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-0.3, 0.3),
                rng.range(-1.0, 1.0),
            );
            (origin, Dir3::new(direction).unwrap_or(Dir3::X))
        })
        .collect()
}

/// Every collider's entity, world pose, shape and world AABB: what a loop without a tree has.
fn flat_list(app: &mut App) -> Vec<(Entity, Pose, SharedShape, Aabb)> {
    let world = app.world_mut();
    let mut query = world.query::<(Entity, &Collider, &Position, &Rotation)>();
    query
        .iter(world)
        .map(|(entity, collider, position, rotation)| {
            let pose = Pose::from_parts(position.0, rotation.0);
            let aabb = collider.shape().compute_aabb(&pose);
            (entity, pose, collider.shape().clone(), aabb)
        })
        .collect()
}

fn brute_force(
    list: &[(Entity, Pose, SharedShape, Aabb)],
    origin: Vec3,
    dir: Dir3,
) -> Option<(Entity, f32)> {
    let ray = Ray::new(origin, *dir);
    let mut best: Option<(Entity, f32)> = None;
    for (entity, pose, shape, aabb) in list {
        let limit = best.map_or(MAX_DISTANCE, |b| b.1);
        if aabb.cast_local_ray(&ray, limit, true).is_none() {
            continue;
        }
        if let Some(t) = shape.cast_ray(pose, &ray, limit, true)
            && best.is_none_or(|b| t < b.1)
        {
            best = Some((*entity, t));
        }
    }
    best
}

fn bench_rays(c: &mut Criterion) {
    let mut app = world();
    let rays = rays();
    let list = flat_list(&mut app);
    let mut state = SystemState::<SpatialQuery>::new(app.world_mut());
    let filter = SpatialQueryFilter::default();

    // Both paths must find the same nearest hit for every ray.
    {
        let query = state.get(app.world()).unwrap();
        let mut hits = 0;
        for &(origin, dir) in &rays {
            let bvh = query
                .cast_ray(origin, dir, MAX_DISTANCE, true, &filter)
                .map(|h| (h.entity, h.distance));
            let brute = brute_force(&list, origin, dir);
            assert_eq!(bvh.map(|h| h.0), brute.map(|h| h.0), "ray from {origin}");
            hits += bvh.is_some() as usize;
        }
        println!("{hits} of {RAYS} rays hit something");
    }

    let mut group = c.benchmark_group("spatial_query");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("bvh_10k_rays", |b| {
        b.iter(|| {
            let query = state.get(app.world()).unwrap();
            for &(origin, dir) in &rays {
                black_box(query.cast_ray(origin, dir, MAX_DISTANCE, true, &filter));
            }
        })
    });
    group.bench_function("brute_force_10k_rays", |b| {
        b.iter(|| {
            for &(origin, dir) in &rays {
                black_box(brute_force(&list, origin, dir));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_rays);
criterion_main!(benches);

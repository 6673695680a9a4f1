//! A user-written XPBD constraint: the custom-constraint example of the XPBD module docs
//! (`CustomConstraint` between two entities, registered with
//! `solve_constraint::<CustomConstraint, 2>` in `SubstepSolverSet::SolveUserConstraints`),
//! with a real `solve`: a rope of fixed length between a point on each body, written with the
//! [`PositionConstraint`] helpers.
//!
//! A 1 m box hangs by one corner from a static anchor on a 2 m rope, released sideways, and a
//! second box hangs from the first on another rope. Every quarter second the example prints
//! each rope's constraint error `C = |p₁ − p₂| − length` and the force it carries (`λ / h²`),
//! headless, for 4 s of simulated time.
//!
//! ```text
//! cargo run --example custom_constraint
//! ```

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::prelude::*;
use impetus3d::{dynamics::solver::xpbd::XpbdConstraint, prelude::*};

/// A rope of fixed length between `local_anchor1` on `entity1` and `local_anchor2` on
/// `entity2` (in each body's frame, relative to its origin).
#[derive(Component)]
// Solved in the order constraints were spawned, the same on every machine (see
// `impetus3d::body::creation`).
#[require(CreationOrder)]
struct CustomConstraint {
    entity1: Entity,
    entity2: Entity,
    local_anchor1: Vec3,
    local_anchor2: Vec3,
    length: f32,
    compliance: f32,
    lagrange: f32,
    /// The force of the last substep, N (for printing).
    force: f32,
}

impl PositionConstraint for CustomConstraint {}

impl XpbdConstraint<2> for CustomConstraint {
    fn entities(&self) -> [Entity; 2] {
        [self.entity1, self.entity2]
    }

    fn clear_lagrange_multipliers(&mut self) {
        self.lagrange = 0.0;
    }

    fn solve(&mut self, bodies: [&mut RigidBodyQueryItem; 2], dt: f32) {
        let [body1, body2] = bodies;
        // Anchor offsets from each centre of mass, in world space.
        let r1 = body1.rotation * (self.local_anchor1 - body1.center_of_mass());
        let r2 = body2.rotation * (self.local_anchor2 - body2.center_of_mass());
        let p1 = body1.current_center_of_mass() + r1;
        let p2 = body2.current_center_of_mass() + r2;
        // C = |p₁ − p₂| − length, gradient n for body 1 and −n for body 2.
        let offset = p1 - p2;
        let distance = offset.length();
        if distance <= f32::EPSILON {
            return;
        }
        let n = offset / distance;
        let c = distance - self.length;
        let w1 = self.compute_generalized_inverse_mass(body1, r1, n);
        let w2 = self.compute_generalized_inverse_mass(body2, r2, n);
        let delta = self.compute_lagrange_update(self.lagrange, c, &[w1, w2], self.compliance, dt);
        self.lagrange += delta;
        self.apply_positional_correction(body1, body2, delta, n, r1, r2);
        self.force = self.lagrange.abs() / (dt * dt);
    }
}

impl MapEntities for CustomConstraint {
    fn map_entities<M: EntityMapper>(&mut self, entity_mapper: &mut M) {
        self.entity1 = entity_mapper.get_mapped(self.entity1);
        self.entity2 = entity_mapper.get_mapped(self.entity2);
    }
}

/// The rope's constraint value `C = |p₁ − p₂| − length` in the world's current state, m.
fn error(world: &World, rope: &CustomConstraint) -> f32 {
    let anchor = |entity, local| {
        let position = world.get::<Position>(entity).expect("body").0;
        let rotation = world.get::<Rotation>(entity).expect("body").0;
        position + rotation * local
    };
    let p1 = anchor(rope.entity1, rope.local_anchor1);
    let p2 = anchor(rope.entity2, rope.local_anchor2);
    (p1 - p2).length() - rope.length
}

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;

fn main() {
    let mut app = impetus3d::headless_app(DT);
    // Registration, as the docs show it.
    let substeps = app
        .get_schedule_mut(SubstepSchedule)
        .expect("add SubstepSchedule first");
    substeps.add_systems(
        solve_constraint::<CustomConstraint, 2>.in_set(SubstepSolverSet::SolveUserConstraints),
    );

    let anchor = app
        .world_mut()
        .spawn((RigidBody::Static, Transform::from_xyz(0.0, 6.0, 0.0)))
        .id();
    let corner = Vec3::splat(0.5);
    // Its corner (0.5, 0.5, 0.5) starts 2 m from the anchor, level with it: (2, 6, 0).
    let upper = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(1.5, 5.5, -0.5),
        ))
        .id();
    let lower = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            // Its corner (0.5, 0.5, 0.5) 1 m straight below the upper box's corner
            // (−0.5, −0.5, −0.5), which starts at (1, 5, −1).
            Transform::from_xyz(0.5, 3.5, -1.5),
        ))
        .id();
    let rope = |entity1, entity2, local_anchor1, local_anchor2, length| CustomConstraint {
        entity1,
        entity2,
        local_anchor1,
        local_anchor2,
        length,
        compliance: 0.0,
        lagrange: 0.0,
        force: 0.0,
    };
    let ropes = [
        app.world_mut()
            .spawn(rope(anchor, upper, Vec3::ZERO, corner, 2.0))
            .id(),
        app.world_mut()
            .spawn(rope(upper, lower, -corner, corner, 1.0))
            .id(),
    ];

    println!("two boxes on user-written rope constraints, step {DT:.4} s");
    println!(
        "{:>5}  {:>14}  {:>10}  {:>14}  {:>10}  {:>18}",
        "t/s", "rope 1 C/m", "F/N", "rope 2 C/m", "F/N", "lower box y/m"
    );
    let per_quarter = (0.25 / DT).round() as usize;
    for quarter in 1..=16 {
        for _ in 0..per_quarter {
            app.update();
        }
        let world = app.world();
        let [a, b] = ropes.map(|r| world.get::<CustomConstraint>(r).expect("rope"));
        println!(
            "{:>5.2}  {:>14.3e}  {:>10.1}  {:>14.3e}  {:>10.1}  {:>18.4}",
            quarter as f32 * 0.25,
            error(world, a),
            a.force,
            error(world, b),
            b.force,
            world.get::<Position>(lower).expect("box").y
        );
    }
}

//! A user constraint with three bodies (`XpbdConstraint<3>`): an Atwood machine. A rope of
//! fixed length runs from a 1 kg weight up over a pulley (a static body, the constraint's
//! second body) and down to a 2 kg weight:
//!
//! `C = |x₁ − a₁| + |x₃ − a₃| − L`, with `a₁`, `a₃` the two sides of the pulley, and gradients
//! `n₁ = (x₁ − a₁)/|x₁ − a₁|` for weight 1, `n₃` likewise for weight 3, and `−(n₁ + n₃)` for the
//! pulley, solved with `compute_lagrange_update_with_gradients`. The rope only pulls (`C > 0`).
//!
//! Theory says the heavy weight falls with `a = g (m₃ − m₁) / (m₁ + m₃) = g / 3`. Every eighth of
//! a second the example prints the constraint error, both heights, and the heavy weight's
//! average acceleration so far next to `g / 3`, headless, for 1.25 s of simulated time.
//!
//! ```text
//! cargo run --example three_body_constraint
//! ```

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::prelude::*;
use impetus3d::prelude::*;

/// A rope of length `length` from `bodies[0]` over the two sides of the pulley `bodies[1]`
/// (at `pulley_anchors` in its frame) to `bodies[2]`.
#[derive(Component)]
struct PulleyRope {
    bodies: [Entity; 3],
    pulley_anchors: [Vec3; 2],
    length: f32,
    lagrange: f32,
}

impl XpbdConstraint<3> for PulleyRope {
    fn entities(&self) -> [Entity; 3] {
        self.bodies
    }

    fn clear_lagrange_multipliers(&mut self) {
        self.lagrange = 0.0;
    }

    fn solve(&mut self, bodies: [&mut RigidBodyQueryItem; 3], dt: f32) {
        let [weight1, pulley, weight3] = bodies;
        let a1 = pulley.current_position() + pulley.rotation * self.pulley_anchors[0];
        let a3 = pulley.current_position() + pulley.rotation * self.pulley_anchors[1];
        let (d1, d3) = (
            weight1.current_center_of_mass() - a1,
            weight3.current_center_of_mass() - a3,
        );
        let (l1, l3) = (d1.length(), d3.length());
        let c = l1 + l3 - self.length;
        if c <= 0.0 || l1 <= f32::EPSILON || l3 <= f32::EPSILON {
            return; // slack
        }
        let (n1, n3) = (d1 / l1, d3 / l3);
        let gradients = [n1, -(n1 + n3), n3];
        let inverse_masses = [
            weight1.inverse_mass(),
            pulley.inverse_mass(),
            weight3.inverse_mass(),
        ];
        let delta = self.compute_lagrange_update_with_gradients(
            self.lagrange,
            c,
            &gradients,
            &inverse_masses,
            0.0,
            dt,
        );
        self.lagrange += delta;
        for ((body, gradient), w) in [weight1, pulley, weight3]
            .into_iter()
            .zip(gradients)
            .zip(inverse_masses)
        {
            body.accumulated_translation += delta * w * gradient;
        }
    }
}

impl MapEntities for PulleyRope {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        for body in &mut self.bodies {
            *body = mapper.get_mapped(*body);
        }
    }
}

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;

fn main() {
    let mut app = impetus3d::headless_app(DT);
    app.add_systems(
        SubstepSchedule,
        solve_constraint::<PulleyRope, 3>.in_set(SubstepSolverSet::SolveUserConstraints),
    );

    let (m1, m3) = (1.0, 2.0);
    let y0 = -3.0;
    let pulley = app
        .world_mut()
        .spawn((RigidBody::Static, Transform::default()))
        .id();
    let weight1 = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Mass(m1),
            Transform::from_xyz(-0.5, y0, 0.0),
        ))
        .id();
    let weight3 = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Mass(m3),
            Transform::from_xyz(0.5, y0, 0.0),
        ))
        .id();
    let rope = PulleyRope {
        bodies: [weight1, pulley, weight3],
        pulley_anchors: [Vec3::new(-0.5, 0.0, 0.0), Vec3::new(0.5, 0.0, 0.0)],
        length: -2.0 * y0,
        lagrange: 0.0,
    };
    let pulley_anchors = rope.pulley_anchors;
    let length = rope.length;
    app.world_mut().spawn(rope);

    let g = -app.world().resource::<Gravity>().0.y;
    println!(
        "Atwood machine on a 3-body user constraint: m1 = {m1} kg, m3 = {m3} kg, rope {length} m"
    );
    println!(
        "{:>5}  {:>12}  {:>9}  {:>9}  {:>16}  {:>9}",
        "t/s", "C/m", "y1/m", "y3/m", "a3/(m/s²)", "g/3"
    );
    // Every 8 steps (0.125 s).
    let substep = DT / app.world().resource::<SubstepCount>().0 as f64;
    for row in 1..=10 {
        for _ in 0..8 {
            app.update();
        }
        let world = app.world();
        let y = |e| world.get::<Position>(e).expect("weight").0;
        let (x1, x3) = (y(weight1), y(weight3));
        let c = (x1 - pulley_anchors[0]).length() + (x3 - pulley_anchors[1]).length() - length;
        let t = (row * 8) as f64 * DT;
        // Semi-implicit Euler with substep h from rest gives y = y0 − ½ a t (t + h).
        let a = 2.0 * (y0 - x3.y) as f64 / (t * (t + substep));
        println!(
            "{t:>5.2}  {c:>12.3e}  {:>9.4}  {:>9.4}  {a:>16.4}  {:>9.4}",
            x1.y,
            x3.y,
            g * (m3 - m1) / (m1 + m3)
        );
    }
}

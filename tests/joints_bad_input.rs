//! Bad joint and constraint input: joints between static bodies, joints and user constraints
//! naming despawned or non-body entities or the same entity twice, and bodies despawned while
//! joined. None may panic or spread NaN; bad ones are skipped with a warning naming them, and
//! the rest of the world keeps simulating.

use crate::common;
use crate::joints_common;

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;
use joints_common::*;

/// True if one of the warnings names `entity` (as a whole token, so `2v0` does not match
/// `12v0`).
fn names(warnings: &[String], entity: Entity) -> bool {
    let name = format!("{entity}");
    warnings.iter().any(|w| {
        w.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|token| token == name)
    })
}

/// Starting height of the witness ball, m.
const WITNESS_Y0: f32 = 100.0;

/// A ball in free fall far from everything, unaffected by anything a test does.
fn witness(app: &mut App) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(500.0, WITNESS_Y0, 0.0),
        ),
    )
}

/// The witness is where semi-implicit Euler free fall puts it after `steps` steps.
fn witness_is_falling(app: &App, witness: Entity, steps: usize) {
    let t = steps as f32 * DT;
    let h = DT / 4.0;
    // y0 − ½ g t (t + h); the tolerance is f32 round-off at |y| ≈ 100 m, as in bad_input.rs.
    let expected = WITNESS_Y0 - 0.5 * g() * t * (t + h);
    let y = position(app, witness).y;
    assert!(
        (y - expected).abs() <= 1e-3,
        "witness at {y}, free fall gives {expected}"
    );
}

/// A 2-body user constraint that does nothing but count its solves, and the substeps in
/// which it was solved (the solver may make several passes per substep).
#[derive(Component)]
struct Counting {
    entities: [Entity; 2],
    solves: u32,
    solved_substeps: u32,
    solved_this_substep: bool,
}

impl Counting {
    fn new(entities: [Entity; 2]) -> Self {
        Self {
            entities,
            solves: 0,
            solved_substeps: 0,
            solved_this_substep: false,
        }
    }
}

impl XpbdConstraint<2> for Counting {
    fn entities(&self) -> [Entity; 2] {
        self.entities
    }
    fn clear_lagrange_multipliers(&mut self) {
        self.solved_this_substep = false;
    }
    fn solve(&mut self, _: [&mut RigidBodyQueryItem; 2], _: f32) {
        self.solves += 1;
        if !self.solved_this_substep {
            self.solved_this_substep = true;
            self.solved_substeps += 1;
        }
    }
}

impl MapEntities for Counting {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        for e in &mut self.entities {
            *e = mapper.get_mapped(*e);
        }
    }
}

#[test]
fn joint_between_two_static_bodies_does_nothing() {
    let ((), warnings) = capture_warnings(|| {
        let mut app = app();
        let a = spawn(
            &mut app,
            (RigidBody::Static, Transform::from_xyz(0.0, 0.0, 0.0)),
        );
        let b = spawn(
            &mut app,
            (RigidBody::Static, Transform::from_xyz(3.0, 1.0, 0.0)),
        );
        // Every kind, and one that would want to pull them together.
        spawn(&mut app, FixedJoint::new(a, b));
        spawn(&mut app, SphericalJoint::new(a, b));
        spawn(
            &mut app,
            RevoluteJoint::new(a, b).with_angle_limits(0.0, 0.1),
        );
        spawn(&mut app, PrismaticJoint::new(a, b).with_limits(0.0, 0.1));
        let rope = spawn(
            &mut app,
            DistanceJoint::new(a, b)
                .with_rest_length(0.5)
                .with_break_force(1.0),
        );
        let w = witness(&mut app);
        step(&mut app, 64);
        assert_eq!(position(&app, a), Vec3::ZERO);
        assert_eq!(position(&app, b), Vec3::new(3.0, 1.0, 0.0));
        assert!(!joint_state::<DistanceJoint>(&app, rope).is_broken());
        witness_is_falling(&app, w, 64);
        assert!(all_bodies_finite(&mut app));
    });
    // Accepted: not an error, so no warning.
    assert!(
        warnings.is_empty(),
        "warnings for a joint between static bodies: {warnings:?}"
    );
}

/// Spawns one joint of every kind and a user constraint, each naming a healthy body and the
/// entity `bad` returns (given the healthy body), and checks they are skipped with a warning
/// naming them, while the healthy body falls freely, a working user constraint next to them is
/// still solved, and the witness keeps falling.
fn bad_references(label: &str, bad: impl FnOnce(&mut App, Entity) -> Entity) {
    let ((joints, constraint, other), warnings) = capture_warnings(|| {
        let mut app = app();
        app.add_systems(
            SubstepSchedule,
            solve_constraint::<Counting, 2>.in_set(SubstepSolverSet::SolveUserConstraints),
        );
        let w = witness(&mut app);
        // A healthy body that each bad joint names as its first body.
        let body = spawn(
            &mut app,
            (
                RigidBody::Dynamic,
                Collider::sphere(0.5),
                Transform::from_xyz(-500.0, WITNESS_Y0, 0.0),
            ),
        );
        let other = bad(&mut app, body);
        let joints = [
            spawn(&mut app, FixedJoint::new(body, other)),
            spawn(&mut app, SphericalJoint::new(body, other)),
            spawn(&mut app, RevoluteJoint::new(body, other)),
            spawn(&mut app, PrismaticJoint::new(body, other)),
            spawn(
                &mut app,
                DistanceJoint::new(body, other).with_rest_length(1.0),
            ),
        ];
        let constraint = spawn(&mut app, Counting::new([body, other]));
        // A working constraint next to it keeps being solved.
        let partner = spawn(
            &mut app,
            (RigidBody::Dynamic, Transform::from_xyz(0.0, 500.0, 0.0)),
        );
        let good = spawn(&mut app, Counting::new([w, partner]));
        step(&mut app, 64);
        assert!(all_bodies_finite(&mut app), "{label}: non-finite state");
        witness_is_falling(&app, w, 64);
        // The healthy body is untouched by the skipped joints: it falls exactly like the
        // witness (same height, same arithmetic).
        let y = position(&app, body).y;
        assert_eq!(
            y,
            position(&app, w).y,
            "{label}: the body named by the bad joints is at y = {y}, the witness at {}",
            position(&app, w).y
        );
        let c = app.world().get::<Counting>(constraint).unwrap();
        assert_eq!(c.solves, 0, "{label}: the bad user constraint was solved");
        assert_eq!(
            app.world().get::<Counting>(good).unwrap().solved_substeps,
            64 * 4,
            "{label}: the good user constraint was not solved in every substep"
        );
        (joints, constraint, other)
    });
    println!("{label}: {} warnings: {warnings:#?}", warnings.len());
    for j in joints {
        assert!(
            names(&warnings, j),
            "{label}: no warning names joint {j}: {warnings:?}"
        );
    }
    assert!(
        names(&warnings, constraint),
        "{label}: no warning names constraint {constraint}: {warnings:?}"
    );
    assert!(
        names(&warnings, other),
        "{label}: no warning names the bad entity {other}: {warnings:?}"
    );
}

#[test]
fn joint_to_despawned_entity_is_skipped_with_warning() {
    bad_references("despawned", |app, _| {
        let gone = spawn(app, (RigidBody::Dynamic, Transform::default()));
        app.world_mut().despawn(gone);
        gone
    });
}

#[test]
fn joint_to_non_body_entity_is_skipped_with_warning() {
    bad_references("non-body", |app, _| {
        spawn(app, Transform::from_xyz(1.0, 0.0, 0.0))
    });
}

#[test]
fn joint_naming_same_entity_twice_is_skipped_with_warning() {
    bad_references("same entity twice", |_, body| body);
}

#[test]
fn despawning_joined_bodies_mid_simulation_is_safe() {
    let ((), warnings) = capture_warnings(|| {
        let mut app = app();
        app.add_systems(
            SubstepSchedule,
            solve_constraint::<Counting, 2>.in_set(SubstepSolverSet::SolveUserConstraints),
        );
        let w = witness(&mut app);
        // A 6-link chain; a user constraint also names its third link.
        let chain = chain(&mut app, 6, |_| None);
        for &l in &chain.links {
            set(&mut app, l, SleepingDisabled);
        }
        spawn(&mut app, Counting::new([chain.links[2], chain.links[4]]));
        // Kick it so it swings.
        set(
            &mut app,
            chain.links[5],
            LinearVelocity(Vec3::new(3.0, 0.0, 1.0)),
        );
        step(&mut app, 32);
        // Despawn the third link (named by two joints and the constraint) mid-swing.
        app.world_mut().despawn(chain.links[2]);
        let loose = &chain.links[3..];
        let momentum =
            |app: &App| -> Vec3 { loose.iter().map(|&l| mass(app, l) * velocity(app, l)).sum() };
        let loose_mass: f32 = loose.iter().map(|&l| mass(&app, l)).sum();
        let p0 = momentum(&app);
        step(&mut app, 32);
        assert!(
            all_bodies_finite(&mut app),
            "non-finite state after despawning a link"
        );
        // The part above still hangs together: joints 0 and 1 are intact. Rigid joints leave
        // at most the motion of one substep, ~1 mm at these speeds; allow 1 cm.
        for &j in &chain.joints[..2] {
            let gap = anchor_error::<SphericalJoint>(&app, j);
            assert!(gap <= 0.01, "joint above the gap separated by {gap} m");
        }
        // The three links below are cut loose: only gravity acts on them as a group (the
        // joints between them are internal and conserve momentum), so their momentum changes
        // by exactly M g t. Round-off allowance: 1e-3 of that.
        let dp = momentum(&app) - p0;
        let expected = Vec3::new(0.0, -loose_mass * g() * 32.0 * DT, 0.0);
        assert!(
            (dp - expected).length() <= 1e-3 * expected.length(),
            "the cut-off links' momentum changed by {dp}, free fall gives {expected}"
        );
        // Despawn a joint entity and the static anchor too; still nothing breaks.
        app.world_mut().despawn(chain.joints[4]);
        app.world_mut().despawn(chain.anchor);
        step(&mut app, 32);
        assert!(
            all_bodies_finite(&mut app),
            "non-finite state after despawning the anchor"
        );
        witness_is_falling(&app, w, 96);
    });
    println!(
        "despawn mid-simulation: {} warnings: {warnings:?}",
        warnings.len()
    );
}

//! The custom-constraint example of avian's XPBD module docs (one of the project's starting
//! references), copied with only the crate name changed (`avian3d` → `impetus3d`),
//! `EntityMapper::map_entity` → `get_mapped` (its Bevy 0.19 name) and `#[derive(Component)]`
//! added so it can be spawned. It must compile, register with
//! `solve_constraint::<CustomConstraint, 2>` exactly as the docs show, and run.
//!
//! The example's `impl` is behind `#[cfg(feature = "f32")]`, as in the docs: the crate is
//! expected to have a default `f32` feature (the scalar type). Without it the `impl` vanishes
//! and the test below that needs it is replaced by one that fails saying so.
// The reference example's `solve` is an empty stub ("Constraint solving logic goes here").
#![allow(unused_variables)]
// Without the `f32` feature the copied `impl` is compiled out, leaving its imports and fields
// unused; the failing test `crate_has_default_f32_feature` reports that instead of a build
// warning.
#![cfg_attr(not(feature = "f32"), allow(dead_code, unused_imports))]

use crate::common;

use common::*;

// ---- copied from the reference, crate name changed ----
use bevy::{
    ecs::entity::{EntityMapper, MapEntities},
    prelude::*,
};
use impetus3d::{dynamics::solver::xpbd::XpbdConstraint, prelude::*};

#[derive(Component)]
struct CustomConstraint {
    entity1: Entity,
    entity2: Entity,
    lagrange: f32,
}

#[cfg(feature = "f32")]
impl XpbdConstraint<2> for CustomConstraint {
    fn entities(&self) -> [Entity; 2] {
        [self.entity1, self.entity2]
    }
    fn clear_lagrange_multipliers(&mut self) {
        self.lagrange = 0.0;
    }
    fn solve(&mut self, bodies: [&mut RigidBodyQueryItem; 2], dt: f32) {
        // Constraint solving logic goes here
    }
}

impl MapEntities for CustomConstraint {
    fn map_entities<M: EntityMapper>(&mut self, entity_mapper: &mut M) {
        self.entity1 = entity_mapper.get_mapped(self.entity1);
        self.entity2 = entity_mapper.get_mapped(self.entity2);
    }
}
// ---- end of the copy ----

#[cfg(feature = "f32")]
#[test]
fn reference_custom_constraint_example_compiles_and_runs() {
    let mut app = app();
    // Registration, as the reference shows it.
    // Get substep schedule
    let substeps = app
        .get_schedule_mut(SubstepSchedule)
        .expect("add SubstepSchedule first");
    // Add custom constraint
    substeps.add_systems(
        solve_constraint::<CustomConstraint, 2>.in_set(SubstepSolverSet::SolveUserConstraints),
    );

    let a = spawn(
        &mut app,
        (RigidBody::Dynamic, Transform::from_xyz(0.0, 10.0, 0.0)),
    );
    let b = spawn(
        &mut app,
        (RigidBody::Dynamic, Transform::from_xyz(3.0, 10.0, 0.0)),
    );
    let free = spawn(
        &mut app,
        (RigidBody::Dynamic, Transform::from_xyz(-3.0, 10.0, 0.0)),
    );
    let constraint = spawn(
        &mut app,
        CustomConstraint {
            entity1: a,
            entity2: b,
            lagrange: 1.0,
        },
    );
    step(&mut app, 64);
    // The stub solve does nothing, so the constrained bodies fall exactly like an
    // unconstrained one (bit for bit: same start height, same arithmetic).
    assert!(all_bodies_finite(&mut app));
    assert_eq!(position(&app, a).y, position(&app, free).y);
    assert_eq!(position(&app, b).y, position(&app, free).y);
    // And that fall is free fall: after t = 1 s of semi-implicit Euler substeps of h = dt / 4,
    // y = y₀ − ½ g t² − ½ g h t (tests/free_fall.rs derives it), up to f32 rounding (3e-4 m
    // there, for the same number of substeps).
    let (t, h) = (64.0 * DT, DT / 4.0);
    let expected = 10.0 - 0.5 * g() * t * t - 0.5 * g() * h * t;
    let y = position(&app, free).y;
    assert!(
        (y - expected).abs() < 3e-4,
        "fell to {y}, free fall gives {expected}"
    );
    // The engine called `clear_lagrange_multipliers` on it every substep.
    let lagrange = app
        .world()
        .get::<CustomConstraint>(constraint)
        .unwrap()
        .lagrange;
    assert_eq!(lagrange, 0.0, "clear_lagrange_multipliers was never called");
}

#[cfg(not(feature = "f32"))]
#[test]
fn crate_has_default_f32_feature() {
    panic!(
        "impetus3d has no `f32` cargo feature (enabled by default), so the reference's \
         `#[cfg(feature = \"f32\")] impl XpbdConstraint<2> for CustomConstraint` is compiled out \
         and the example cannot be registered with solve_constraint"
    );
}

//! The integration tests, linked into one binary.
//!
//! Each file in `tests/` stays a module of its own (`cargo test --test suite stacking::`
//! runs one), but they share one test binary: every binary links all of Bevy and parry
//! (about 120 MB each in the dev profile), and 45 of them, built twice (with and without the
//! optional features), filled the CI runner's disk. Three tests keep a binary of their own:
//! `allocation` installs a counting global allocator, `thread_determinism` re-runs itself
//! with a compute pool of a given size, and `fuzz` (the fuzzers, tampered level files and
//! panics in user code) has long runs of its own and a compute pool of two threads.

// Tests and examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`);
// the rule against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

mod common;
mod event_log;
mod joints_common;

#[path = "avian_names.rs"]
mod avian_names;
#[path = "bad_input.rs"]
mod bad_input;
#[path = "ccd.rs"]
mod ccd;
#[path = "character.rs"]
mod character;
#[path = "colliders.rs"]
mod colliders;
#[path = "d6_joint.rs"]
mod d6_joint;
#[path = "debug_render.rs"]
mod debug_render;
#[path = "determinism.rs"]
mod determinism;
#[path = "dynamics.rs"]
mod dynamics;
#[path = "events.rs"]
mod events;
#[path = "free_fall.rs"]
mod free_fall;
#[path = "friction.rs"]
mod friction;
#[path = "heightfield.rs"]
mod heightfield;
#[path = "hierarchy.rs"]
mod hierarchy;
#[path = "hooks.rs"]
mod hooks;
#[path = "interpolation.rs"]
mod interpolation;
#[path = "joints_bad_input.rs"]
mod joints_bad_input;
#[path = "joints_break.rs"]
mod joints_break;
#[path = "joints_chain.rs"]
mod joints_chain;
#[path = "joints_collision.rs"]
mod joints_collision;
#[path = "joints_kinds.rs"]
mod joints_kinds;
#[path = "joints_on_contacts.rs"]
mod joints_on_contacts;
#[path = "joints_pendulum.rs"]
mod joints_pendulum;
#[path = "joints_sleeping.rs"]
mod joints_sleeping;
#[path = "joints_solver.rs"]
mod joints_solver;
#[path = "joints_springs.rs"]
mod joints_springs;
#[path = "kinematic.rs"]
mod kinematic;
#[path = "layering.rs"]
mod layering;
#[path = "layers.rs"]
mod layers;
#[path = "mesh_colliders.rs"]
mod mesh_colliders;
#[path = "peer_determinism.rs"]
mod peer_determinism;
#[path = "picking.rs"]
mod picking;
#[path = "recycling.rs"]
mod recycling;
#[path = "reflect.rs"]
mod reflect;
#[path = "resting.rs"]
mod resting;
#[path = "restitution.rs"]
mod restitution;
#[path = "rollback_ggrs.rs"]
mod rollback_ggrs;
#[path = "scene.rs"]
mod scene;
#[path = "sleeping.rs"]
mod sleeping;
#[path = "snapshot.rs"]
mod snapshot;
#[path = "spatial_query.rs"]
mod spatial_query;
#[path = "stacking.rs"]
mod stacking;
#[path = "stepping.rs"]
mod stepping;
#[path = "swept_ccd.rs"]
mod swept_ccd;
#[path = "validation.rs"]
mod validation;
#[path = "vehicle.rs"]
mod vehicle;
#[path = "velocity_rows.rs"]
mod velocity_rows;
#[path = "xpbd_custom.rs"]
mod xpbd_custom;
#[path = "xpbd_reference_example.rs"]
mod xpbd_reference_example;
#[path = "xpbd_tutorial.rs"]
mod xpbd_tutorial;

//! Every public component and resource derives `Reflect` and is registered with the app.
//!
//! The list of types is read from the sources (every `pub struct`/`pub enum` whose derive
//! list names `Component` or `Resource`), so a new public component that is not registered
//! fails this test without anyone updating a list by hand.

use std::any::TypeId;
use std::path::{Path, PathBuf};

use bevy::prelude::*;
use bevy::reflect::TypeRegistry;
use impetus3d::prelude::*;

/// A public component or resource found in the sources.
#[derive(Debug)]
struct Found {
    name: String,
    file: PathBuf,
    resource: bool,
    default: bool,
    partial_eq: bool,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The derive list of the attributes just above line `at` (joined over several lines).
fn derives_above(lines: &[&str], at: usize) -> Option<String> {
    // The attribute block runs up to the previous item's end (`}` or `;`) or a blank line;
    // attributes may span lines (`#[require(\n    A,\n    B\n)]`).
    let mut attributes = String::new();
    for line in lines[..at].iter().rev() {
        let line = line.trim();
        if line.is_empty() || line.ends_with('}') || line.ends_with(';') {
            break;
        }
        if !line.starts_with("//") {
            attributes.insert_str(0, line);
        }
    }
    let start = attributes.find("#[derive(")?;
    let rest = &attributes[start + "#[derive(".len()..];
    Some(rest[..rest.find(")]")?].to_string())
}

/// Every public component and resource of the crate, by reading `src/`.
fn public_types() -> Vec<Found> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let sources: Vec<(PathBuf, String)> = files
        .into_iter()
        // Modules compiled only with a feature.
        .filter(|f| cfg!(feature = "debug-render") || !f.ends_with("debug_render.rs"))
        .filter(|f| cfg!(feature = "collider-from-mesh") || !f.ends_with("collision/mesh.rs"))
        .filter(|f| cfg!(feature = "picking") || !f.ends_with("picking.rs"))
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap();
            (f, text)
        })
        .collect();
    let all_text: String = sources.iter().map(|(_, t)| t.as_str()).collect();
    let mut found = Vec::new();
    for (file, text) in &sources {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let line = line.trim_start();
            let Some(rest) = line
                .strip_prefix("pub struct ")
                .or_else(|| line.strip_prefix("pub enum "))
            else {
                continue;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let Some(derives) = derives_above(&lines, i) else {
                continue;
            };
            let derives: Vec<&str> = derives.split(',').map(str::trim).collect();
            let component = derives.contains(&"Component");
            let resource = derives.contains(&"Resource");
            if !component && !resource {
                continue;
            }
            found.push(Found {
                default: derives.contains(&"Default")
                    || all_text.contains(&format!("impl Default for {name} ")),
                partial_eq: derives.contains(&"PartialEq"),
                name,
                file: file.clone(),
                resource,
            });
        }
    }
    found
}

fn app() -> App {
    #[allow(unused_mut)]
    let mut app = impetus3d::headless_app(1.0 / 64.0);
    #[cfg(feature = "debug-render")]
    app.add_plugins((
        bevy::asset::AssetPlugin::default(),
        bevy::gizmos::GizmoPlugin,
        PhysicsDebugPlugin,
    ));
    #[cfg(feature = "picking")]
    app.add_plugins((
        bevy::picking::PickingPlugin,
        impetus3d::picking::PhysicsPickingPlugin,
    ));
    app
}

#[test]
fn the_source_scan_finds_the_public_types() {
    let found = public_types();
    let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
    for name in [
        "RigidBody",
        "Position",
        "Collider",
        "FixedJoint",
        "D6Joint",
        "Gravity",
        "SubstepCount",
        "CharacterController",
        "TransformInterpolation",
        "PhysicsInterpolation",
        "SolverBodies",
    ] {
        assert!(names.contains(&name), "{name} not found in {names:?}");
    }
    #[cfg(feature = "debug-render")]
    assert!(names.contains(&"DebugRender"));
    assert!(found.len() >= 55, "{} types: {names:?}", found.len());
    assert!(
        !names.contains(&"ColliderOwnership"),
        "pub(crate) types are not public"
    );
}

#[test]
fn every_public_component_and_resource_is_registered_with_its_type_data() {
    let app = app();
    let registry = app.world().resource::<AppTypeRegistry>().read();
    let mut problems = Vec::new();
    for found in public_types() {
        problems.extend(check(&registry, &found).err());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn check(registry: &TypeRegistry, found: &Found) -> Result<(), String> {
    let at = format!("{} ({})", found.name, found.file.display());
    let registration = registry
        .get_with_short_type_path(&found.name)
        .ok_or(format!("{at}: not registered"))?;
    if found.resource {
        registration
            .data::<ReflectResource>()
            .ok_or(format!("{at}: no #[reflect(Resource)]"))?;
    } else {
        registration
            .data::<ReflectComponent>()
            .ok_or(format!("{at}: no #[reflect(Component)]"))?;
    }
    if found.default {
        let default = registration
            .data::<ReflectDefault>()
            .ok_or(format!("{at}: has Default but no #[reflect(Default)]"))?;
        let value = default.default();
        if found.partial_eq {
            let equal = value.reflect_partial_eq(value.as_partial_reflect());
            if equal != Some(true) {
                return Err(format!("{at}: has PartialEq but no #[reflect(PartialEq)]"));
            }
        }
        let debug = format!("{:?}", value.as_partial_reflect());
        if debug.is_empty() {
            return Err(format!("{at}: no Debug output"));
        }
    }
    Ok(())
}

#[test]
fn a_collider_is_an_opaque_value_that_clones() {
    let mut app = app();
    let compound = Collider::compound(vec![
        (Vec3::ZERO, Quat::IDENTITY, Collider::cuboid(1.0, 2.0, 3.0)),
        (Vec3::Y, Quat::IDENTITY, Collider::sphere(0.5)),
    ]);
    let e = app.world_mut().spawn(compound).id();
    let registry = app.world().resource::<AppTypeRegistry>().clone();
    let registry = registry.read();
    let registration = registry.get(TypeId::of::<Collider>()).unwrap();
    let component = registration.data::<ReflectComponent>().unwrap();
    let reflected = component.reflect(app.world().entity(e)).unwrap();
    assert!(matches!(
        reflected.reflect_ref(),
        bevy::reflect::ReflectRef::Opaque(_)
    ));
    let copy = reflected.reflect_clone().unwrap();
    let copy = copy.downcast_ref::<Collider>().unwrap();
    let original = app.world().get::<Collider>(e).unwrap();
    assert_eq!(copy.shape().shape_type(), original.shape().shape_type());
    assert_eq!(
        copy.shape().compute_local_aabb(),
        original.shape().compute_local_aabb()
    );
}

#[test]
fn joints_register_entity_mapping() {
    let app = app();
    let registry = app.world().resource::<AppTypeRegistry>().read();
    for id in [
        TypeId::of::<FixedJoint>(),
        TypeId::of::<DistanceJoint>(),
        TypeId::of::<SphericalJoint>(),
        TypeId::of::<RevoluteJoint>(),
        TypeId::of::<PrismaticJoint>(),
        TypeId::of::<D6Joint>(),
    ] {
        let registration = registry.get(id).unwrap();
        assert!(
            registration
                .data::<bevy::ecs::reflect::ReflectMapEntities>()
                .is_some(),
            "{}",
            registration.type_info().type_path()
        );
    }
}

#[test]
fn body_kind_methods_win_over_the_reflection_traits() {
    // `PartialReflect::is_dynamic(&self)` is in scope with `bevy::prelude::*`; the body-kind
    // methods must still be the ones called on a reference (as query items are).
    let body = &RigidBody::Dynamic;
    assert!(body.is_dynamic());
    let kinematic = &&RigidBody::Kinematic;
    assert!(kinematic.is_kinematic() && !kinematic.is_dynamic());
    assert!(RigidBody::Static.is_static());
}

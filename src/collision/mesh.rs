//! Colliders from Bevy [`Mesh`] assets and spawned scenes (cargo feature `collider-from-mesh`).
//!
//! - [`Collider::trimesh_from_mesh`], [`Collider::convex_hull_from_mesh`] and
//!   [`Collider::convex_decomposition_from_mesh`] (V-HACD, with [`VhacdParameters`] through
//!   [`Collider::convex_decomposition_from_mesh_with_config`]) build a collider from a mesh
//!   you hold.
//! - [`ColliderConstructor`] on an entity with a [`Mesh3d`] builds its [`Collider`] as soon as
//!   the mesh asset is loaded, then removes itself (and triggers [`ColliderConstructorReady`]).
//!   It also has the primitive shapes, so a collider can be described in a scene file.
//! - [`ColliderConstructorHierarchy`] on the root of a spawned glTF scene (an entity with a
//!   `WorldAssetRoot`, Bevy 0.19's `SceneRoot`) gives every descendant with a [`Mesh3d`] a
//!   [`ColliderConstructor`] once the scene has spawned (`WorldInstanceReady`), with per-name
//!   overrides, density and collision layers. On an entity without a scene it does the same
//!   for the descendants it has when the next frame starts.
//!
//! Mesh colliders are built in the mesh's local frame and at the entity's *world scale* when
//! they are built (the product of the `Transform` scales from the entity up to the root), so
//! that they match what is rendered; colliders do not follow later changes of scale (see
//! [`body::sync`](crate::body::sync)).
//!
//! The meshes must keep their data in the main world: a mesh whose `asset_usage` is
//! `RENDER_WORLD` only has handed its vertices to the renderer, and no collider can be built
//! from it (a warning says so). Meshes loaded from glTF keep both by default.
//!
//! Bad input never panics: an empty mesh, one without `Mesh::ATTRIBUTE_POSITION` as `[f32; 3]`,
//! one whose topology is not `TriangleList` or `TriangleStrip`, with indices out of range or
//! with a non-finite vertex gives `None` from the functions here, and a `warn!` naming the
//! entity (and its [`Name`]) from the components.

use bevy::asset::{AssetServer, Assets};
use bevy::ecs::entity::EntityHashSet;
use bevy::math::Affine3A;
use bevy::mesh::{Indices, Mesh, Mesh3d, PrimitiveTopology, VertexAttributeValues};
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::world_serialization::{
    DynamicWorldRoot, WorldAssetRoot, WorldInstance, WorldInstanceReady, WorldInstanceSpawner,
};
use parry3d::shape::SharedShape;
use parry3d::transformation::vhacd::{VHACD, VHACDParameters};
use parry3d::transformation::voxelization::FillMode;

use super::collider::{Collider, CollisionLayers};
use crate::body::ColliderDensity;
use crate::math::{Scalar, Vector};

/// Triangles of a mesh: its vertex positions and index triples, checked.
struct MeshTriangles {
    vertices: Vec<Vector>,
    indices: Vec<[u32; 3]>,
}

/// The triangles of `mesh` with its vertices scaled by `scale`, or why it has none usable.
fn mesh_triangles(mesh: &Mesh, scale: Vector) -> Result<MeshTriangles, String> {
    let positions = match mesh.try_attribute_option(Mesh::ATTRIBUTE_POSITION) {
        Ok(Some(VertexAttributeValues::Float32x3(positions))) => positions,
        Ok(Some(_)) => return Err("its positions are not [f32; 3]".to_string()),
        Ok(None) => return Err("it has no vertex positions".to_string()),
        Err(_) => {
            return Err(
                "its vertex data is in the render world only (asset_usage without MAIN_WORLD)"
                    .to_string(),
            );
        }
    };
    if positions.is_empty() {
        return Err("it has no vertices".to_string());
    }
    if !scale.is_finite() || scale.abs().min_element() <= 1e-6 {
        return Err(format!("its world scale {scale} is zero or not finite"));
    }
    let vertices: Vec<Vector> = positions
        .iter()
        .map(|&p| Vector::from_array(p) * scale)
        .collect();
    if let Some(bad) = vertices.iter().position(|v| !v.is_finite()) {
        return Err(format!("vertex {bad} is not finite ({})", vertices[bad]));
    }
    let count = vertices.len();
    let flat: Vec<u32> = match mesh.try_indices_option() {
        Ok(Some(Indices::U16(indices))) => indices.iter().map(|&i| u32::from(i)).collect(),
        Ok(Some(Indices::U32(indices))) => indices.clone(),
        Ok(None) => (0..count as u32).collect(),
        Err(_) => {
            return Err(
                "its index data is in the render world only (asset_usage without MAIN_WORLD)"
                    .to_string(),
            );
        }
    };
    if let Some(bad) = flat.iter().find(|&&i| i as usize >= count) {
        return Err(format!("index {bad} is out of range for {count} vertices"));
    }
    let mut indices: Vec<[u32; 3]> = match mesh.primitive_topology() {
        PrimitiveTopology::TriangleList => {
            flat.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect()
        }
        PrimitiveTopology::TriangleStrip => (0..flat.len().saturating_sub(2))
            .map(|k| {
                if k % 2 == 0 {
                    [flat[k], flat[k + 1], flat[k + 2]]
                } else {
                    [flat[k + 1], flat[k], flat[k + 2]]
                }
            })
            .collect(),
        other => {
            return Err(format!(
                "its topology is {other:?}; only triangle lists and strips make a collider"
            ));
        }
    };
    if indices.is_empty() {
        return Err("it has no triangles".to_string());
    }
    // A mirroring scale turns the triangles inside out: turn them back.
    if scale.x * scale.y * scale.z < 0.0 {
        for t in &mut indices {
            t.swap(1, 2);
        }
    }
    Ok(MeshTriangles { vertices, indices })
}

/// A triangle-mesh collider from `mesh`, or why not.
fn trimesh_collider(mesh: &Mesh, scale: Vector) -> Result<Collider, String> {
    let MeshTriangles { vertices, indices } = mesh_triangles(mesh, scale)?;
    Collider::try_trimesh(vertices, indices).map_err(|err| format!("parry rejected it: {err:?}"))
}

/// A convex-hull collider from `mesh`, or why not.
fn convex_hull_collider(mesh: &Mesh, scale: Vector) -> Result<Collider, String> {
    let MeshTriangles { vertices, .. } = mesh_triangles(mesh, scale)?;
    Collider::convex_hull(vertices)
        .ok_or_else(|| "its convex hull is flat or degenerate".to_string())
}

/// A compound of convex parts from the V-HACD decomposition of `mesh`, or why not.
fn decomposition_collider(
    mesh: &Mesh,
    scale: Vector,
    parameters: &VhacdParameters,
) -> Result<Collider, String> {
    let params = parameters.to_parry()?;
    let MeshTriangles { vertices, indices } = mesh_triangles(mesh, scale)?;
    // Voxelising a flat mesh divides by its zero thickness.
    let (min, max) = vertices
        .iter()
        .fold((Vector::MAX, Vector::MIN), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let extent = max - min;
    if extent.min_element() <= 1e-6 * extent.max_element().max(1e-6) {
        return Err(format!(
            "it is flat (extent {extent}): nothing to decompose"
        ));
    }
    let decomposition = VHACD::decompose(&params, &vertices, &indices, true);
    let parts: Vec<(Vector, Quat, Collider)> = decomposition
        .compute_exact_convex_hulls(&vertices, &indices)
        .into_iter()
        .filter_map(|(points, triangles)| SharedShape::convex_mesh(points, &triangles))
        .map(|shape| (Vector::ZERO, Quat::IDENTITY, Collider::from(shape)))
        .collect();
    if parts.is_empty() {
        return Err("the decomposition found no convex part".to_string());
    }
    let collider = Collider::compound(parts);
    match collider.validate() {
        Some(reason) => Err(reason),
        None => Ok(collider),
    }
}

impl Collider {
    /// A triangle-mesh collider with the triangles of `mesh` (a `TriangleList` or
    /// `TriangleStrip`, indexed or not), or `None` if it has none usable (see the
    /// [module docs](crate::collision::mesh)). A triangle mesh is hollow and has no mass: use
    /// it for static level geometry, and [`Collider::convex_hull_from_mesh`] or
    /// [`Collider::convex_decomposition_from_mesh`] for moving bodies.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use impetus3d::prelude::*;
    /// let mesh = Mesh::from(Cuboid::new(2.0, 1.0, 3.0));
    /// let collider = Collider::trimesh_from_mesh(&mesh).unwrap();
    /// assert!(collider.validate().is_none());
    /// ```
    pub fn trimesh_from_mesh(mesh: &Mesh) -> Option<Collider> {
        trimesh_collider(mesh, Vector::ONE).ok()
    }

    /// The convex hull of `mesh`'s vertices, or `None` if it has no usable vertices or they
    /// are flat.
    pub fn convex_hull_from_mesh(mesh: &Mesh) -> Option<Collider> {
        convex_hull_collider(mesh, Vector::ONE).ok()
    }

    /// `mesh` split into convex parts by V-HACD (parry's implementation, with
    /// [`VhacdParameters::default`]), as a compound; `None` if the mesh has no usable
    /// triangles, is flat or gives no part. A concave object (an L-shaped beam, a bowl, a
    /// chair) then collides by its real shape and has the right mass, where its convex hull
    /// would fill the hollows. Decomposition takes from milliseconds to seconds depending on
    /// the mesh and the [`resolution`](VhacdParameters::resolution): build once, not per
    /// frame.
    pub fn convex_decomposition_from_mesh(mesh: &Mesh) -> Option<Collider> {
        decomposition_collider(mesh, Vector::ONE, &VhacdParameters::default()).ok()
    }

    /// [`Collider::convex_decomposition_from_mesh`] with the given parameters; `None` also if
    /// a parameter is out of its range (see [`VhacdParameters`]).
    pub fn convex_decomposition_from_mesh_with_config(
        mesh: &Mesh,
        parameters: &VhacdParameters,
    ) -> Option<Collider> {
        decomposition_collider(mesh, Vector::ONE, parameters).ok()
    }
}

/// How V-HACD fills the voxelised mesh before splitting it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Debug, PartialEq, Clone)]
pub enum VhacdFillMode {
    /// Only the voxels the surface passes through: for open or non-watertight meshes.
    SurfaceOnly,
    /// The surface and everything inside it (found by flood fill from outside): for closed
    /// meshes. With `detect_cavities`, hollows closed off inside the mesh stay empty.
    FloodFill {
        /// Keep enclosed cavities empty.
        detect_cavities: bool,
    },
}

/// Parameters of the V-HACD convex decomposition (Mamou, "Volumetric Hierarchical Approximate
/// Convex Decomposition", Game Engine Gems 3, 2016), as implemented by parry. The defaults are
/// parry's.
#[derive(Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Debug, PartialEq, Clone, Default)]
pub struct VhacdParameters {
    /// Largest concavity a part may keep, in `[0, 1]` (a fraction of the mesh's size); lower
    /// gives more, tighter parts. Default 0.01.
    pub concavity: Scalar,
    /// Bias towards cutting along symmetry planes, in `[0, 1]`. Default 0.05.
    pub alpha: Scalar,
    /// Bias towards cutting along revolution axes, in `[0, 1]`. Default 0.05.
    pub beta: Scalar,
    /// Voxels along the mesh's longest side, 2 to 256: more resolves finer features and takes
    /// longer (memory grows with its cube). Default 64.
    pub resolution: u32,
    /// Cutting planes tried: every `plane_downsampling`-th one first, ≥ 1. Default 4.
    pub plane_downsampling: u32,
    /// Voxels used for the hulls while cutting: every `convex_hull_downsampling`-th, ≥ 1.
    /// Default 4.
    pub convex_hull_downsampling: u32,
    /// How the voxels are filled. Default flood fill without cavities.
    pub fill_mode: VhacdFillMode,
    /// Approximate hulls while cutting (faster). Default true.
    pub convex_hull_approximation: bool,
    /// Most parts, ≥ 1. Default 1024.
    pub max_convex_hulls: u32,
}

impl Default for VhacdParameters {
    fn default() -> Self {
        let p = VHACDParameters::default();
        Self {
            concavity: p.concavity,
            alpha: p.alpha,
            beta: p.beta,
            resolution: p.resolution,
            plane_downsampling: p.plane_downsampling,
            convex_hull_downsampling: p.convex_hull_downsampling,
            fill_mode: match p.fill_mode {
                FillMode::SurfaceOnly => VhacdFillMode::SurfaceOnly,
                FillMode::FloodFill {
                    detect_cavities, ..
                } => VhacdFillMode::FloodFill { detect_cavities },
            },
            convex_hull_approximation: p.convex_hull_approximation,
            max_convex_hulls: p.max_convex_hulls,
        }
    }
}

impl VhacdParameters {
    /// Largest [`resolution`](Self::resolution) accepted: memory and time grow with its cube,
    /// and 512³ voxels need gigabytes.
    pub const MAX_RESOLUTION: u32 = 256;

    /// parry's parameters, or why these cannot be used.
    fn to_parry(self) -> Result<VHACDParameters, String> {
        let unit = |v: Scalar| (0.0..=1.0).contains(&v);
        if !unit(self.concavity) || !unit(self.alpha) || !unit(self.beta) {
            return Err(format!(
                "V-HACD concavity {}, alpha {} and beta {} must be in [0, 1]",
                self.concavity, self.alpha, self.beta
            ));
        }
        if !(2..=Self::MAX_RESOLUTION).contains(&self.resolution) {
            return Err(format!(
                "V-HACD resolution {} is not in [2, {}]",
                self.resolution,
                Self::MAX_RESOLUTION
            ));
        }
        if self.plane_downsampling == 0
            || self.convex_hull_downsampling == 0
            || self.max_convex_hulls == 0
        {
            return Err(
                "V-HACD downsampling factors and max_convex_hulls must be at least 1".to_string(),
            );
        }
        Ok(VHACDParameters {
            concavity: self.concavity,
            alpha: self.alpha,
            beta: self.beta,
            resolution: self.resolution,
            plane_downsampling: self.plane_downsampling,
            convex_hull_downsampling: self.convex_hull_downsampling,
            fill_mode: match self.fill_mode {
                VhacdFillMode::SurfaceOnly => FillMode::SurfaceOnly,
                VhacdFillMode::FloodFill { detect_cavities } => {
                    FillMode::FloodFill { detect_cavities }
                }
            },
            convex_hull_approximation: self.convex_hull_approximation,
            max_convex_hulls: self.max_convex_hulls,
        })
    }
}

/// Builds a [`Collider`] on its entity, then removes itself and triggers
/// [`ColliderConstructorReady`] on the entity.
///
/// The `…FromMesh` variants wait until the entity's [`Mesh3d`] asset is loaded (in
/// `Assets<Mesh>`), checking at the start of every frame (`PreUpdate`); the others build at
/// once. The collider replaces any the entity had. If it cannot be built (no `Mesh3d`, a mesh
/// that failed to load or has no usable triangles, bad sizes), a warning names the entity and
/// the reason, the constructor is removed and no collider is added.
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// fn spawn_rock(mut commands: Commands, assets: Res<AssetServer>) {
///     commands.spawn((
///         RigidBody::Dynamic,
///         Mesh3d(assets.load("rock.glb#Mesh0/Primitive0")),
///         ColliderConstructor::ConvexHullFromMesh,
///         Transform::from_xyz(0.0, 5.0, 0.0),
///     ));
/// }
/// # bevy::ecs::system::assert_is_system(spawn_rock);
/// ```
#[derive(Component, Clone, Debug, PartialEq, Reflect)]
#[reflect(Component, Debug, PartialEq, Clone)]
pub enum ColliderConstructor {
    /// [`Collider::sphere`].
    Sphere {
        /// Radius, m.
        radius: Scalar,
    },
    /// [`Collider::cuboid`], full side lengths.
    Cuboid {
        /// Length along X, m.
        x_length: Scalar,
        /// Length along Y, m.
        y_length: Scalar,
        /// Length along Z, m.
        z_length: Scalar,
    },
    /// [`Collider::capsule`].
    Capsule {
        /// Radius, m.
        radius: Scalar,
        /// Length of the cylindrical part, m.
        length: Scalar,
    },
    /// [`Collider::cylinder`].
    Cylinder {
        /// Radius, m.
        radius: Scalar,
        /// Full height, m.
        height: Scalar,
    },
    /// [`Collider::convex_hull`] of the points.
    ConvexHull {
        /// The points.
        points: Vec<Vector>,
    },
    /// [`Collider::trimesh`].
    Trimesh {
        /// Vertex positions.
        vertices: Vec<Vector>,
        /// Triangles, as index triples.
        indices: Vec<[u32; 3]>,
    },
    /// [`Collider::heightfield`].
    Heightfield {
        /// Rows of samples (see [`Collider::heightfield`]).
        heights: Vec<Vec<Scalar>>,
        /// Size of the field along X and Z, and height scale.
        scale: Vector,
    },
    /// [`Collider::trimesh_from_mesh`] of the entity's [`Mesh3d`].
    TrimeshFromMesh,
    /// [`Collider::convex_hull_from_mesh`] of the entity's [`Mesh3d`].
    ConvexHullFromMesh,
    /// [`Collider::convex_decomposition_from_mesh`] of the entity's [`Mesh3d`].
    ConvexDecompositionFromMesh,
    /// [`Collider::convex_decomposition_from_mesh_with_config`] of the entity's [`Mesh3d`].
    ConvexDecompositionFromMeshWithConfig(VhacdParameters),
}

impl ColliderConstructor {
    /// True for the variants built from the entity's [`Mesh3d`].
    pub fn requires_mesh(&self) -> bool {
        matches!(
            self,
            Self::TrimeshFromMesh
                | Self::ConvexHullFromMesh
                | Self::ConvexDecompositionFromMesh
                | Self::ConvexDecompositionFromMeshWithConfig(_)
        )
    }

    /// The collider this describes: from `mesh` at `scale` for the mesh variants (`None` if
    /// there is no mesh), or why it cannot be built.
    pub fn build(&self, mesh: Option<&Mesh>, scale: Vector) -> Result<Collider, String> {
        let valid = |collider: Collider| match collider.validate() {
            Some(reason) => Err(reason),
            None => Ok(collider),
        };
        let need_mesh = || mesh.ok_or_else(|| "it needs a mesh".to_string());
        match self {
            Self::Sphere { radius } => valid(Collider::sphere(*radius)),
            Self::Cuboid {
                x_length,
                y_length,
                z_length,
            } => valid(Collider::cuboid(*x_length, *y_length, *z_length)),
            Self::Capsule { radius, length } => valid(Collider::capsule(*radius, *length)),
            Self::Cylinder { radius, height } => valid(Collider::cylinder(*radius, *height)),
            Self::ConvexHull { points } => Collider::convex_hull(points.clone())
                .ok_or_else(|| "its points are degenerate or not finite".to_string()),
            Self::Trimesh { vertices, indices } => {
                let count = vertices.len();
                if let Some(bad) = indices.iter().flatten().find(|&&i| i as usize >= count) {
                    return Err(format!("index {bad} is out of range for {count} vertices"));
                }
                if vertices.iter().any(|v| !v.is_finite()) {
                    return Err("a vertex is not finite".to_string());
                }
                valid(Collider::trimesh(vertices.clone(), indices.clone()))
            }
            Self::Heightfield { heights, scale } => {
                valid(Collider::heightfield(heights.clone(), *scale))
            }
            Self::TrimeshFromMesh => trimesh_collider(need_mesh()?, scale),
            Self::ConvexHullFromMesh => convex_hull_collider(need_mesh()?, scale),
            Self::ConvexDecompositionFromMesh => {
                decomposition_collider(need_mesh()?, scale, &VhacdParameters::default())
            }
            Self::ConvexDecompositionFromMeshWithConfig(parameters) => {
                decomposition_collider(need_mesh()?, scale, parameters)
            }
        }
    }
}

/// Triggered on an entity when its [`ColliderConstructor`] has built its [`Collider`].
#[derive(EntityEvent, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColliderConstructorReady {
    /// The entity that got the collider.
    pub entity: Entity,
}

/// Gives every descendant with a [`Mesh3d`] a [`ColliderConstructor`] (with a density and
/// collision layers if set), then removes itself: the way to give a loaded glTF scene its
/// colliders.
///
/// On an entity with a `WorldAssetRoot` (or `DynamicWorldRoot`) it waits until the scene has
/// spawned under it (`WorldInstanceReady`); on any other entity it acts on the descendants it
/// has at the start of the next frame. A descendant that already has a [`Collider`] or a
/// [`ColliderConstructor`] keeps it. The descendants are matched by [`Name`] against
/// [`config`](Self::config), the mesh entity's own name first and then its ancestors' up to this
/// entity (a glTF mesh primitive is a child of the node that carries the name you gave it).
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use bevy::world_serialization::WorldAssetRoot;
/// # use impetus3d::prelude::*;
/// fn spawn_level(mut commands: Commands, assets: Res<AssetServer>) {
///     commands.spawn((
///         WorldAssetRoot(assets.load("level.glb#Scene0")),
///         RigidBody::Static,
///         ColliderConstructorHierarchy::new(ColliderConstructor::TrimeshFromMesh)
///             // The crates in the level are boxes...
///             .with_constructor_for_name("Crate", ColliderConstructor::ConvexHullFromMesh)
///             // ...and the grass has no collider.
///             .without_constructor_for_name("Grass"),
///     ));
/// }
/// # bevy::ecs::system::assert_is_system(spawn_level);
/// ```
#[derive(Component, Clone, Debug, Default, PartialEq, Reflect)]
#[reflect(Component, Debug, Default, PartialEq, Clone)]
pub struct ColliderConstructorHierarchy {
    /// The constructor for mesh entities not named in [`config`](Self::config) (and for named
    /// ones whose entry has no constructor). `None`: only the named ones get colliders.
    pub default_constructor: Option<ColliderConstructor>,
    /// The collision layers for the colliders unless an entry sets them; `None` leaves the
    /// default (all).
    pub default_layers: Option<CollisionLayers>,
    /// The density for the colliders unless an entry sets it, kg/m³; `None` leaves the
    /// default.
    pub default_density: Option<Scalar>,
    /// Overrides by [`Name`]: `Some(config)` to change what that entity gets, `None` for no
    /// collider.
    pub config: HashMap<String, Option<ColliderConstructorHierarchyConfig>>,
}

/// What one named part of a [`ColliderConstructorHierarchy`] gets; `None` fields fall back to
/// the hierarchy's defaults.
#[derive(Clone, Debug, Default, PartialEq, Reflect)]
#[reflect(Debug, Default, PartialEq, Clone)]
pub struct ColliderConstructorHierarchyConfig {
    /// The constructor, or `None` for the hierarchy's default.
    pub constructor: Option<ColliderConstructor>,
    /// The collision layers, or `None` for the hierarchy's default.
    pub layers: Option<CollisionLayers>,
    /// The density, kg/m³, or `None` for the hierarchy's default.
    pub density: Option<Scalar>,
}

impl ColliderConstructorHierarchy {
    /// Every mesh below gets `default_constructor` (`None`: only the names configured later).
    pub fn new(default_constructor: impl Into<Option<ColliderConstructor>>) -> Self {
        Self {
            default_constructor: default_constructor.into(),
            ..default()
        }
    }

    /// Sets the default collision layers.
    pub fn with_default_layers(mut self, layers: CollisionLayers) -> Self {
        self.default_layers = Some(layers);
        self
    }

    /// Sets the default density, kg/m³.
    pub fn with_default_density(mut self, density: Scalar) -> Self {
        self.default_density = Some(density);
        self
    }

    /// The part named `name` gets `constructor`.
    pub fn with_constructor_for_name(
        self,
        name: impl Into<String>,
        constructor: ColliderConstructor,
    ) -> Self {
        self.with_config_for_name(
            name,
            ColliderConstructorHierarchyConfig {
                constructor: Some(constructor),
                ..default()
            },
        )
    }

    /// The part named `name` gets `config`.
    pub fn with_config_for_name(
        mut self,
        name: impl Into<String>,
        config: ColliderConstructorHierarchyConfig,
    ) -> Self {
        self.config.insert(name.into(), Some(config));
        self
    }

    /// The part named `name` gets density `density`, kg/m³, with the rest of its entry kept
    /// (a part listed with no collider gets one again, from the default constructor).
    pub fn with_density_for_name(mut self, name: impl Into<String>, density: Scalar) -> Self {
        self.entry(name).density = Some(density);
        self
    }

    /// The part named `name` gets collision layers `layers`, with the rest of its entry kept
    /// (a part listed with no collider gets one again, from the default constructor).
    pub fn with_layers_for_name(
        mut self,
        name: impl Into<String>,
        layers: CollisionLayers,
    ) -> Self {
        self.entry(name).layers = Some(layers);
        self
    }

    /// The entry of the part named `name`, made if missing.
    fn entry(&mut self, name: impl Into<String>) -> &mut ColliderConstructorHierarchyConfig {
        let entry = self.config.entry(name.into()).or_default();
        entry.get_or_insert_default()
    }

    /// The part named `name` gets no collider.
    pub fn without_constructor_for_name(mut self, name: impl Into<String>) -> Self {
        self.config.insert(name.into(), None);
        self
    }
}

/// `entity` and its name, for warnings.
fn describe(entity: Entity, name: Option<&Name>) -> String {
    match name {
        Some(name) => format!("{entity} (\"{name}\")"),
        None => entity.to_string(),
    }
}

/// The world scale of `entity`: from the composition of the `Transform`s from it up to the
/// root.
fn world_scale(entity: Entity, links: &Query<(Option<&ChildOf>, Option<&Transform>)>) -> Vector {
    let parent = crate::body::sync::parent_affine_in(entity, links);
    let own = links
        .get(entity)
        .ok()
        .and_then(|(_, t)| t.copied())
        .unwrap_or_default();
    let affine: Affine3A = parent * own.compute_affine();
    affine.to_scale_rotation_translation().0
}

/// Builds the colliders of [`ColliderConstructor`]s whose inputs are ready.
#[allow(clippy::type_complexity)]
fn build_colliders(
    mut commands: Commands,
    meshes: Option<Res<Assets<Mesh>>>,
    asset_server: Option<Res<AssetServer>>,
    constructors: Query<(Entity, &ColliderConstructor, Option<&Mesh3d>, Option<&Name>)>,
    links: Query<(Option<&ChildOf>, Option<&Transform>)>,
) {
    for (entity, constructor, mesh3d, name) in &constructors {
        let result = if constructor.requires_mesh() {
            let Some(mesh3d) = mesh3d else {
                warn!(
                    "{}: {constructor:?} needs a Mesh3d on the same entity; no collider built",
                    describe(entity, name)
                );
                commands.entity(entity).remove::<ColliderConstructor>();
                continue;
            };
            let Some(meshes) = meshes.as_deref() else {
                warn!(
                    "{}: {constructor:?} needs Assets<Mesh> (add AssetPlugin and the mesh \
                     asset); no collider built",
                    describe(entity, name)
                );
                commands.entity(entity).remove::<ColliderConstructor>();
                continue;
            };
            match meshes.get(&mesh3d.0) {
                Some(mesh) => constructor.build(Some(mesh), world_scale(entity, &links)),
                None => {
                    let failed = asset_server
                        .as_deref()
                        .is_some_and(|server| server.load_state(mesh3d.0.id()).is_failed());
                    if !failed {
                        continue; // Still loading.
                    }
                    Err("its mesh failed to load".to_string())
                }
            }
        } else {
            constructor.build(None, Vector::ONE)
        };
        let mut e = commands.entity(entity);
        e.remove::<ColliderConstructor>();
        match result {
            Ok(collider) => {
                e.insert(collider);
                commands.trigger(ColliderConstructorReady { entity });
            }
            Err(reason) => warn!(
                "{}: {constructor:?} built no collider because {reason}",
                describe(entity, name)
            ),
        }
    }
}

/// Hierarchy queries: children, and what a descendant has.
type Nodes<'w, 's> = Query<
    'w,
    's,
    (
        Option<&'static Children>,
        Option<&'static Name>,
        Has<Mesh3d>,
        Has<Collider>,
        Has<ColliderConstructor>,
        Option<&'static ChildOf>,
    ),
>;

/// Triggered on the entity of a [`ColliderConstructorHierarchy`] when every part it gave a
/// [`ColliderConstructor`] has been through it (built its collider, or failed with a warning),
/// or at once if it gave none: from then on the hierarchy's colliders are in place.
#[derive(EntityEvent, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColliderConstructorHierarchyReady {
    /// The entity that held the [`ColliderConstructorHierarchy`].
    pub entity: Entity,
}

/// The parts a hierarchy gave constructors to that have not yet built.
#[derive(Component)]
struct PendingParts(Vec<Entity>);

/// Gives `root`'s mesh descendants their constructors and removes the hierarchy component.
fn apply_hierarchy(
    commands: &mut Commands,
    root: Entity,
    hierarchy: &ColliderConstructorHierarchy,
    nodes: &Nodes,
) {
    let mut pending = Vec::new();
    commands
        .entity(root)
        .remove::<ColliderConstructorHierarchy>();
    let mut stack: Vec<Entity> = nodes
        .get(root)
        .ok()
        .and_then(|(children, ..)| children)
        .map(|c| c.iter().collect())
        .unwrap_or_default();
    let mut seen = EntityHashSet::default();
    while let Some(entity) = stack.pop() {
        if !seen.insert(entity) {
            continue;
        }
        let Ok((children, _, has_mesh, has_collider, has_constructor, _)) = nodes.get(entity)
        else {
            continue;
        };
        stack.extend(children.into_iter().flatten());
        if !has_mesh || has_collider || has_constructor {
            continue;
        }
        // The nearest configured name, from the entity up to (not including) the root.
        let mut entry = None;
        let mut current = Some(entity);
        for _ in 0..64 {
            let Some(e) = current.filter(|&e| e != root) else {
                break;
            };
            let Ok((_, name, .., parent)) = nodes.get(e) else {
                break;
            };
            if let Some(found) = name.and_then(|n| hierarchy.config.get(n.as_str())) {
                entry = Some(found);
                break;
            }
            current = parent.map(ChildOf::parent);
        }
        let (constructor, layers, density) = match entry {
            Some(None) => continue,
            Some(Some(config)) => (
                config
                    .constructor
                    .clone()
                    .or_else(|| hierarchy.default_constructor.clone()),
                config.layers.or(hierarchy.default_layers),
                config.density.or(hierarchy.default_density),
            ),
            None => (
                hierarchy.default_constructor.clone(),
                hierarchy.default_layers,
                hierarchy.default_density,
            ),
        };
        let Some(constructor) = constructor else {
            continue;
        };
        let mut e = commands.entity(entity);
        e.insert(constructor);
        if let Some(layers) = layers {
            e.insert(layers);
        }
        if let Some(density) = density {
            e.insert(ColliderDensity(density));
        }
        pending.push(entity);
    }
    commands.entity(root).insert(PendingParts(pending));
}

/// Reports the hierarchies whose parts have all been through their constructors.
fn report_ready_hierarchies(
    mut commands: Commands,
    mut roots: Query<(Entity, &mut PendingParts)>,
    constructors: Query<(), With<ColliderConstructor>>,
) {
    for (root, mut pending) in &mut roots {
        pending.0.retain(|&part| constructors.contains(part));
        if pending.0.is_empty() {
            commands.entity(root).remove::<PendingParts>();
            commands.trigger(ColliderConstructorHierarchyReady { entity: root });
        }
    }
}

/// Applies hierarchies whose scene has spawned, or that have no scene.
#[allow(clippy::type_complexity)]
fn apply_ready_hierarchies(
    mut commands: Commands,
    hierarchies: Query<(
        Entity,
        &ColliderConstructorHierarchy,
        Option<&WorldInstance>,
        Has<WorldAssetRoot>,
        Has<DynamicWorldRoot>,
    )>,
    spawner: Option<Res<WorldInstanceSpawner>>,
    nodes: Nodes,
) {
    for (entity, hierarchy, instance, world_root, dynamic_root) in &hierarchies {
        if world_root || dynamic_root {
            let ready = match (instance, spawner.as_deref()) {
                (Some(instance), Some(spawner)) => spawner.instance_is_ready(**instance),
                _ => false,
            };
            if !ready {
                continue;
            }
        }
        apply_hierarchy(&mut commands, entity, hierarchy, &nodes);
    }
}

/// Applies a hierarchy as soon as its scene has spawned.
fn apply_hierarchy_on_ready(
    ready: On<WorldInstanceReady>,
    mut commands: Commands,
    hierarchies: Query<&ColliderConstructorHierarchy>,
    nodes: Nodes,
) {
    if let Ok(hierarchy) = hierarchies.get(ready.entity) {
        apply_hierarchy(&mut commands, ready.entity, hierarchy, &nodes);
    }
}

/// Runs [`ColliderConstructor`]s and [`ColliderConstructorHierarchy`]s in `PreUpdate`, and
/// hierarchies on scenes as soon as they spawn. Added by [`PhysicsPlugins`](crate::PhysicsPlugins)
/// when the `collider-from-mesh` feature is on.
pub struct ColliderConstructorPlugin;

impl Plugin for ColliderConstructorPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<ColliderConstructor>()
            .register_type::<ColliderConstructorHierarchy>()
            .register_type::<ColliderConstructorHierarchyConfig>()
            .register_type::<VhacdParameters>()
            .add_observer(apply_hierarchy_on_ready)
            .add_systems(
                PreUpdate,
                (
                    apply_ready_hierarchies,
                    build_colliders,
                    report_ready_hierarchies,
                )
                    .chain()
                    .in_set(ColliderConstructorSystems),
            );
    }
}

/// The `PreUpdate` systems that turn [`ColliderConstructor`]s and
/// [`ColliderConstructorHierarchy`]s into colliders, for ordering your own systems.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ColliderConstructorSystems;

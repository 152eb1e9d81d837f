//! The target of a run as the engine executes it: one kind's target type with its own
//! settings, read and checked by the kind (`Kind::plan`), stored as `{"KIND": settings}`
//! (`"KIND"` alone for a kind without settings).

use std::any::Any;
use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Target;
use super::kind::TargetKind;

/// The target of a validated campaign: a kind's own target type behind [`Target`].
pub struct TargetPlan(Box<dyn Target>);

/// What every kind's target type is besides a [`Target`]: cloned, compared and stored as a
/// plan, and found again by its type. Every `Clone + PartialEq + Serialize` target has it.
pub trait PlanParts: Any + Send + Sync + std::fmt::Debug {
    /// A copy, boxed.
    fn boxed_clone(&self) -> Box<dyn Target>;
    /// Its settings as the plan's serialisation stores them (null for a target without any),
    /// or why they cannot be (a path that is not UTF-8).
    fn stored_settings(&self) -> Result<serde_json::Value, serde_json::Error>;
    /// Itself, to be found by its type.
    fn as_any(&self) -> &dyn Any;
    /// Itself, to be changed in place by its type.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// Whether `other` is the same target with the same settings.
    fn same_as(&self, other: &dyn Target) -> bool;
}

impl<T> PlanParts for T
where
    T: Target + Clone + PartialEq + Serialize + Send + Sync + std::fmt::Debug + 'static,
{
    fn boxed_clone(&self) -> Box<dyn Target> {
        Box::new(self.clone())
    }

    fn stored_settings(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::to_value(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn same_as(&self, other: &dyn Target) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
}

impl TargetPlan {
    /// A plan of a kind's target.
    pub fn new(target: impl Target + 'static) -> Self {
        Self(Box::new(target))
    }

    /// The target behind this plan.
    pub fn target(&self) -> &dyn Target {
        self.0.as_ref()
    }

    /// The kind's own target type, when the plan is of that kind.
    pub fn of_type<T: Target + 'static>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref::<T>()
    }

    /// [`TargetPlan::of_type`], to change in place.
    pub fn of_type_mut<T: Target + 'static>(&mut self) -> Option<&mut T> {
        self.0.as_any_mut().downcast_mut::<T>()
    }

    /// The path the target writes on the lab's host, to resolve in place.
    pub fn path_mut(&mut self) -> Option<&mut PathBuf> {
        self.0.path_mut()
    }
}

impl Clone for TargetPlan {
    fn clone(&self) -> Self {
        Self(self.0.boxed_clone())
    }
}

impl PartialEq for TargetPlan {
    fn eq(&self, other: &Self) -> bool {
        self.0.same_as(other.0.as_ref())
    }
}

impl std::fmt::Debug for TargetPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({:?})", self.0.facts().id, self.0)
    }
}

impl Serialize for TargetPlan {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let id = self.0.facts().id;
        use serde::ser::Error;
        match self.0.stored_settings().map_err(S::Error::custom)? {
            serde_json::Value::Null => serializer.serialize_str(id),
            settings => {
                use serde::ser::SerializeMap;
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry(id, &settings)?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for TargetPlan {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let (id, settings) = match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(id) => (id, serde_json::Value::Null),
            serde_json::Value::Object(map) if map.len() == 1 => map
                .into_iter()
                .next()
                .ok_or_else(|| D::Error::custom("no target"))?,
            other => return Err(D::Error::custom(format!("not a target plan: {other}"))),
        };
        if id == super::file::FACTS.id {
            return super::kind::stored_as::<super::file::FileTarget>(settings)
                .map_err(D::Error::custom);
        }
        let kind = TargetKind::from_id(&id)
            .ok_or_else(|| D::Error::custom(format!("unknown target kind {id}")))?;
        kind.as_kind().stored(settings).map_err(D::Error::custom)
    }
}

//! A kind of target as a spec names it, before its settings are read: what it is, how it
//! reads its settings into a plan, how its settings are described and typed in. Each kind's
//! module has one [`Kind`]; [`super::KINDS`] lists them, and [`TargetKind`] is one of them.

use std::borrow::Cow;
use std::path::Path;
use std::sync::LazyLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{RefOr, schema};

use super::{KindFacts, Settings, TargetPlan};
use crate::field_errors::FieldErrors;
use crate::size::ByteSize;

/// One kind of target: the questions the rest of the lab asks of a kind before it has a plan.
/// A new kind is a module with its `Target`, its `Sink` and this, and one line in
/// [`super::KINDS`].
pub trait Kind: Sync {
    /// What the kind is, whatever its settings.
    fn facts(&self) -> &'static KindFacts;
    /// A spec's target of this kind as the engine runs it, or `None` with every problem
    /// recorded in `errors` under `target.…`.
    fn plan(
        &self,
        path: Option<&Path>,
        settings: &Settings,
        errors: &mut FieldErrors,
    ) -> Option<TargetPlan>;
    /// A plan of this kind as [`TargetPlan`]'s serialisation stored it.
    fn stored(&self, value: serde_json::Value) -> Result<TargetPlan, serde_json::Error>;
    /// The kind's settings type as the OpenAPI document describes it; `None` for a kind
    /// without settings.
    fn settings_type(&self) -> Option<SettingsType> {
        None
    }
    /// The settings a person types in for this kind (the new-campaign form's fields), in the
    /// order they are shown.
    fn typed_fields(&self) -> &'static [TypedField] {
        &[]
    }
    /// The kind's settings read from what a person typed, into the kind's own settings type:
    /// a text that cannot be read is recorded and left out, so the kind's checks still run.
    fn settings_from_text(&self, text: &mut dyn SettingsText) -> Settings {
        let _ = text;
        Settings::new()
    }
}

/// A kind's settings type as the OpenAPI document describes it: its schema, and the schemas
/// that schema refers to.
#[derive(Clone, Copy)]
pub struct SettingsType {
    /// The settings type's own schema: a target's properties are every kind's together.
    pub schema: fn() -> RefOr<Schema>,
    /// Puts the schemas it refers to among the document's components.
    pub parts: fn(&mut Vec<(String, RefOr<Schema>)>),
}

impl SettingsType {
    /// A settings type as it derives its schema.
    pub fn of<T: utoipa::ToSchema>() -> Self {
        Self {
            schema: T::schema,
            parts: T::schemas,
        }
    }
}

/// One setting a person types in: its name in a spec, its label, how it is entered, and
/// what a new campaign starts with.
#[derive(Debug, Clone, Copy)]
pub struct TypedField {
    /// The setting's name in a spec (`drives`); its form field is `KIND_SETTING`.
    pub setting: &'static str,
    /// What the field says it is.
    pub label: &'static str,
    /// How it is entered.
    pub input: FieldInput,
    /// Its text in a new campaign's form.
    pub default: &'static str,
}

/// How a typed-in setting is entered.
#[derive(Debug, Clone, Copy)]
pub enum FieldInput {
    /// A whole number.
    Count,
    /// A number with decimals.
    Number,
    /// Bytes, or a number with K, M, G or T.
    Size,
    /// Free text.
    Text,
    /// One of a list: (value, label) pairs.
    Choice(fn() -> Vec<(&'static str, String)>),
}

/// A kind's settings as a person typed them, each read into the type the setting has. A text
/// that cannot be read is recorded under `target.NAME` by whoever gives the text (the form,
/// in its own words) and read as `None`.
pub trait SettingsText {
    /// A whole number.
    fn count(&mut self, setting: &str) -> Option<u32>;
    /// A number with decimals.
    fn number(&mut self, setting: &str) -> Option<f64>;
    /// A size.
    fn size(&mut self, setting: &str) -> Option<ByteSize>;
    /// The text itself, trimmed, as typed: empty when nothing was, so a required text
    /// setting is named by the kind's own check.
    fn text(&mut self, setting: &str) -> Option<String>;
}

/// A kind's settings type as the spec's JSON gives it: the fields that are set.
pub fn settings_of<T: Serialize>(settings: &T) -> Settings {
    match serde_json::to_value(settings) {
        Ok(serde_json::Value::Object(map)) => map
            .into_iter()
            .filter(|(_, value)| !value.is_null())
            .collect(),
        _ => Settings::new(),
    }
}

/// A plan of one kind read back from its stored form: the kind's own target type.
pub fn stored_as<T>(value: serde_json::Value) -> Result<TargetPlan, serde_json::Error>
where
    T: super::Target + serde::de::DeserializeOwned + 'static,
{
    serde_json::from_value::<T>(value).map(TargetPlan::new)
}

/// A kind of target a campaign may name: one of [`super::KINDS`].
#[derive(Clone, Copy)]
pub struct TargetKind(&'static dyn Kind);

impl TargetKind {
    /// A kind by its own [`Kind`].
    pub fn of(kind: &'static dyn Kind) -> TargetKind {
        TargetKind(kind)
    }

    /// Every kind, in the order forms and help list them.
    pub fn all() -> impl Iterator<Item = TargetKind> {
        super::KINDS.iter().map(|kind| TargetKind(*kind))
    }

    /// What the kind is, from its own module.
    pub fn facts(self) -> &'static KindFacts {
        self.0.facts()
    }

    /// The kind as a spec names it.
    pub fn id(self) -> &'static str {
        self.facts().id
    }

    /// The kind a spec names, if it is one.
    pub fn from_id(id: &str) -> Option<TargetKind> {
        TargetKind::all().find(|kind| kind.id() == id)
    }

    /// A spec's target of this kind as the engine runs it, or `None` with every problem
    /// recorded in `errors` under `target.…`.
    pub fn plan(
        self,
        path: Option<&Path>,
        settings: &Settings,
        errors: &mut FieldErrors,
    ) -> Option<TargetPlan> {
        self.0.plan(path, settings, errors)
    }

    /// The kind that writes nothing: a stand-in where a kind cannot be read, so the other
    /// checks still run.
    pub fn discard() -> TargetKind {
        TargetKind(&super::null::Null)
    }

    /// The kind's own questions.
    pub fn as_kind(self) -> &'static dyn Kind {
        self.0
    }
}

impl PartialEq for TargetKind {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}

impl Eq for TargetKind {}

impl std::fmt::Debug for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// Every kind's id, for serde's "expected one of" (it takes a list that lives for ever).
static IDS: LazyLock<&'static [&'static str]> = LazyLock::new(|| {
    Box::leak(
        TargetKind::all()
            .map(TargetKind::id)
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    )
});

impl Serialize for TargetKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

impl<'de> Deserialize<'de> for TargetKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = Cow::<'de, str>::deserialize(deserializer)?;
        TargetKind::from_id(&id).ok_or_else(|| serde::de::Error::unknown_variant(&id, *IDS))
    }
}

/// What the OpenAPI document says of a kind.
const DESCRIPTION: &str = "The kinds of target a campaign may name, each with its own settings.";

impl utoipa::PartialSchema for TargetKind {
    fn schema() -> RefOr<Schema> {
        let ids: Vec<&str> = TargetKind::all().map(TargetKind::id).collect();
        ObjectBuilder::new()
            .schema_type(SchemaType::new(Type::String))
            .description(Some(DESCRIPTION))
            .enum_values(Some(ids))
            .into()
    }
}

impl utoipa::ToSchema for TargetKind {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("TargetKind")
    }
}

/// Every kind's settings type as the OpenAPI document describes it: a target's properties
/// are theirs together.
pub fn settings_schemas() -> Vec<RefOr<Schema>> {
    super::KINDS
        .iter()
        .filter_map(|kind| kind.settings_type())
        .map(|settings| (settings.schema)())
        .collect()
}

/// The schemas every kind's settings type refers to, for the OpenAPI document's components.
pub fn settings_schema_parts(schemas: &mut Vec<(String, RefOr<schema::Schema>)>) {
    for settings in super::KINDS.iter().filter_map(|kind| kind.settings_type()) {
        (settings.parts)(schemas);
    }
}

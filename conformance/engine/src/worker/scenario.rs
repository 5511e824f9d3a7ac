//! A simulated target's runtime state as a unit names it: a built-in scenario, or a model from
//! elsewhere (a replayed file, a generated case).

use ompd_checks as checks;
use serde::{Deserialize, Serialize};

/// A simulated target's runtime state, resolved when the unit is planned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scenario {
    /// A built-in scenario (`sim_target::model::scenario`), its model rebuilt by the worker.
    BuiltIn(ScenarioName),
    /// A model from elsewhere, with the name reports give it: a replayed file (`replay:NAME`)
    /// or a generated case.
    Model {
        /// The name reports give it.
        name: String,
        /// The runtime state.
        model: Box<sim_target::model::Model>,
    },
}

impl Scenario {
    /// The built-in scenario `name`; an unknown name is refused in one line naming the known
    /// ones.
    pub fn built_in(name: &str) -> Result<Scenario, String> {
        ScenarioName::try_from(name.to_string()).map(Scenario::BuiltIn)
    }

    /// The default scenario set (`sim_target::model::scenario_names`), by name.
    pub fn default_set() -> Vec<Scenario> {
        sim_target::model::scenario_names()
            .map(|n| Scenario::BuiltIn(ScenarioName(n.to_string())))
            .collect()
    }

    /// A scenario of `model`, named `name` in reports.
    pub fn model(name: impl Into<String>, model: sim_target::model::Model) -> Scenario {
        Scenario::Model {
            name: name.into(),
            model: Box::new(model),
        }
    }

    /// The name reports give it.
    pub fn name(&self) -> &str {
        match self {
            Scenario::BuiltIn(n) => &n.0,
            Scenario::Model { name, .. } => name,
        }
    }

    /// True when it runs check `check`: a built-in runtime variant runs only the checks that
    /// judge it (`ompd_checks::variants`); every other scenario runs all.
    pub fn judges(&self, check: &str) -> bool {
        match self {
            Scenario::BuiltIn(n) => {
                sim_target::model::variant(&n.0).is_none_or(|v| checks::variants::judges(v, check))
            }
            Scenario::Model { .. } => true,
        }
    }

    /// Its runtime state.
    pub fn runtime_state(&self) -> sim_target::model::Model {
        match self {
            Scenario::BuiltIn(n) => n.model(),
            Scenario::Model { model, .. } => (**model).clone(),
        }
    }
}

/// The name of a built-in scenario: only a known name can be made or read from a unit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct ScenarioName(String);

impl TryFrom<String> for ScenarioName {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        if sim_target::model::known_names().any(|n| n == name) {
            return Ok(ScenarioName(name));
        }
        let known: Vec<_> = sim_target::model::known_names().collect();
        Err(format!(
            "unknown scenario `{name}` (known: {})",
            known.join(", ")
        ))
    }
}

impl ScenarioName {
    fn model(&self) -> sim_target::model::Model {
        sim_target::model::scenario(&self.0)
            .expect("a scenario name is checked when it is made or read")
            .model
    }
}

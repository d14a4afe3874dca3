//! Names of nodes and links, as the results and traces spell them.
//!
//! A dumbbell gives every flow two nodes and four access links, named after the flow
//! ("f-3.src", "f-3.src-access"). Held as strings they cost about 300 bytes per flow, a
//! sixth of issue 13's memory budget at 10,000 flows; held as (flow, part) they cost 16 and
//! are spelled out only for the results, a trace, or a lookup by name.

use std::borrow::Cow;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Name {
    /// Given by the scenario, or fixed ("bottleneck").
    Given(Box<str>),
    /// A flow's own node or link: the flow's name, a dot, `part`.
    OfFlow { flow: u32, part: &'static str },
}

impl Name {
    /// The name in full; `flow_name` gives a flow's name by its index.
    pub fn spell<'a>(&'a self, flow_name: impl Fn(u32) -> &'a str) -> Cow<'a, str> {
        match self {
            Name::Given(s) => Cow::Borrowed(s),
            Name::OfFlow { flow, part } => Cow::Owned(format!("{}.{part}", flow_name(*flow))),
        }
    }
}

impl From<String> for Name {
    fn from(s: String) -> Self {
        Name::Given(s.into_boxed_str())
    }
}

impl From<&str> for Name {
    fn from(s: &str) -> Self {
        Name::Given(s.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flows_part_is_spelled_after_the_flow_and_a_given_name_as_given() {
        let flows = ["web-0", "web-1"];
        let of = |i: u32| flows[i as usize];
        assert_eq!(
            Name::OfFlow {
                flow: 1,
                part: "src-access"
            }
            .spell(of),
            "web-1.src-access"
        );
        assert_eq!(Name::from("bottleneck").spell(of), "bottleneck");
        assert!(std::mem::size_of::<Name>() <= 24);
    }
}

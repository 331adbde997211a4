//! Transition rules (`x-kubernetes-validations` rules that use `oldSelf`) on an update: the API server evaluates
//! them with `self` bound to the new value and `oldSelf` to the stored one, at every place where both objects have
//! a value that correlates (k8s.io/apiextensions-apiserver v0.34 `pkg/apiserver/schema/cel/validation.go`,
//! `Validate` → `validateExpressions`: "transition rules are only evaluated if the old value is present", and
//! `validateArray`: only `x-kubernetes-list-type: map` items correlate, by their keys; object properties and map
//! values by name). A failing rule rejects the update (HTTP 422), so a GitOps sync of the new object fails.
//!
//! gpuplan has no API server, but it has the previous out/ (what the GitOps tool applied): the caller pairs each
//! generated object with the one out/ holds under the same path and asks here what the API server would refuse.
//!
//! Differences from the API server: defaults are applied to both objects as at create time (out/ spells its
//! defaults out anyway); an object whose apiVersion or kind changed is not compared (the API server converts
//! versions first); rules with `optionalOldSelf: true` are not evaluated (none of the embedded CRDs has one).

use serde_json::Value;

use super::schema::{self, Structural};
use super::{Validator, Violation, cel, push_token};

impl Validator {
    /// Whether objects of this kind have transition rules to check (an unknown kind has none).
    pub fn has_transition_rules(&self, api_version: &str, kind: &str) -> bool {
        match self.kinds.get(&(api_version.to_owned(), kind.to_owned())) {
            Some(entry) => entry.structural.as_ref().is_some_and(|st| st.count_transition_rules() > 0),
            None => self.lazy_for(api_version, kind).is_some_and(|crd| crd.has_transition_rules(api_version, kind)),
        }
    }

    /// The violations of the transition rules of `new`'s kind when `old` is the stored object. Empty when the kind
    /// has no schema here, or the two are not the same apiVersion and kind.
    pub fn transition_violations(&self, old: &Value, new: &Value) -> Vec<Violation> {
        let kind_of = |v: &Value| (v["apiVersion"].as_str().map(str::to_owned), v["kind"].as_str().map(str::to_owned));
        let (Some(api_version), Some(kind)) = kind_of(new) else { return Vec::new() };
        if kind_of(old) != (Some(api_version.clone()), Some(kind.clone())) {
            return Vec::new();
        }
        let Some(entry) = self.kinds.get(&(api_version.clone(), kind.clone())) else {
            return self.lazy_for(&api_version, &kind).map_or_else(Vec::new, |crd| crd.transition_violations(old, new));
        };
        let Some(st) = &entry.structural else { return Vec::new() };
        let (mut old, mut new) = (old.clone(), new.clone());
        schema::apply_defaults(st, &mut old);
        schema::apply_defaults(st, &mut new);
        let mut out = Vec::new();
        walk(st, &old, &new, &mut String::new(), &mut out);
        out
    }
}

/// Evaluates the transition rules at this place, then descends into the places where both values correlate.
fn walk(st: &Structural, old: &Value, new: &Value, pointer: &mut String, out: &mut Vec<Violation>) {
    let transitions = &st.cel().transitions;
    if !transitions.is_empty() {
        let bound = cel::Bound::with_old(new, old);
        for rule in transitions {
            let at = format!("{pointer}{}", rule.field_path.clone().unwrap_or_default());
            match cel::evaluate_cel(rule, &bound) {
                cel::Outcome::Pass => {}
                cel::Outcome::Fail => out.push(Violation::new(at, format!("{} (rule: {})", rule.message_for(&bound), rule.rule))),
                cel::Outcome::Error(e) => out.push(Violation::new(at, format!("{} ({e}; rule: {})", rule.message, rule.rule))),
            }
        }
    }
    let len = pointer.len();
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            for (name, child) in &st.properties {
                if let (Some(ov), Some(nv)) = (o.get(name), n.get(name)) {
                    push_token(pointer, name);
                    walk(child, ov, nv, pointer, out);
                    pointer.truncate(len);
                }
            }
            if let Some(a) = &st.additional {
                for (name, nv) in n {
                    if let Some(ov) = o.get(name) {
                        push_token(pointer, name);
                        walk(a, ov, nv, pointer, out);
                        pointer.truncate(len);
                    }
                }
            }
        }
        (Value::Array(o), Value::Array(n)) if !st.list_map_keys.is_empty() => {
            let Some(items) = &st.items else { return };
            let key = |item: &Value| st.list_map_keys.iter().map(|k| item.get(k).cloned().unwrap_or(Value::Null)).collect::<Vec<_>>();
            for (i, nv) in n.iter().enumerate() {
                if let Some(ov) = o.iter().find(|ov| key(ov) == key(nv)) {
                    pointer.push('/');
                    pointer.push_str(&i.to_string());
                    walk(items, ov, nv, pointer, out);
                    pointer.truncate(len);
                }
            }
        }
        // Atomic and set lists do not correlate: the API server evaluates no transition rule below them.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::Validator;
    use serde_json::{Value, json};

    fn node_pool(replicas: Option<u32>) -> Value {
        let mut spec = json!({
            "template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}],
            }},
        });
        if let Some(r) = replicas {
            spec["replicas"] = r.into();
        }
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"}, "spec": spec})
    }

    #[test]
    fn a_node_pool_turned_static_breaks_the_crds_transition_rule() {
        let v = Validator::builtin();
        let found = v.transition_violations(&node_pool(None), &node_pool(Some(2)));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pointer, "/spec");
        assert!(found[0].message.contains("Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes"), "{}", found[0].message);
        assert!(found[0].message.contains("has(self.replicas) == has(oldSelf.replicas)"));
        assert_eq!(v.transition_violations(&node_pool(Some(2)), &node_pool(None)).len(), 1, "static back to dynamic");
    }

    #[test]
    fn a_node_pool_that_stays_static_or_dynamic_passes_every_transition_rule() {
        let v = Validator::builtin();
        assert!(v.transition_violations(&node_pool(Some(2)), &node_pool(Some(0))).is_empty());
        assert!(v.transition_violations(&node_pool(None), &node_pool(None)).is_empty());
    }

    #[test]
    fn a_changed_node_class_kind_breaks_the_node_class_ref_transition_rule() {
        let v = Validator::builtin();
        let mut new = node_pool(None);
        new["spec"]["template"]["spec"]["nodeClassRef"]["kind"] = "NodeClass".into();
        let found = v.transition_violations(&node_pool(None), &new);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pointer, "/spec/template/spec/nodeClassRef");
        assert!(found[0].message.contains("self.kind == oldSelf.kind"), "{}", found[0].message);
    }

    /// kueue.x-k8s.io_localqueues.yaml: `spec.clusterQueue` is immutable (`self == oldSelf`, "field is immutable").
    #[test]
    fn a_local_queue_moved_to_another_cluster_queue_breaks_the_immutable_field_rule() {
        let queue = |cq: &str| json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "q", "namespace": "t"}, "spec": {"clusterQueue": cq}});
        let v = Validator::builtin();
        let found = v.transition_violations(&queue("production"), &queue("research"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pointer, "/spec/clusterQueue");
        assert!(found[0].message.starts_with("field is immutable (rule: self == oldSelf)"), "{}", found[0].message);
        assert!(v.transition_violations(&queue("production"), &queue("production")).is_empty());
    }

    #[test]
    fn only_kinds_with_oldself_rules_have_transition_rules() {
        let v = Validator::builtin();
        assert!(v.has_transition_rules("karpenter.sh/v1", "NodePool"));
        assert!(v.has_transition_rules("kueue.x-k8s.io/v1beta2", "LocalQueue"));
        assert!(!v.has_transition_rules("karpenter.k8s.aws/v1", "EC2NodeClass"));
        assert!(!v.has_transition_rules("v1", "ConfigMap"));
    }

    #[test]
    fn objects_of_another_kind_or_version_are_not_compared() {
        let v = Validator::builtin();
        let mut other = node_pool(Some(1));
        other["apiVersion"] = "karpenter.sh/v1beta1".into();
        assert!(v.transition_violations(&node_pool(None), &other).is_empty());
    }
}

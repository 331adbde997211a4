//! The naming rules of the values a profile writes into generated objects, so that a bad value is an error at the
//! profile (file:line:col) and never a schema error on a generated object (which then only a user's `--templates`
//! override can cause). Each rule cites where it comes from; each returns the reason in words.
//!
//! - Label keys and values, taint keys and values: Kubernetes' label syntax
//!   (<https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set>;
//!   apimachinery `validation.IsQualifiedName` and `IsValidLabelValue`). Taint keys are qualified names and taint
//!   values label values (<https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/>).
//! - Node labels Karpenter refuses: the `karpenter.sh` and `karpenter.k8s.aws` domains and `kubernetes.io/hostname`
//!   (the NodePool CRD's `x-kubernetes-validations` on `spec.template.metadata.labels`, src/crds/karpenter).
//! - Capacity reservation ids: `cr-` and 17 hexadecimal digits, the form of EC2's resource ids
//!   (<https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/resource-ids.html>, "17-character" ids).
//! - IAM role names: 1–64 of `[A-Za-z0-9+=,.@_-]` (<https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html>,
//!   `RoleName`).

use crate::input::excerpt;

/// A name as Kubernetes' label keys and values have it: at most 63 characters, alphanumerics, `-`, `_` and `.`,
/// starting and ending with an alphanumeric (apimachinery's `qualifiedNameFmt`).
fn check_label_name(name: &str, what: &str) -> Result<(), String> {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    if name.len() > 63 {
        return Err(format!("{what} is {} characters, more than 63", name.len()));
    }
    let ends = name.starts_with(alnum) && name.ends_with(alnum);
    if !ends || !name.chars().all(|c| alnum(c) || matches!(c, '-' | '_' | '.')) {
        return Err(format!("{what} must be alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character"));
    }
    Ok(())
}

/// A Kubernetes label key (apimachinery `validation.IsQualifiedName`): an optional prefix — a lowercase DNS
/// subdomain of at most 253 characters — and `/`, then a name of at most 63 characters (`app`,
/// `app.kubernetes.io/name`).
pub fn check_label_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split('/').collect::<Vec<_>>().as_slice() {
        [name] => (None, *name),
        [prefix, name] => (Some(*prefix), *name),
        _ => return Err("a label key has at most one '/' (prefix/name)".into()),
    };
    if let Some(prefix) = prefix
        && check_dns_subdomain(prefix).is_err() {
            return Err(format!("the prefix `{}` must be a lowercase DNS subdomain of at most 253 characters (like example.com)", excerpt(prefix)));
        }
    if name.is_empty() {
        return Err("the name part is empty".into());
    }
    check_label_name(name, "the name part")
}

/// A lowercase DNS subdomain (apimachinery `validation.IsDNS1123Subdomain`, what the API server checks most objects'
/// `metadata.name` by, and a label key's prefix): at most 253 characters, DNS-1123 labels separated by dots, each of
/// lowercase alphanumerics and '-', alphanumeric at both ends.
pub fn check_dns_subdomain(name: &str) -> Result<(), String> {
    let lower = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let label = |l: &str| l.starts_with(lower) && l.ends_with(lower) && l.chars().all(|c| lower(c) || c == '-');
    if name.is_empty() || name.len() > 253 || !name.split('.').all(label) {
        return Err("it must be lowercase letters, digits, '-' and '.', at most 253 characters, each part between dots starting and ending with a letter or digit (a DNS subdomain)".into());
    }
    Ok(())
}

/// A Kubernetes label value (apimachinery `validation.IsValidLabelValue`): empty, or a name of at most 63
/// characters.
pub fn check_label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    check_label_name(value, "a label value")
}

/// A label gpuplan may put on a NodePool's nodes: a label key Karpenter does not reserve for itself.
pub fn check_node_label_key(key: &str) -> Result<(), String> {
    check_label_key(key)?;
    let domain = key.split_once('/').map_or("", |(prefix, _)| prefix);
    if domain.ends_with("karpenter.sh") || domain.ends_with("karpenter.k8s.aws") {
        return Err(format!("the `{domain}` domain belongs to Karpenter, which refuses NodePools that set its labels"));
    }
    if key == "kubernetes.io/hostname" {
        return Err("Karpenter refuses NodePools that set kubernetes.io/hostname (each node has its own)".into());
    }
    Ok(())
}

/// A taint key: a qualified name, like a label key (core/v1 `validateTaints`).
pub fn check_taint_key(key: &str) -> Result<(), String> {
    check_label_key(key)
}

/// A taint value: a label value (core/v1 `validateTaints`).
pub fn check_taint_value(value: &str) -> Result<(), String> {
    check_label_value(value)
}

/// An EC2 capacity reservation id: `cr-` and 17 lowercase hexadecimal digits.
pub fn check_reservation_id(id: &str) -> Result<(), String> {
    let hex = id.strip_prefix("cr-").unwrap_or("");
    if hex.len() == 17 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Ok(());
    }
    Err("a capacity reservation id is `cr-` and 17 hexadecimal digits (like cr-0123456789abcdef0)".into())
}

/// An IAM role name (what EC2NodeClass `spec.role` takes): 1–64 letters, digits and `+=,.@_-`.
pub fn check_role_name(role: &str) -> Result<(), String> {
    if role.is_empty() {
        return Err("the role is empty, and Karpenter refuses an EC2NodeClass without one".into());
    }
    if role.len() > 64 || !role.chars().all(|c| c.is_ascii_alphanumeric() || "+=,.@_-".contains(c)) {
        return Err("an IAM role name is 1–64 letters, digits and + = , . @ _ -".into());
    }
    Ok(())
}

/// An IAM instance profile name (what EC2NodeClass `spec.instanceProfile` takes). The CRD refuses only the empty
/// string (karpenter.k8s.aws_ec2nodeclasses.yaml v1.14.1, `instanceProfile cannot be empty`); IAM names an instance
/// profile with 1–128 letters, digits and `+=,.@_-` (IAM API reference, CreateInstanceProfile, InstanceProfileName
/// pattern `[\w+=,.@-]+`), so another name is refused when the node launches, not when the class is applied.
pub fn check_instance_profile_name(profile: &str) -> Result<(), String> {
    if profile.is_empty() {
        return Err("the instance profile is empty, and Karpenter refuses an EC2NodeClass with an empty instanceProfile".into());
    }
    if profile.len() > 128 || !profile.chars().all(|c| c.is_ascii_alphanumeric() || "+=,.@_-".contains(c)) {
        return Err("an IAM instance profile name is 1–128 letters, digits and + = , . @ _ - (a name, not an ARN)".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_label_rules() {
        for ok in ["app", "app.kubernetes.io/name", "example.com/team_a", "a", &"x".repeat(63)] {
            assert_eq!(check_label_key(ok), Ok(()), "{ok}");
        }
        for bad in ["../../etc", "", "/a", "a/", "Example.com/a", "a/b/c", "-a", &"x".repeat(64), &format!("{}/a", "x".repeat(254))] {
            assert!(check_label_key(bad).is_err(), "{bad}");
        }
        assert_eq!(check_label_value(""), Ok(()));
        assert!(check_label_value(&"v".repeat(64)).is_err());
        assert!(check_label_value("a b").is_err());
    }

    #[test]
    fn karpenter_keeps_its_own_label_domains() {
        assert!(check_node_label_key("karpenter.sh/foo").is_err());
        assert!(check_node_label_key("node.karpenter.k8s.aws/x").is_err());
        assert!(check_node_label_key("kubernetes.io/hostname").is_err());
        assert_eq!(check_node_label_key("team"), Ok(()));
    }

    #[test]
    fn reservation_ids_and_role_names() {
        assert_eq!(check_reservation_id("cr-0123456789abcdef0"), Ok(()));
        for bad in ["cr-0123456789ABCDEF0", "cr-123", "sg-0123456789abcdef0", ""] {
            assert!(check_reservation_id(bad).is_err(), "{bad}");
        }
        assert_eq!(check_role_name("KarpenterNodeRole-ml_prod@x"), Ok(()));
        assert!(check_role_name("").is_err());
        assert!(check_role_name("a b").is_err());
        assert!(check_role_name(&"r".repeat(65)).is_err());
    }
}

//! EFA interfaces per instance type: what Karpenter advertises as the node's `vpc.amazonaws.com/efa` capacity
//! (aws/karpenter-provider-aws `pkg/providers/instancetype/types.go` `efas`: EC2 DescribeInstanceTypes
//! `NetworkInfo.EfaInfo.MaximumEfaInterfaces`) and how many interfaces it attaches to a NodeClaim that requests
//! the resource (`pkg/providers/instance/instance.go` `getEFACountForInstance`: all of them, and none when no pod
//! requests it). The catalog snapshot carries only `EfaSupported`, so the counts come from a table of the same
//! DescribeInstanceTypes data (moto 5.2.5), like the ENI limits of `simulate::instances`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The extended resource the EFA device plugin advertises and a pod requests.
pub const EFA_RESOURCE: &str = "vpc.amazonaws.com/efa";

fn table() -> &'static BTreeMap<&'static str, u32> {
    static TABLE: OnceLock<BTreeMap<&'static str, u32>> = OnceLock::new();
    TABLE.get_or_init(|| {
        include_str!("efa-interfaces.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let (name, count) = l.split_once('\t')?;
                Some((name, count.trim().parse().ok()?))
            })
            .collect()
    })
}

/// The EFA interfaces of an instance type; None when it has none (or EC2's data does not say).
pub fn interfaces(instance_type: &str) -> Option<u32> {
    table().get(instance_type).copied()
}

#[cfg(test)]
mod tests {
    #[test]
    fn p4d_has_4_and_p5_32() {
        assert_eq!(super::interfaces("p4d.24xlarge"), Some(4));
        assert_eq!(super::interfaces("p5.48xlarge"), Some(32));
        assert_eq!(super::interfaces("g5.xlarge"), None);
    }
}

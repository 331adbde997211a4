//! GP013: a GPU NodePool without a limit on its accelerator resource (it grows without bound), or with a limit
//! written as a number (the API server returns a string: GitOps tools see a permanent diff).

use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp013,
    name: "limit-missing-or-not-string",
    summary: "GPU NodePool without a limit on its accelerator resource, or with a non-string limit (GitOps skew)",
    checks_output: true,
    check: Scope::Pool(check),
};

/// GP013: limit missing or not a string.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    let Some(resource) = ctx.limited_resource() else { return };
    let Some(value) = ctx.np.limit_value(resource) else {
        out.pool(
            ctx,
            RULE.code,
            ctx.limit_span(),
            format!("NodePool `{}` has no `{resource}` limit: the pool can grow without bound", ctx.plan.name),
            "gpuplan sizes the limit from max-accelerators or the budget; check the NodePool template override (--templates)".into(),
        );
        return;
    };
    if !value.is_string() {
        out.pool(
            ctx,
            RULE.code,
            ctx.limit_span(),
            format!("NodePool `{}` writes its `{resource}` limit as {value}, not a string: the API server returns it as a string and GitOps tools report a permanent diff", ctx.plan.name),
            "quote the limit in the template (`{{ pool.limit | string }}`)".into(),
        );
    }
}

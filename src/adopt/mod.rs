//! Meeting users where they are: `gpuplan adopt` (existing Karpenter YAML → profiles, with a report of what
//! compiling them would change), and the command line's self-description (`--version` with catalog digests,
//! completions, man page, colour).

pub mod cli_docs;
pub mod term;

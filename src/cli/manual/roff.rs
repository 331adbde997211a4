//! A page as a man page: clap_mangen renders the title, NAME, SYNOPSIS, DESCRIPTION, OPTIONS and SUBCOMMANDS from
//! clap; the `roff` crate (what clap_mangen writes with) adds EXIT STATUS, ENVIRONMENT, EXAMPLES and SEE ALSO.

use roff::{Roff, bold, roman};

use super::Page;

/// The man page of `page` (section 1), naming only pages of `pages` in SEE ALSO.
pub fn render(page: &Page, pages: &[Page]) -> std::io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(page.command.clone())
        .title(page.name())
        .source(format!("gpuplan {}", env!("CARGO_PKG_VERSION")))
        .manual("gpuplan manual");
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    if page.command.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut out)?;
    }
    out.extend(sections(page, pages).to_roff().into_bytes());
    Ok(once_preamble(out))
}

/// Each clap_mangen section comes with roff's two-line preamble (the apostrophe string); a page needs it once.
fn once_preamble(page: Vec<u8>) -> Vec<u8> {
    const PREAMBLE: &str = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";
    let text = String::from_utf8_lossy(&page);
    let rest = text.strip_prefix(PREAMBLE).unwrap_or(&text).replace(PREAMBLE, "");
    format!("{PREAMBLE}{rest}").into_bytes()
}

fn sections(page: &Page, pages: &[Page]) -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in page.exit_status() {
        roff.control("TP", []).text([bold(code.to_string())]).text([roman(*meaning)]);
    }
    roff.control("SH", ["ENVIRONMENT"]);
    for var in page.environment() {
        roff.control("TP", []).text([bold(var.name)]).text([roman(var.doc)]);
    }
    roff.control("SH", ["EXAMPLES"]);
    for (what, command) in page.examples() {
        roff.control("TP", []).text([roman(format!("{what}:"))]).text([bold(*command)]);
    }
    roff.control("SH", ["SEE ALSO"]);
    let names = page.see_also(pages);
    let mut refs = Vec::new();
    for (i, name) in names.iter().enumerate() {
        refs.push(bold(name.as_str()));
        refs.push(roman(if i + 1 < names.len() { "(1), " } else { "(1)" }));
    }
    roff.text(refs);
    roff
}

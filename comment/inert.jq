# A report from another workflow's artifact, made inert before it is posted (comment/action.yml):
#   jq -Rrs --arg cut N -f inert.jq < artifact
# The artifact is data written by a run of the pull request's code, so anything in it can be forged. What is kept:
# the Markdown the report is made of (headings, tables, lists, code blocks and the ```mermaid charts), so it stays
# readable. What is neutralised, everywhere (code blocks included: a fence tracker that disagreed with GitHub's
# parser on where a block ends would let raw HTML through, and the report's own code blocks hold none of these):
# - the marker, on its first line: the comment's marker is ours alone, added by the caller;
# - raw HTML: every `<` becomes `&lt;`, except the attribute-free tags the report itself writes (<details>,
#   <summary>, <sub>, <code>, <b> and their closing tags), which load nothing and link nowhere; an HTML comment (a
#   second marker) shows as text;
# - mentions and references: a zero-width space after `@`, before a `#`'s digits and after `GH-`, so nobody is
#   notified and no issue is cross-referenced;
# - links and images: `](` is broken (inline links and images), `]:` too (a reference definition, without which
#   `[text][ref]` and `![][ref]` stay text), and a zero-width space goes into `://` and after every `www` (GitHub's
#   autolinks of bare URLs, after `_`, `*` or `(` too), so the comment links nowhere and loads no image the artifact names.
# Invalid UTF-8 has already become U+FFFD (jq -R). The result is cut at $cut characters (GitHub's limit is 65,536).
def inert:
  gsub("<(?!/?(details|summary|sub|code|b)>)"; "&lt;")
  | gsub("@(?=[A-Za-z0-9_-])"; "@\u200b")
  | gsub("#(?=[0-9])"; "#\u200b")
  | gsub("\\]\\("; "]\u200b(")
  | gsub("\\]:"; "]\u200b:")
  | gsub("://"; ":\u200b//")
  | gsub("(?<w>[Ww]{3})\\."; "\(.w)\u200b.")
  | gsub("(?<g>[Gg][Hh])-(?=[0-9])"; "\(.g)-\u200b");
(sub("^<!-- gpuplan-diff -->\r?\n"; "") | inert) as $text
| ($cut | tonumber) as $n
| if ($text | length) > $n then $text[0:$n] + "\n\n… cut at \($n) characters." else $text end

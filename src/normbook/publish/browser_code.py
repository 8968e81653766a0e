"""The browser check's walk from a verdict to its code (:mod:`normbook.publish.browser`): on
the intro, the side-channel row's links to the source of its rule, its effect and its SESOI
must each open, in one click, at an anchor that exists (:mod:`normbook.publish.sphinx_code`)."""

from __future__ import annotations

# the intro's row for paper A's side channel, found by its rule's link; its code links
_CODE_ROW = """
const rule = [...document.querySelectorAll("a.code-link")]
  .find(a => (a.title || "").endsWith(".rules.localizes_verdict"));
if (!rule) return null;
return [...rule.closest("tr").querySelectorAll("a.code-link")].map(a => [a.textContent, a.href]);
"""
_ANCHOR = """
const id = decodeURIComponent(location.hash.slice(1));
const el = id && document.getElementById(id);
return el ? (el.parentElement.textContent || "") + " " + (el.nextElementSibling || el).textContent
          : null;
"""
CODE_ROLES = ("rule", "effect", "SESOI")


def drive_code_links(driver, report, rel: str) -> None:
    """On the intro: from the side-channel row, the source of its rule, its effect and its
    SESOI must each open in one click (a visible link in the row) at an anchor that exists.
    It leaves the page: the page's own checks run before it."""
    if rel != "book/intro.html":
        return
    links = driver.execute_script(_CODE_ROW)
    if not links:
        report.problems.append("intro: the side-channel row links to no code")
        return
    found = dict(links)
    for role in CODE_ROLES:
        report.controls += 1
        if role not in found:
            report.problems.append(f"intro: the side-channel row has no link to its {role}")
            continue
        driver.get(found[role])  # one click
        if driver.execute_script(_ANCHOR) is None:
            report.problems.append(f"intro: the {role} link lands on no anchor ({found[role]})")

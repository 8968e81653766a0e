"""The browser check's claims ledger (:mod:`normbook.publish.browser`): its filters, search and
sort must work as a reader uses them."""

from __future__ import annotations

_LEDGER = r"""
const table = document.querySelector(".ledger-table table");
if (!table) return null;
const shown = () => Array.from(table.tBodies[0].rows).filter(r => !r.hidden &&
    r.style.display !== "none").length;
const all = shown(), out = {all: all, filters: [], sorts: []};
for (const select of document.querySelectorAll(".ledger-controls select")) {
  const label = select.closest("label") ? select.closest("label").textContent.trim() : "?";
  select.selectedIndex = select.options.length - 1;
  select.dispatchEvent(new Event("change", {bubbles: true}));
  out.filters.push([label.split("\n")[0], shown()]);
  select.selectedIndex = 0;
  select.dispatchEvent(new Event("change", {bubbles: true}));
}
const search = document.querySelector(".ledger-controls input");
if (search) {
  search.value = "zzzz-no-claim-says-this";
  search.dispatchEvent(new Event("input", {bubbles: true}));
  out.filters.push(["search", shown()]);
  out.synonyms = ["BatchNorm", "BN", "batch norm"].map(q => { search.value = q;
    search.dispatchEvent(new Event("input", {bubbles: true})); return shown(); });
  search.value = "";
  search.dispatchEvent(new Event("input", {bubbles: true}));
}
const button = table.querySelector("button.ledger-sort");
if (button) {
  const first = () => table.tBodies[0].rows[0].textContent;
  const before = first();
  button.click();
  const once = button.closest("th").getAttribute("aria-sort");
  const after1 = first();
  button.click();
  out.sorts.push([once, button.closest("th").getAttribute("aria-sort"), before !== after1 ||
                  after1 !== first()]);
}
out.restored = shown();
return out;
"""


def drive_ledger(driver, report) -> None:
    """On the claims ledger: every filter must hide rows, the search must hide every row and
    find "BatchNorm", "BN" and "batch norm" alike, sorting must set ``aria-sort`` and reorder,
    and clearing must bring every row back."""
    result = driver.execute_script(_LEDGER)
    if result is None:
        return
    for label, n in result["filters"]:
        report.controls += 1
        if not n < result["all"]:
            report.problems.append(f"ledger filter '{label}' hid no row ({n} of {result['all']})")
    for once, twice, reordered in result["sorts"]:
        report.controls += 1
        if once not in ("ascending", "descending") or once == twice or not reordered:
            report.problems.append(f"ledger sort did not sort (aria-sort {once} then {twice})")
    if len(set(result.get("synonyms") or [0])) > 1:  # one name for one thing in the search
        report.problems.append(f"ledger search: BatchNorm, BN, batch norm: {result['synonyms']}")
    if result["restored"] != result["all"]:
        report.problems.append(
            f"ledger shows {result['restored']} of {result['all']} rows after clearing filters"
        )

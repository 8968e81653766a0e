"""The browser check's live views (:mod:`normbook.pages.live`, :mod:`normbook.publish.browser`):
open each, set every control state the build checked, and require the page's predictions, the
nudge's changes, the mean over the noise draws and the line Vega drew to equal what PyTorch
computed for the same weights and inputs (within the payload's tolerance); every control must
have moved; without normalization the nudge must move no output beyond j ± R (exactly zero),
with it, on noise, some output there by more than the tolerance. Waiting is on the page's own
promises (the runtime loaded, Vega drawn), never on a poll."""

from __future__ import annotations

import json

import numpy as np

SCRIPT_S = 60.0  # the longest one asynchronous step may take before the check gives up

# Open view ``v`` and answer once it is drawn or has failed, whichever comes first: views.js
# (its own "toggle" listener runs before this one) keeps the view's start in ``liveReady``,
# which rejects when live.js or the Vega bundle cannot load; a view views.js never started
# (views.js itself missing) answers at once too.
_OPEN = """
const [v, done] = arguments;
const d = document.querySelectorAll("details.nb-live")[v];
d.addEventListener("toggle", () => Promise.resolve(d.liveReady).then(
  () => done(d.live ? {state: d.dataset.state, first: d.live.timings.first,
                       data: d.querySelector(".nb-live-data").textContent}
                    : {state: d.liveReady ? "no runtime mounted" : "never started"}),
  e => done({state: "failed: " + e.message})), {once: true});
d.open = true;
"""
# set one check's controls as a reader would, one at a time (events and all), each update
# drawn before the next control moves
_SET = """
const [v, c, done] = arguments;
const d = document.querySelectorAll("details.nb-live")[v];
const moved = [];
const set = (name, value) => {
  const el = d.querySelector(`[name="${name}"]`);
  if (!el) return false;
  if (el.type === "checkbox") {
    if (el.checked === value) return false;
    el.checked = value;
  } else {
    if (String(el.value) === String(value)) return false;
    el.value = String(value);
  }
  const ev = el.tagName === "SELECT" || el.type !== "range" ? "change" : "input";
  el.dispatchEvent(new Event(ev, {bubbles: true}));
  moved.push(name);
  return true;
};
const kinds = d.live.data.kinds;
(async () => {
  for (const name of d.live.data.controls)
    if (set(name, name === "kind" ? kinds.indexOf(c.kind) : c[name])) await d.live.pending;
  done({moved, last: d.live.last, drawn: d.live.drawn, update: d.live.timings.slowest,
        readout: d.querySelector(".nb-live-readout").textContent,
        state: d.dataset.state});
})();
"""


def _gap(page, expected) -> float:
    return float(np.max(np.abs(np.asarray(page, float) - np.asarray(expected, float))))


def check_view(driver, v: int) -> tuple[list[str], dict]:
    """Problems of live view ``v`` of the loaded page, and its timings (ms)."""
    driver.set_script_timeout(SCRIPT_S)
    opened = driver.execute_async_script(_OPEN, v)
    if opened.get("state") != "rendered":
        return [f"live view {v + 1} did not run ({opened.get('state')})"], {}
    data, problems, moved, updates = json.loads(opened["data"]), [], set(), []
    tol = data["tolerance"]
    for n, check in enumerate(data["checks"]):
        got = driver.execute_async_script(_SET, v, check["controls"])
        moved.update(got["moved"])
        if got["update"] is not None:
            updates.append(got["update"])
        where = f"live view {v + 1}, check {n + 1} ({check['controls']})"
        if got["state"] != "rendered" or got["last"] is None:
            problems.append(f"{where}: not drawn ({got['state']})")
            continue
        last = got["last"]
        for field in ("pred", "delta", "mean"):
            gap = _gap(last[field], check[field])
            if not gap <= tol:
                problems.append(f"{where}: {field} differs from PyTorch's by {gap:.2g} (> {tol:g})")
        if not _gap(got["drawn"], check["pred"]) <= tol:
            problems.append(f"{where}: the drawn predictions differ from PyTorch's")
        net = data["nets"][check["controls"]["net"]]
        problems += _reach(where, net, last, got["readout"], tol)
    problems += [f"live view {v + 1}: its control '{c}' never moved" for c in data["controls"]
                 if c not in moved]  # fmt: skip
    return problems, {
        "first": opened["first"],
        "update": max(updates, default=None),
        "controls": len(data["controls"]),
    }


def _reach(where: str, net: dict, last: dict, readout: str, tol: float) -> list[str]:
    """Without normalization, or with its statistics frozen, no output beyond j ± R moves,
    exactly, and the view says so, whatever the input. With normalization, on noise (the task's
    input), some output there moves by more than the tolerance. On a spike or a constant it
    may not: a normalized channel that is flat but for one region is scale-invariant, so the
    far outputs barely depend on the spike's height (measured at cpu: 6e-5 to 7e-7)."""
    if not any(net["groups"]) or last["controls"].get("freeze"):
        if last["beyond"] != 0:
            return [f"{where}: without normalization an output beyond j ± R moved "
                    f"({last['beyond']:.2g})"]  # fmt: skip
        return [] if "0, exactly" in readout else [f"{where}: the view does not say 0 exactly"]
    if last["controls"].get("kind") == "noise" and not last["beyond"] > tol:
        return [f"{where}: with {net['name']} no output beyond j ± R moved by more than {tol:g} "
                f"({last['beyond']:.2g})"]  # fmt: skip
    return []


def drive_live(driver, report) -> None:
    """Every live view of the loaded page (:func:`check_view`); its timings go to the report.
    A view whose step hangs past ``SCRIPT_S`` or raises in the page is that view's problem: the
    check goes on to the next view, the rest of the page and the next page."""
    from selenium.common.exceptions import JavascriptException, TimeoutException

    n = driver.execute_script("return document.querySelectorAll('details.nb-live').length")
    for v in range(n):
        try:
            problems, timings = check_view(driver, v)
        except (TimeoutException, JavascriptException) as e:
            what = (
                f"gave no answer in {SCRIPT_S:.0f} s"
                if isinstance(e, TimeoutException)
                else "raised in the page"
            )
            said = (e.msg or "?").splitlines()[0][:200]  # not chromedriver's session info
            problems, timings = [f"live view {v + 1}: its check {what} ({said})"], {}
        report.problems += problems
        if timings:  # a view that did not run has none: its problem says so
            report.live.append(timings)
            report.controls += timings["controls"]

// Posts the new-campaign form to the server, which maps it to a spec (the one mapping) and
// answers in JSON; shows each field's error next to it without leaving the page. Without
// JavaScript the same post answers with the page and its errors.
(function () {
  "use strict";
  var form = document.getElementById("campaign-form");
  if (!form || !window.fetch) return;
  function clearErrors() {
    form.querySelectorAll("[data-path]").forEach(function (field) {
      field.classList.remove("invalid");
      var slot = field.querySelector(":scope > .error"); if (slot) slot.textContent = "";
    });
    form.querySelectorAll(".error.block").forEach(function (slot) { slot.textContent = ""; });
  }
  function showErrors(fields) {
    var fieldsByPath = Array.prototype.slice.call(form.querySelectorAll("[data-path]"));
    Object.keys(fields).forEach(function (path) {
      var best = null;
      fieldsByPath.forEach(function (field) {
        var p = field.dataset.path;
        // Fields of the same path (two tools' `level`): the one in view, the chosen tool's.
        if ((path === p || path.indexOf(p + ".") === 0 || path.indexOf(p + "[") === 0) &&
            (!best || p.length > best.dataset.path.length ||
             (p.length === best.dataset.path.length && !best.offsetParent && field.offsetParent))) best = field;
      });
      var slot = best ? best.querySelector(":scope > .error") : null;
      if (!slot) {
        var group = path.indexOf("matrix") === 0 ? "matrix" : "params";
        slot = form.querySelector("input[name=" + (group === "matrix" ? "matrix_buffers" : "buffers") + "]")
          .closest("fieldset").querySelector(".error.block");
      }
      if (best) best.classList.add("invalid");
      if (slot) slot.textContent = (slot.textContent ? slot.textContent + "; " : "") + fields[path];
    });
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    clearErrors();
    var banner = document.getElementById("form-error");
    banner.hidden = true;
    var button = document.getElementById("submit");
    button.disabled = true;
    var data = new FormData(form);
    // "Check and estimate" asks for the plan only: nothing is queued.
    var dryRun = event.submitter && event.submitter.name === "dry_run";
    if (dryRun) data.append("dry_run", "true");
    var body = new URLSearchParams(data);
    var planSlot = document.getElementById("form-plan");
    if (planSlot) planSlot.hidden = true;
    fetch(form.action, {
      method: "POST",
      headers: { "Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded" },
      body: body
    })
      .then(function (response) {
        return response.json().then(function (body) { return { ok: response.ok, status: response.status, body: body }; });
      })
      .then(function (answer) {
        if (answer.ok && dryRun) {
          planSlot.textContent = answer.body.summary;
          planSlot.hidden = false;
          button.disabled = false;
          return;
        }
        if (answer.ok) { window.location.href = answer.body.url; return; }
        banner.textContent = answer.body.error || "The campaign was refused.";
        if (answer.status === 401 && form.elements.token) answer.body.fields = { token: answer.body.error };
        banner.hidden = false;
        showErrors(answer.body.fields || {});
        button.disabled = false;
      })
      .catch(function (error) {
        banner.textContent = "The lab did not answer: " + error;
        banner.hidden = false;
        button.disabled = false;
      });
  });
})();

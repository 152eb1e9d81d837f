// Submits the new-campaign form through the REST API, as scripts do, and shows each field's
// error next to it. Without JavaScript the form posts to the server, which does the same.
(function () {
  "use strict";
  var form = document.getElementById("campaign-form");
  if (!form || !window.fetch) return;
  function list(text) {
    return text.split(/[\s,]+/).filter(function (v) { return v.length > 0; });
  }
  function number(text) { var n = Number(text); return text.trim() === "" || isNaN(n) ? text.trim() : n; }
  function size(text) { return /^\d+$/.test(text.trim()) ? Number(text.trim()) : text.trim(); }
  function spec() {
    var f = form.elements, s = { name: f.name.value.trim() };
    if (f.source_kind.value === "generated") {
      s.source = { generated: { size: size(f.generated_size.value) } };
    } else {
      s.source = { paths: f.source_paths.value.split("\n").map(function (p) { return p.trim(); }).filter(Boolean) };
    }
    var agents = list(f.agents.value);
    if (agents.length) {
      s.source.agents = agents;
      if (f.source_kind.value === "generated") delete s.source.generated;
    }
    s.target = { kind: f.target_kind.value };
    if (f.target_kind.value === "tape") {
      s.target.model = f.tape_model.value;
      if (f.tape_drives.value.trim() !== "") s.target.drives = number(f.tape_drives.value);
    } else if (f.target_kind.value !== "null" && f.target_path.value.trim() !== "") {
      s.target.path = f.target_path.value.trim();
    }
    s.tests = Array.prototype.filter.call(form.querySelectorAll("input[name=tests]"), function (c) { return c.checked; })
      .map(function (c) { return c.value; });
    s.params = {
      buffers: number(f.buffers.value), block_size: size(f.block_size.value),
      direct: f.direct.checked, cold_cache: f.cold_cache.checked, fsync: f.fsync.checked,
      time_based: f.time_based.checked
    };
    if (f.compress_ratio.value.trim() !== "") s.params.compress_ratio = number(f.compress_ratio.value);
    if (f.streams.value.trim() !== "") s.params.streams = number(f.streams.value);
    if (f.size.value.trim() !== "") s.params.size = size(f.size.value);
    if (f.duration_s.value.trim() !== "") s.params.duration_s = number(f.duration_s.value);
    if (f.clients.value.trim() !== "") s.params.clients = number(f.clients.value);
    if (f.link_mb_s.value.trim() !== "") s.params.link_mb_s = number(f.link_mb_s.value);
    var matrix = {};
    if (f.matrix_buffers.value.trim()) matrix.buffers = list(f.matrix_buffers.value).map(number);
    if (f.matrix_block_size.value.trim()) matrix.block_size = list(f.matrix_block_size.value).map(size);
    if (f.matrix_streams.value.trim()) matrix.streams = list(f.matrix_streams.value).map(number);
    if (f.matrix_clients.value.trim()) matrix.clients = list(f.matrix_clients.value).map(number);
    if (Object.keys(matrix).length) s.matrix = matrix;
    s.repeat = number(f.repeat.value || "1");
    return s;
  }
  function clearErrors() {
    form.querySelectorAll("[data-path]").forEach(function (field) {
      field.classList.remove("invalid");
      var slot = field.querySelector(".error"); if (slot) slot.textContent = "";
    });
    form.querySelectorAll(".error.block").forEach(function (slot) { slot.textContent = ""; });
  }
  function showErrors(fields) {
    var fieldsByPath = Array.prototype.slice.call(form.querySelectorAll("[data-path]"));
    Object.keys(fields).forEach(function (path) {
      var best = null;
      fieldsByPath.forEach(function (field) {
        var p = field.dataset.path;
        if ((path === p || path.indexOf(p + ".") === 0 || path.indexOf(p + "[") === 0) &&
            (!best || p.length > best.dataset.path.length)) best = field;
      });
      var slot = best ? best.querySelector(".error") : null;
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
    var headers = { "Content-Type": "application/json" };
    if (form.elements.token && form.elements.token.value) headers.Authorization = "Bearer " + form.elements.token.value;
    fetch("/api/campaigns", { method: "POST", headers: headers, body: JSON.stringify(spec()) })
      .then(function (response) {
        return response.json().then(function (body) { return { ok: response.ok, status: response.status, body: body }; });
      })
      .then(function (answer) {
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

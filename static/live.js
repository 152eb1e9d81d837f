// Live progress of a running campaign, over Server-Sent Events. When the campaign finishes the
// report replaces the live view in place, without a reload.
(function () {
  "use strict";
  var report = document.getElementById("report");
  if (!report || !window.EventSource) return;
  var id = report.dataset.id;
  var source = new EventSource("/api/campaigns/" + id + "/events");
  var total = 0, finished = 0;
  function el(name) { return document.getElementById(name); }
  function setText(name, text) { var node = el(name); if (node) node.textContent = text; }
  function overall(percent) {
    var bar = el("live-progress");
    if (!bar || total === 0) return;
    var share = (finished + (percent || 0) / 100) / total * 100;
    bar.value = Math.min(100, share);
  }
  source.addEventListener("state", function (e) {
    var s = JSON.parse(e.data);
    total = s.runs_total; finished = s.runs_finished;
    setText("status", s.status);
    setText("live-count", finished + " of " + total + " runs finished");
    overall(0);
  });
  source.addEventListener("run_started", function (e) {
    var d = JSON.parse(e.data);
    setText("live-run", "Run " + (d.position + 1) + " of " + d.runs_total + ": " + d.test);
    setText("status", "running");
  });
  source.addEventListener("progress", function (e) {
    var d = JSON.parse(e.data);
    setText("live-run", "Run " + (d.position + 1) + " of " + total + ": " + d.test);
    setText("live-rate", d.mb_per_s.toFixed(1) + " MB/s");
    overall(d.percent);
  });
  source.addEventListener("run_finished", function (e) {
    finished += 1;
    setText("live-count", finished + " of " + total + " runs finished");
    overall(0);
  });
  source.addEventListener("campaign_finished", function () {
    source.close();
    fetch(window.location.pathname, { headers: { "Accept": "text/html" } })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        var next = new DOMParser().parseFromString(html, "text/html").getElementById("report");
        if (next) report.replaceWith(next);
      })
      .catch(function () { window.location.reload(); });
  });
  source.onerror = function () {
    // The browser reconnects by itself; a finished campaign's stream ends normally.
  };
})();

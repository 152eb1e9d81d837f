// Live progress of a running campaign, over Server-Sent Events: the running run's MB/s drawn
// as it comes, the report's charts fetched again as each run finishes, and, when the campaign
// finishes, the final report in place of the live view, without a reload.
(function () {
  "use strict";
  var report = document.getElementById("report");
  if (!report || !window.EventSource) return;
  var id = report.dataset.id;
  var labels = {};
  try { labels = JSON.parse(report.dataset.labels || "{}"); } catch (e) { labels = {}; }
  var source = new EventSource("/api/campaigns/" + id + "/events");
  var total = 0, finished = 0;
  var points = [], runId = null;
  // Each run's expected seconds by position, and how far the running one has got.
  var leftNode = document.getElementById("live-left");
  var expected = [];
  try { expected = JSON.parse((leftNode && leftNode.dataset.expected) || "[]"); } catch (e) { expected = []; }
  var runElapsed = 0;
  // The same words as the page's: "48.0 s", "7m 05s", "1h 02m".
  function words(seconds) {
    function two(n) { return (n < 10 ? "0" : "") + n; }
    if (seconds < 60) return seconds.toFixed(1) + " s";
    var s = Math.round(seconds), m = Math.floor(s / 60);
    if (seconds < 3600) return m + "m " + two(s % 60) + "s";
    m = Math.round(seconds / 60);
    return Math.floor(m / 60) + "h " + two(m % 60) + "m";
  }
  function showLeft() {
    if (!leftNode || expected.length === 0) return;
    var left = 0;
    for (var i = finished; i < expected.length; i++) left += expected[i];
    left = Math.max(0, left - runElapsed);
    leftNode.textContent = "about " + words(left) + " left";
  }
  function el(name) { return document.getElementById(name); }
  function setText(name, text) { var node = el(name); if (node) node.textContent = text; }
  function label(test) { return labels[test] || test; }
  function overall(percent) {
    var bar = el("live-progress");
    if (!bar || total === 0) return;
    var share = (finished + (percent || 0) / 100) / total * 100;
    bar.value = Math.min(100, share);
  }
  // A round top for the MB/s axis a little above the highest sample.
  function niceMax(max) {
    if (!(max > 0)) return 1;
    var target = max * 1.05, magnitude = Math.pow(10, Math.floor(Math.log10(target)));
    var steps = [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10];
    for (var i = 0; i < steps.length; i++) if (steps[i] * magnitude >= target) return steps[i] * magnitude;
    return 10 * magnitude;
  }
  function drawLive() {
    var line = el("live-line");
    if (!line) return;
    var tMax = Math.max(1, points.reduce(function (m, p) { return Math.max(m, p[0]); }, 0));
    var yMax = niceMax(points.reduce(function (m, p) { return Math.max(m, p[1]); }, 0));
    line.setAttribute("points", points.map(function (p) {
      return (50 + p[0] / tMax * 540).toFixed(1) + "," + (120 - p[1] / yMax * 110).toFixed(1);
    }).join(" "));
    setText("live-ymax", String(yMax));
    setText("live-tmax", tMax.toFixed(1) + " s");
  }
  function startRun(run) {
    if (run !== runId) { runId = run; points = []; drawLive(); }
  }
  // The charts as they stand now: a new version of each image.
  function refreshCharts() {
    var version = "?v=live-" + finished;
    report.querySelectorAll("figure.chart img").forEach(function (img) {
      img.src = img.src.replace(/\?.*$/, "") + version;
    });
    report.querySelectorAll("figure.chart picture source").forEach(function (source) {
      source.srcset = source.srcset.replace(/\?.*$/, "") + version;
    });
  }
  function progress(d) {
    startRun(d.run_id);
    runElapsed = d.elapsed_s || 0;
    showLeft();
    points.push([d.elapsed_s, d.mb_per_s]);
    drawLive();
    setText("live-run", "Run " + (d.position + 1) + " of " + total + ": " + label(d.test));
    setText("live-rate", d.mb_per_s.toFixed(1) + " MB/s");
    overall(d.percent);
  }
  source.addEventListener("state", function (e) {
    var s = JSON.parse(e.data);
    total = s.runs_total; finished = s.runs_finished;
    setText("status", s.status);
    setText("live-count", finished + " of " + total + " runs finished");
    if (s.progress && s.progress.type === "progress") progress(s.progress);
    overall(0);
  });
  source.addEventListener("run_started", function (e) {
    var d = JSON.parse(e.data);
    startRun(d.run_id);
    setText("live-run", "Run " + (d.position + 1) + " of " + d.runs_total + ": " + label(d.test));
    setText("status", "running");
  });
  source.addEventListener("progress", function (e) { progress(JSON.parse(e.data)); });
  source.addEventListener("run_finished", function () {
    finished += 1;
    runElapsed = 0;
    showLeft();
    setText("live-count", finished + " of " + total + " runs finished");
    overall(0);
    refreshCharts();
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

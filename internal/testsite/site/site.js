// site.js — shared by the pages of the abctl test site.
// testsite.report(kind, fields) posts a report to /event, which the Go
// server records as an Event of that kind. It adds "origin" and "page" to
// the fields. The promise it returns never rejects.
(function () {
  'use strict';
  function report(kind, fields) {
    var body = new URLSearchParams();
    var f = fields || {};
    Object.keys(f).forEach(function (k) { body.append(k, String(f[k])); });
    body.set('origin', location.origin);
    body.set('page', location.pathname + location.hash);
    var url = '/event?kind=' + encodeURIComponent(kind) +
      '&path=' + encodeURIComponent(location.pathname);
    return fetch(url, {method: 'POST', body: body, keepalive: true})
      .catch(function () {});
  }
  window.testsite = {report: report};
})();

// The web UI's one script. It does two things, and the pages work without
// it (but for these two):
//
// - A one-time sign-in link (abctl open) carries its token in the URL's
//   fragment, which the browser never sends: post it, and forget it.
// - A part of a page marked data-live="MS" (a run that is not over) is
//   fetched again every MS milliseconds and swapped for the new one, until
//   the new one is no longer marked live.
//
// And on a run's page with a recording: the step under the playhead (the
// one with the latest data-at, its start in ms, not after the video's
// time) is marked aria-current="step", and a button with data-seek="MS"
// moves the video there. The listeners are on the document, so that they
// outlive the swaps above.
//
// And on a running run's page: the picture of the page its browser shows
// (img data-frame="MS") is loaded again every MS milliseconds while the
// page is visible, until no part of the page is live any more (the run is
// over), when it goes away. A run without a picture yet (its browser is
// not open) shows a note instead, and the picture comes when it can.
"use strict";

(function () {
  function signInFromLink() {
    var m = /^#token=([A-Za-z0-9_-]+)$/.exec(location.hash);
    var form = document.getElementById("sign-in-link");
    if (!m || !form) {
      return;
    }
    history.replaceState(null, "", location.pathname + location.search);
    form.elements.token.value = m[1];
    form.submit();
  }

  function follow(el) {
    var every = parseInt(el.getAttribute("data-live"), 10);
    if (!el.id || !(every > 0)) {
      return;
    }
    setTimeout(function () {
      fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (res) {
          if (!res.ok) {
            throw new Error("HTTP " + res.status);
          }
          return res.text();
        })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var fresh = doc.getElementById(el.id);
          var current = document.getElementById(el.id);
          if (!fresh || !current) {
            return;
          }
          var node = document.importNode(fresh, true);
          keepImages(current, node);
          current.replaceWith(node);
          live(node);
        })
        .catch(function () {
          // The daemon may be restarting: try again later.
          setTimeout(function () { follow(el); }, every * 2);
        });
    }, every);
  }

  // keepImages gives the images of fresh the addresses their images had in
  // current: a file's signed address changes with each answer (its expiry),
  // and a new address would fetch every screenshot again each time.
  function keepImages(current, fresh) {
    var had = {};
    current.querySelectorAll("img[src]").forEach(function (img) {
      had[img.src.split("?")[0]] = img.getAttribute("src");
    });
    fresh.querySelectorAll("img[src]").forEach(function (img) {
      var src = had[img.src.split("?")[0]];
      if (src) {
        img.setAttribute("src", src);
      }
    });
  }

  function live(root) {
    if (root.hasAttribute && root.hasAttribute("data-live")) {
      follow(root);
    }
    root.querySelectorAll("[data-live]").forEach(follow);
  }

  function markPlayhead() {
    var video = document.getElementById("recording");
    if (!video) {
      return;
    }
    var now = video.currentTime * 1000;
    var best = null;
    var bestAt = -1;
    document.querySelectorAll("[data-at]").forEach(function (el) {
      var at = parseFloat(el.getAttribute("data-at"));
      if (at <= now && at >= bestAt) {
        best = el;
        bestAt = at;
      }
    });
    document.querySelectorAll('[data-at][aria-current="step"]').forEach(function (el) {
      if (el !== best) {
        el.removeAttribute("aria-current");
      }
    });
    if (best) {
      best.setAttribute("aria-current", "step");
    }
  }

  function seek(ev) {
    var button = ev.target.closest && ev.target.closest("[data-seek]");
    var video = document.getElementById("recording");
    if (!button || !video) {
      return;
    }
    video.currentTime = parseInt(button.getAttribute("data-seek"), 10) / 1000;
    video.scrollIntoView({ block: "nearest" });
    markPlayhead();
  }

  function followFrame(img) {
    var every = parseInt(img.getAttribute("data-frame"), 10);
    var note = document.getElementById("frame-note");
    var said = note ? note.textContent : "";
    var base = img.getAttribute("src").split("?")[0];
    var n = 0;
    var timer = null;
    function shown(ok) {
      img.hidden = !ok;
      if (note) {
        note.textContent = ok ? said : "No picture of the page yet: the run's browser is not open (it opens when the run first needs a page). It shows here when it is.";
      }
    }
    img.addEventListener("load", function () { shown(true); });
    img.addEventListener("error", function () { shown(false); });
    if (img.complete && img.naturalWidth === 0) {
      shown(false);
    }
    function tick() {
      timer = null;
      if (!document.querySelector("[data-live]")) {
        // The run is over: its screenshots and recording show it now.
        var section = img.closest("section") || img;
        section.remove();
        return;
      }
      if (!document.hidden) {
        n += 1;
        img.setAttribute("src", base + "?n=" + n);
      }
      timer = setTimeout(tick, every);
    }
    document.addEventListener("visibilitychange", function () {
      if (!document.hidden && timer === null && img.isConnected) {
        tick();
      }
    });
    timer = setTimeout(tick, every);
  }

  document.addEventListener("DOMContentLoaded", function () {
    signInFromLink();
    live(document);
    document.querySelectorAll("img[data-frame]").forEach(followFrame);
    // Media events do not bubble: listen as they go down.
    ["timeupdate", "seeked", "loadedmetadata"].forEach(function (type) {
      document.addEventListener(type, function (ev) {
        if (ev.target && ev.target.id === "recording") {
          markPlayhead();
        }
      }, true);
    });
    document.addEventListener("click", seek);
  });
})();

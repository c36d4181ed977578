// Package webui is the daemon's web page: the runs of the organization
// whose API key signed in (the list, and each run as a timeline of its
// blocks and steps with their screenshots, the recording and the files),
// the runs waiting for a person's answer, the agents, and the rest of the
// organization's records read-only.
//
// It is served from Go on the daemon's own address, under /ui/, rendered
// with html/template from files embedded in the binary: no build step,
// nothing fetched from the internet, and one small script (static/ui.js)
// that refreshes the parts of a page that change while a run goes on.
//
// # What it reads
//
// The pages read and change nothing but what the v1 API answers: each
// request calls the API's own handler in process (Server.api), with the
// signed-in organization's key, through the Go client of package client.
// So a page shows exactly what GET /v1/... shows, another organization's
// ids are 404 as they are in the API, and there is no second path to the
// store to keep in step with the first.
//
// # Signing in
//
// A person signs in with an API key (the form of /ui/sign-in), or with a
// one-time link that `abctl open` asks for (POST /ui/sign-in-links with
// the key in x-api-key). The link carries its token in the URL's
// fragment, which browsers never send to a server: the sign-in page's
// script posts it, so the token reaches no access log and no Referer.
// Signing in sets an HttpOnly, SameSite=Strict cookie holding a random
// session token; the key itself stays in the daemon's memory, and
// sessions end when the daemon stops (sign in again).
//
// # Requests from other sites
//
// Every change is a POST that must carry the session's CSRF token in the
// form, and that a browser says comes from this origin (Origin and
// Sec-Fetch-Site, when it sends them). Every page is sent with a
// Content-Security-Policy that allows scripts, styles and media from the
// daemon only, and no inline script; every value that an agent, a page or
// a model produced is put in the page as text by html/template's escaping.
package webui

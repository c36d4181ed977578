// Package egress decides what a run may reach over the network, and makes
// the connections it allows. It is the one policy behind every connection
// a run causes: the browser's navigations and the page's own requests
// (through Proxy, a per-run HTTP proxy the run's browser context uses), and
// every call a block or the daemon makes for a run (http_request, file
// URLs, storage, mail, webhooks, one-time code URLs, custom models, a
// run's own browser address), through Guard.DialContext and
// Guard.HTTPClient.
//
// The decision is made where the connection is made, on the address a host
// name resolved to, never on a URL's text alone: a DNS name that points at
// 127.0.0.1, a redirect to a metadata address, an IPv4-mapped IPv6 address,
// a decimal or octal IPv4 form, 0.0.0.0 and [::] all end as one address,
// and that address is what is checked. DialContext resolves a name once,
// checks every address it got, and connects to the checked address itself,
// so that an answer that changes between the check and the connection
// (DNS rebinding) cannot slip through.
//
// # The rules, in order
//
//  1. Schemes. A URL a run gives must be http or https (ws and wss where a
//     websocket is meant; about:blank in the browser). file:, chrome:,
//     devtools:, view-source: and every other scheme are refused: a run's
//     own files are reached through the blocks made for them.
//  2. Protected addresses. The daemon's own listening addresses (its API,
//     the proxies of runs) and the DevTools endpoints of its browsers (the
//     local Chromium, the fleet) are refused whatever else is allowed.
//  3. Never reachable: unspecified (0.0.0.0/8, ::), link-local
//     (169.254.0.0/16, fe80::/10), the cloud metadata addresses, multicast,
//     broadcast and reserved ranges.
//  4. The operator's deny patterns (Config.Deny).
//  5. Loopback and private networks (127.0.0.0/8, ::1, 10.0.0.0/8,
//     172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, fc00::/7): reachable
//     when Config.Private says so (PrivateAuto: while the daemon serves one
//     organization), or when an allow pattern (Config.Allow, or the
//     organization's in Config.OrgAllow) names the host, the address or its
//     network; refused otherwise.
//  6. Everything else (public addresses) is reachable.
//
// A refusal is an *Error: it names the URL or host asked for, the address
// it resolved to and the rule, in words a person can act on.
package egress

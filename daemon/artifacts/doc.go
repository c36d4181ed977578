// Package artifacts keeps the files a run produces (screenshots, the
// recording, downloaded files) and serves them to browsers through signed,
// expiring URLs.
//
// # Layout
//
// A Store owns one directory, <data-dir>/artifacts, and gives every run its
// own directory in it:
//
//	<root>/<org id>/<run id>/<name>
//
// The executor writes a run's files into RunDir(org, run) and the daemon
// calls Record for each one; the store.RunFile it gets back (id a_<snowflake> as the
// hosted service forms artifact ids, type, name, size, SHA-256, time) is
// persisted with the run by the daemon. The Store keeps no
// index of its own: the directory tree holds the bytes and the daemon's
// database holds the records, so a run's files can be removed with one
// RemoveRun.
//
// # A bucket
//
// Daemons on several machines that share one database share their run
// files through a bucket of an S3-compatible service (WithBucket, made by
// OpenBucket from s3://bucket[/prefix] and the operator's keys). The
// directory stays each daemon's working copy: the executor writes into
// RunDir as before, and Record (and Save) copy the file to the object
// <prefix>/<org id>/<run id>/<name> before returning its record, so that
// no recorded file exists only on one machine's disk; a file that cannot
// be copied is not recorded. Whatever opens a recorded file (the handler,
// ServeFile, LocalFiles) reads the daemon's own copy when it has one, else
// the object, with the same Content-Type, disposition, caching and
// security headers and the same range support (the object is read by
// ranged GETs pinned to the ETag its stat saw; its Last-Modified is the
// file's modification time, kept in the object's metadata, so that every
// daemon answers the same). Only a file missing from the disk is looked
// for in the bucket: one refused there (a symbolic link, say) is refused.
// Ids, names, signatures and expiry are all checked before any request
// reaches the bucket. RemoveRun removes the run's objects with its
// directory. The bucket's keys never appear in an error.
//
// Ids and names are never trusted as path parts. Org and run ids must match
// [A-Za-z0-9_]{1,128} (the daemon's ids, o_…, wr_…, tsk_…, are of that
// form) and a file name must be one clean path element (executor.ValidFileName): no
// separators, no "..", no leading dot, no control characters; they are
// checked before any file-system call. Every file is opened through an
// os.Root on the store's directory, so even a symbolic link planted in the
// tree cannot lead outside it; beyond that, the org and run directories
// must be real directories and a file is only served or recorded when
// os.Lstat shows a regular file and the opened descriptor is that same
// file: symbolic links are never followed, not even to files inside the
// root.
//
// # URLs
//
// Browsers open artifacts without an API key, so the URL itself is the
// credential:
//
//	<base>/artifacts/<run id>/<name>?org=<org id>&expires=<unix seconds>&signature=<hex>
//	<base>/artifacts/<run id>/<name>?org=<org id>&expires=<unix seconds>&download=1&signature=<hex>
//
// base is the address the client reached the daemon on (for example
// http://127.0.0.1:8780), so the URL works for whoever received the
// response. The signature is a lowercase hex HMAC-SHA256 over a
// length-prefixed canonical string of the org id, run id, name, expiry and
// disposition, under a key derived from the daemon's secret with the label
// "abctl artifact URLs v1" (so that the same secret can key other things
// without one use being able to forge the other). A URL cannot be guessed
// (256-bit key), cannot be moved to another org, run or file, and stops
// working at its expiry (DefaultLifetime is 24 hours). The org is carried
// in the query because the path only names the run, as the hosted
// service's do. The list items' uri is a stable, non-secret name,
// abctl://artifacts/<run id>/<name>; only signed_url opens the file.
//
// The daemon mounts Store.Handler at Path (/artifacts/) outside its API-key
// check, without stripping the prefix: the handler reads the escaped
// request path itself, so that an encoded slash stays inside its segment
// and is refused with the name.
//
// The handler (Store.Handler) checks, in this order, before touching the
// file system: the method (GET or HEAD, else 405), the shape of the path
// and the validity of the ids and the name (else 404), the signature (403
// when missing or wrong), and the expiry (410 Gone: the URL was genuine but
// is no longer valid, which tells a client to fetch the run again for fresh
// URLs). Error bodies are {"detail": "..."} like the rest of the API.
//
// Files are served with http.ServeContent (ranges, Last-Modified and
// conditional requests). The Content-Type comes from a fixed table of
// extensions (png, jpeg, webm, mp4, json, txt, pdf, zip, csv; anything else
// is application/octet-stream, so HTML, SVG or scripts a page made the
// browser download are never rendered on the daemon's origin), always with
// X-Content-Type-Options: nosniff and a sandboxing Content-Security-Policy.
// Images, videos, JSON and text open inline; everything else, and every URL
// signed with download=1 (which Signer.DownloadURL adds, and which the
// signature covers), is sent as an attachment with its file name. Responses
// may be cached privately, never beyond the URL's expiry.
package artifacts

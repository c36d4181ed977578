package testsite

// Pages for the observation's tests (static files under site/observe/,
// scripted in the page; each file's comment says what it holds):
//
//   - /observe/tree.html (PageObserveTree): a tree of clickable <li>s in
//     clickable <li>s, with click listeners added by script; a folder that
//     makes its children when it opens; a list with one delegated listener;
//     a clickable card holding a bullet list; a pointer-cursor menu of
//     links. Events "tree-click" (name) and "tree-card".
//   - /observe/posts.html (PageObservePosts): seven posts of four icons
//     each (reply, share, like, more) drawn by CSS content: url(), with a
//     pointer cursor on hover only and listeners added by script, in a root
//     with a listener of its own; an element with only a click listener
//     and one with only an onclick property. Events "post-action" (post,
//     action) and "post-bulk" (action).
//   - /observe/icons.html (PageObserveIcons): buttons drawn by icon fonts,
//     a Material ligature, an <img> file name, an SVG sprite, a background
//     image, an SVG title, and a date picker's ‹ › with listeners. Event
//     "icon-click" (id).
//   - /observe/options.html (PageObserveOptions): an autocomplete whose
//     suggestions (a pointer-cursor <ul> with a delegated listener) appear
//     as one types, and an ARIA listbox. Event "option-pick" (value).
//   - /observe/rows.html (PageObserveRows): repeated buttons and links in
//     table rows, field rows and cards; clickable flex rows whose spans
//     touch; a button named <b>Sub</b>mit. Event "row-click" (id).
//
// The icons are SVG files under site/observe/img/.

// Paths of the observation pages.
const (
	PageObserveTree    = "/observe/tree.html"
	PageObservePosts   = "/observe/posts.html"
	PageObserveIcons   = "/observe/icons.html"
	PageObserveOptions = "/observe/options.html"
	PageObserveRows    = "/observe/rows.html"
)

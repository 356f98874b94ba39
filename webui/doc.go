// Package webui is simdex's review UI: a single page served from files
// embedded in the binary, with no front-end build step and nothing fetched
// from anywhere else at run time.
//
// The page is hand-written HTML, CSS and JavaScript modules under static/,
// plus two libraries vendored from npm under static/vendor/ (cytoscape for
// the family graph, uPlot for the similarity histogram; versions and the
// exact `npm pack` commands are in static/vendor/README.md). Everything the
// page shows comes from the JSON API under /api/v1, called with the API
// token the reviewer pastes at sign-in (kept in sessionStorage, never in a
// cookie): the files themselves are public and carry no data.
//
// Handler serves index.html at / and the assets under /ui/. Each file is
// sent with an explicit Content-Type, a strong ETag and a Content Security
// Policy that allows scripts, styles, images and API calls from the same
// origin only: document text is untrusted, and the page never builds HTML
// from strings.
package webui

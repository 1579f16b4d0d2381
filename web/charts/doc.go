// Package charts draws the time series of Hermes's pages as inline SVG,
// server-side: a stacked area of a service's traffic split and a line of a
// route's score over the configured level thresholds, with markers for
// level changes and alerts. Nothing is fetched or run in the browser.
//
// Why not a JavaScript charting library: the backtest report must be one
// self-contained file and the status page must render without scripts;
// two chart kinds of a few hundred points each take less Go than vendoring,
// licensing and embedding a library would, and the SVG can be tested as
// text.
package charts

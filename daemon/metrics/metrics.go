// Package metrics serves the daemon's metrics in Prometheus' text format
// (GET /metrics): the browser endpoints of the fleet (capacity, runs in
// progress, health, failures) and the queue of runs waiting for a browser.
// It reads them when scraped, from the sources it is given; it keeps no
// state of its own.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the metrics of the collectors in Prometheus' text format.
func Handler(collectors ...prometheus.Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors...)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

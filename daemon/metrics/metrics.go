// Package metrics serves the daemon's metrics in Prometheus' text format
// (GET /metrics): the browser endpoints of the fleet (capacity, runs in
// progress, health, failures) and the queue of runs waiting for a browser.
// It reads them when scraped, from the sources it is given; it keeps no
// state of its own.
//
// It also gives the same fleet the JSON shape that GET /healthz shows under
// "browsers" and `abctl daemon status` reads (Fleet).
package metrics

import (
	"net/http"

	"github.com/abctl/abctl/client"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/abctl/abctl/localrun/engine/browser"
)

// Handler serves the metrics of the collectors in Prometheus' text format.
func Handler(collectors ...prometheus.Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors...)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// FleetSource is what places runs on a fleet of browser endpoints: the
// local engine (engine.Engine) is one. FleetStatus is read at each scrape
// and each GET /healthz; ok is false when there is no fleet (runs use a
// local browser, or the one remote browser of --browser-address).
type FleetSource interface {
	FleetStatus() (status browser.FleetStatus, ok bool)
}

// The names of the fleet's metrics, and the label that names an endpoint
// (its name, as in `abctl daemon status`).
const (
	MetricEndpointCapacity   = "abctl_browser_endpoint_capacity"
	MetricEndpointInProgress = "abctl_browser_endpoint_runs_in_progress"
	MetricEndpointUp         = "abctl_browser_endpoint_up"
	MetricEndpointFailures   = "abctl_browser_endpoint_failures_total"
	MetricEndpointPlaced     = "abctl_browser_endpoint_placed_total"
	MetricQueueLength        = "abctl_browser_queue_length"
	MetricQueueWaits         = "abctl_browser_queue_waits_total"
	MetricQueueTimeouts      = "abctl_browser_queue_timeouts_total"

	LabelEndpoint = "endpoint"
)

// fleetCollector is the prometheus.Collector of a fleet: it asks its
// source at each scrape, so the numbers are those of that moment.
type fleetCollector struct {
	src FleetSource

	capacity, inProgress, up, failures, placed *prometheus.Desc
	queueLength, queueWaits, queueTimeouts     *prometheus.Desc
}

// NewFleetCollector returns the collector of the fleet's metrics, one
// series per endpoint (labelled with its name) and the queue's. Without a
// fleet (src nil, or its FleetStatus not ok) it gives the queue's metrics
// at 0 and no endpoint series, so that dashboards and alerts find them on
// every daemon.
func NewFleetCollector(src FleetSource) prometheus.Collector {
	endpoint := []string{LabelEndpoint}
	return &fleetCollector{
		src:        src,
		capacity:   prometheus.NewDesc(MetricEndpointCapacity, "Sessions the browser endpoint takes at once.", endpoint, nil),
		inProgress: prometheus.NewDesc(MetricEndpointInProgress, "Sessions (runs, run_action and browser sessions) open on the browser endpoint now.", endpoint, nil),
		up:         prometheus.NewDesc(MetricEndpointUp, "1 while the browser endpoint is healthy and takes new sessions, 0 while it is down.", endpoint, nil),
		failures: prometheus.NewDesc(MetricEndpointFailures,
			"Sessions that ended because the browser endpoint failed, and connections to it that failed.", endpoint, nil),
		placed:        prometheus.NewDesc(MetricEndpointPlaced, "Sessions placed on the browser endpoint.", endpoint, nil),
		queueLength:   prometheus.NewDesc(MetricQueueLength, "Runs waiting now for a browser endpoint with room.", nil, nil),
		queueWaits:    prometheus.NewDesc(MetricQueueWaits, "Runs that had to wait for a browser endpoint with room.", nil, nil),
		queueTimeouts: prometheus.NewDesc(MetricQueueTimeouts, "Runs that gave up waiting for a browser endpoint with room.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.capacity, c.inProgress, c.up, c.failures, c.placed, c.queueLength, c.queueWaits, c.queueTimeouts} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	var st browser.FleetStatus
	if c.src != nil {
		st, _ = c.src.FleetStatus()
	}
	for _, e := range st.Endpoints {
		up := 0.0
		if e.Healthy {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(c.capacity, prometheus.GaugeValue, float64(e.Capacity), e.Name)
		ch <- prometheus.MustNewConstMetric(c.inProgress, prometheus.GaugeValue, float64(e.InUse), e.Name)
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, e.Name)
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.CounterValue, float64(e.Failures), e.Name)
		ch <- prometheus.MustNewConstMetric(c.placed, prometheus.CounterValue, float64(e.Placed), e.Name)
	}
	ch <- prometheus.MustNewConstMetric(c.queueLength, prometheus.GaugeValue, float64(st.Queued))
	ch <- prometheus.MustNewConstMetric(c.queueWaits, prometheus.CounterValue, float64(st.QueueWaits))
	ch <- prometheus.MustNewConstMetric(c.queueTimeouts, prometheus.CounterValue, float64(st.QueueTimeouts))
}

// Health returns src's fleet as GET /healthz shows it; ok is false when
// there is none (src nil, or its FleetStatus not ok).
func Health(src FleetSource) (fleet client.BrowserFleet, ok bool) {
	if src == nil {
		return client.BrowserFleet{}, false
	}
	st, ok := src.FleetStatus()
	if !ok {
		return client.BrowserFleet{}, false
	}
	return FleetOf(st), true
}

// FleetOf is st in the wire shape of GET /healthz (client.BrowserFleet).
func FleetOf(st browser.FleetStatus) client.BrowserFleet {
	f := client.BrowserFleet{Endpoints: make([]client.BrowserEndpointStatus, len(st.Endpoints)), Queued: st.Queued, QueueWaits: st.QueueWaits, QueueTimeouts: st.QueueTimeouts}
	for i, e := range st.Endpoints {
		f.Endpoints[i] = client.BrowserEndpointStatus{
			Name: e.Name, URL: e.URL, Capacity: e.Capacity, InUse: e.InUse, Healthy: e.Healthy,
			LastError: e.LastError, Failures: e.Failures, Placed: e.Placed,
		}
	}
	return f
}

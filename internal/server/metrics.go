package server

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ckpt-dev/ckpt"
)

// metrics are the server's Prometheus series, on a registry of its own so
// that two servers in one process (tests) do not collide.
type metrics struct {
	reg          *prometheus.Registry
	appends      *prometheus.CounterVec   // by result: appended, replayed, conflict, refused, error
	beats        prometheus.Counter       // beats recorded
	requests     *prometheus.HistogramVec // latency by route and status class
	subscribers  prometheus.Gauge         // open change-feed streams
	authFailures *prometheus.CounterVec   // by reason: missing, invalid, forbidden

	// The series every append counts in, looked up once.
	appended, replayed prometheus.Counter
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		appends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ckpt_appends_total", Help: "Appends by result: appended, replayed (a repeated idempotency key), conflict (If-Match), refused (invalid or forbidden), error.",
		}, []string{"result"}),
		beats: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ckpt_beats_total", Help: "Heartbeats recorded.",
		}),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ckpt_request_duration_seconds", Help: "Latency of API requests by route and status class (change-feed streams excluded).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "code"}),
		subscribers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ckpt_stream_subscribers", Help: "Open change-feed (server-sent events) streams.",
		}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ckpt_auth_failures_total", Help: "Refused requests by reason: missing (no token), invalid (unknown, revoked or wrong token), forbidden (scope or prefix).",
		}, []string{"reason"}),
	}
	for _, r := range []string{"appended", "replayed", "conflict", "refused", "error"} {
		m.appends.WithLabelValues(r)
	}
	m.appended, m.replayed = m.appends.WithLabelValues("appended"), m.appends.WithLabelValues("replayed")
	for _, r := range []string{"missing", "invalid", "forbidden"} {
		m.authFailures.WithLabelValues(r)
	}
	m.reg.MustRegister(m.appends, m.beats, m.requests, m.subscribers, m.authFailures,
		&livenessCollector{s: s},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.reg.MustRegister(s.opts.Collectors...)
	return m
}

// countAppend records the result of an append.
func (m *metrics) countAppend(replayed bool, err error) {
	switch code := ckpt.ErrorCode(err); {
	case err == nil && replayed:
		m.replayed.Inc()
	case err == nil:
		m.appended.Inc()
	case code == ckpt.CodeConflict:
		m.appends.WithLabelValues("conflict").Inc()
	case code == ckpt.CodeInvalid || code == ckpt.CodeForbidden || code == ckpt.CodeNotFound ||
		code == ckpt.CodeExists || code == ckpt.CodeCycleLimit:
		m.appends.WithLabelValues("refused").Inc()
	default:
		m.appends.WithLabelValues("error").Inc()
	}
}

// routeTimer records one route's request latencies by status class, each
// class's series looked up on its first request (a series appears in
// /metrics only once a request had that class) and kept: a request costs
// no label formatting or lookup.
type routeTimer struct {
	vec   *prometheus.HistogramVec
	route string
	class [6]atomic.Pointer[prometheus.Observer] // by status/100
}

func (t *routeTimer) observe(status int, d time.Duration) {
	c := status / 100
	if c < 1 || c >= len(t.class) {
		t.vec.WithLabelValues(t.route, fmt.Sprintf("%dxx", c)).Observe(d.Seconds())
		return
	}
	o := t.class[c].Load()
	if o == nil {
		obs := t.vec.WithLabelValues(t.route, fmt.Sprintf("%dxx", c))
		o = &obs
		t.class[c].Store(o)
	}
	(*o).Observe(d.Seconds())
}

// livenessCollector counts checkpoints by presence at scrape time
// (ckpt.PresenceOf, the rule of every view), and by the liveness alarm that
// presence raises. It pages through the store's summaries (a scrape costs a
// listing, not a read of every checkpoint) and gives up after a few seconds
// rather than hold the scrape.
type livenessCollector struct{ s *Server }

var (
	livenessDesc = prometheus.NewDesc("ckpt_checkpoints", "Checkpoints that are not archived, by the liveness alarm of their presence: live (working, busy, waiting, ended), warn, stale (stale or dead), or - for those that cannot go stale.", []string{"liveness"}, nil)
	presenceDesc = prometheus.NewDesc("ckpt_checkpoints_presence", "Checkpoints that are not archived, by presence: working, busy, waiting, ended, dead, warn, stale, or - for those that cannot go stale.", []string{"presence"}, nil)
)

func (c *livenessCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- livenessDesc
	ch <- presenceDesc
}

func (c *livenessCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	all, err := ckpt.ListAll(ctx, c.s.store, ckpt.Filter{})
	if err != nil && len(all) == 0 {
		ch <- prometheus.NewInvalidMetric(livenessDesc, err)
		ch <- prometheus.NewInvalidMetric(presenceDesc, err)
		return
	}
	now := c.s.now()
	alarms := map[ckpt.Liveness]float64{ckpt.Live: 0, ckpt.Warn: 0, ckpt.Stale: 0, ckpt.NotLive: 0}
	states := map[ckpt.PresenceState]float64{}
	for _, p := range []ckpt.PresenceState{ckpt.PresenceWorking, ckpt.PresenceBusy, ckpt.PresenceWaiting, ckpt.PresenceEnded,
		ckpt.PresenceDead, ckpt.PresenceWarn, ckpt.PresenceStale, ckpt.PresenceNone} {
		states[p] = 0
	}
	for i := range all {
		v := ckpt.PresenceOf(&all[i], now, c.s.opts.Thresholds, c.s.opts.Alive)
		alarms[v.Alarm()]++
		states[v.State]++
	}
	for l, n := range alarms {
		ch <- prometheus.MustNewConstMetric(livenessDesc, prometheus.GaugeValue, n, string(l))
	}
	for p, n := range states {
		ch <- prometheus.MustNewConstMetric(presenceDesc, prometheus.GaugeValue, n, string(p))
	}
}

package servercli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/webhook"
)

// webhookCounter counts deliveries in ckpt_webhook_deliveries_total.
type webhookCounter struct{ v *prometheus.CounterVec }

func (c webhookCounter) Count(result string) { c.v.WithLabelValues(result).Inc() }

// webhooks builds the notifier of --webhook and --webhook-secret (nil when
// no webhook is given), the series it counts in /metrics, and the
// function that closes its memory.
func (o *ServeOptions) webhooks(ctx context.Context, st ckpt.Store) (_ *webhook.Notifier, _ prometheus.Collector, closeMemory func(), err error) {
	closeMemory = func() {}
	if len(o.Webhooks) == 0 {
		if o.WebhookSecret != "" {
			return nil, nil, nil, cmdutil.Usagef("--webhook-secret signs the bodies of --webhook: give a --webhook URL too")
		}
		return nil, nil, closeMemory, nil
	}
	// What was told is remembered next to the store, so that a restart
	// tells what changed while the server was down.
	var mem webhook.Memory
	if o.PG != "" {
		m, err := webhook.OpenPGMemory(ctx, o.PG)
		if err != nil {
			return nil, nil, nil, err
		}
		mem, closeMemory = m, m.Close
	} else if o.storeDir != "" {
		mem = webhook.NewFileMemory(filepath.Join(o.storeDir, webhook.MemoryFileName))
	}
	n, counts, err := o.newNotifier(st, mem)
	if err != nil {
		closeMemory()
		return nil, nil, nil, err
	}
	return n, counts, closeMemory, nil
}

// newNotifier builds the notifier of --webhook and --webhook-secret over
// mem.
func (o *ServeOptions) newNotifier(st ckpt.Store, mem webhook.Memory) (*webhook.Notifier, prometheus.Collector, error) {
	var targets []webhook.Target
	for _, raw := range o.Webhooks {
		t, err := webhook.ParseTarget(raw)
		if err != nil {
			return nil, nil, cmdutil.UsageError(err)
		}
		targets = append(targets, t)
	}
	var secret []byte
	if o.WebhookSecret != "" {
		b, err := os.ReadFile(o.WebhookSecret)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: --webhook-secret: %v (give a file holding the shared secret)", ckpt.ErrInvalid, err)
		}
		if secret = bytes.TrimSpace(b); len(secret) == 0 {
			return nil, nil, cmdutil.Usagef("--webhook-secret %s is empty: put the shared secret in it", o.WebhookSecret)
		}
	}
	counts := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ckpt_webhook_deliveries_total",
		Help: "Webhook deliveries by result: delivered, retried (an attempt failed and is tried again), failed (given up), dropped (the target's queue was full).",
	}, []string{"result"})
	for _, r := range []string{"delivered", "retried", "failed", "dropped"} {
		counts.WithLabelValues(r)
	}
	n, err := webhook.New(webhook.Options{Store: st, Targets: targets, Secret: secret, Alive: process.Alive, Now: o.Now,
		Memory: mem, Count: webhookCounter{counts}, Warn: func(msg string) { cmdutil.PrintWarning(o.IO.ErrOut, msg) }})
	if err != nil {
		return nil, nil, err
	}
	return n, counts, nil
}

// runWebhooks runs n until ctx is done; the returned function waits for it.
func runWebhooks(ctx context.Context, n *webhook.Notifier) (wait func()) {
	if n == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() { defer close(done); n.Run(ctx) }()
	return func() { <-done }
}

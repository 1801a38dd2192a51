package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// The operator's webhook commands: endpoints per merchant, the delivery log, redelivery.

// webhookCommand parses a webhooks subcommand's flags, lets check refuse bad ones before any
// database is opened, and opens the app.
func webhookCommand(ctx context.Context, name string, args []string, stderr io.Writer, define func(fs *flag.FlagSet),
	check func() error) (*app.App, error) {
	fs := flag.NewFlagSet("webhooks "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	define(fs)
	if err := fs.Parse(args); err != nil {
		return nil, errUsage
	}
	if err := check(); err != nil {
		return nil, err
	}
	return operatorApp(ctx, *dbURL, stderr)
}

func parseID(stderr io.Writer, cmd, flagName, v string) (uuid.UUID, error) {
	id, err := uuid.Parse(v)
	if err != nil {
		fmt.Fprintf(stderr, "webhooks %s: --%s must be an id\n", cmd, flagName)
		return uuid.Nil, errUsage
	}
	return id, nil
}

type endpointJSON struct {
	ID             uuid.UUID   `json:"id"`
	MerchantID     uuid.UUID   `json:"merchantId"`
	Mode           domain.Mode `json:"mode"`
	URL            string      `json:"url"`
	Events         []string    `json:"events"` // empty: every event type
	Enabled        bool        `json:"enabled"`
	DisabledReason *string     `json:"disabledReason,omitempty"`
	Secret         string      `json:"secret,omitempty"` // on creation and rotation only
	CreatedAt      time.Time   `json:"createdAt"`
}

func endpointOut(e store.Endpoint, secret string) endpointJSON {
	out := endpointJSON{ID: e.ID, MerchantID: e.MerchantID, Mode: e.Mode, URL: e.URL, Events: []string{}, Enabled: e.Enabled,
		DisabledReason: e.DisabledReason, Secret: secret, CreatedAt: e.CreatedAt}
	for _, t := range e.EventTypes {
		out.Events = append(out.Events, string(t))
	}
	return out
}

func cmdWebhooksCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var merchant, url, events, modeFlag *string
	var id uuid.UUID
	var mode domain.Mode
	var asJSON *bool
	a, err := webhookCommand(ctx, "create", args, stderr, func(fs *flag.FlagSet) {
		merchant = fs.String("merchant", "", "merchant id (required)")
		modeFlag = fs.String("mode", "test", "the mode whose events it receives: test or live")
		url = fs.String("url", "", "the endpoint's URL (https; required)")
		events = fs.String("events", "", "event types, comma-separated (default: all)")
		asJSON = fs.Bool("json", false, "print one JSON object (with the secret)")
	}, func() (err error) {
		if mode, err = domain.ParseMode(*modeFlag); err != nil {
			fmt.Fprintf(stderr, "webhooks create: --%v\n", err)
			return errUsage
		}
		id, err = parseID(stderr, "create", "merchant", *merchant)
		return err
	})
	if err != nil {
		return err
	}
	defer a.Close()
	var types []string
	if *events != "" {
		types = strings.Split(*events, ",")
	}
	c, err := a.Webhooks.Create(ctx, id, mode, *url, types)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, endpointOut(c.Endpoint, c.Secret))
	}
	fmt.Fprintf(stdout, "endpoint %s → %s (%s-mode events)\nsigning secret: %s   (shown once; verify webhook-signature with it)\n",
		c.Endpoint.ID, c.Endpoint.URL, c.Endpoint.Mode, c.Secret)
	return nil
}

func cmdWebhooksList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var merchant *string
	var id uuid.UUID
	var asJSON *bool
	a, err := webhookCommand(ctx, "list", args, stderr, func(fs *flag.FlagSet) {
		merchant = fs.String("merchant", "", "merchant id (required)")
		asJSON = fs.Bool("json", false, "print JSON")
	}, func() (err error) {
		id, err = parseID(stderr, "list", "merchant", *merchant)
		return err
	})
	if err != nil {
		return err
	}
	defer a.Close()
	eps, err := a.Webhooks.List(ctx, id)
	if err != nil {
		return err
	}
	out := make([]endpointJSON, len(eps))
	for i, e := range eps {
		out[i] = endpointOut(e, "")
	}
	if *asJSON {
		return printJSON(stdout, out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ENDPOINT\tURL\tEVENTS\tENABLED")
	for _, e := range out {
		ev := strings.Join(e.Events, ",")
		if ev == "" {
			ev = "all"
		}
		enabled := "yes"
		if !e.Enabled {
			enabled = "no: " + *e.DisabledReason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.ID, e.URL, ev, enabled)
	}
	return tw.Flush()
}

func cmdWebhooksDelete(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var endpoint *string
	var id uuid.UUID
	a, err := webhookCommand(ctx, "delete", args, stderr, func(fs *flag.FlagSet) {
		endpoint = fs.String("endpoint", "", "endpoint id (required)")
	}, func() (err error) {
		id, err = parseID(stderr, "delete", "endpoint", *endpoint)
		return err
	})
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.Webhooks.Delete(ctx, uuid.Nil, id); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "endpoint %s deleted; its pending deliveries stopped (the delivery log stays)\n", id)
	return nil
}

func cmdWebhooksRotate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var endpoint *string
	var id uuid.UUID
	var asJSON *bool
	a, err := webhookCommand(ctx, "rotate-secret", args, stderr, func(fs *flag.FlagSet) {
		endpoint = fs.String("endpoint", "", "endpoint id (required)")
		asJSON = fs.Bool("json", false, "print one JSON object")
	}, func() (err error) {
		id, err = parseID(stderr, "rotate-secret", "endpoint", *endpoint)
		return err
	})
	if err != nil {
		return err
	}
	defer a.Close()
	secret, err := a.Webhooks.RotateSecret(ctx, uuid.Nil, id)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, map[string]any{"id": id, "secret": secret})
	}
	fmt.Fprintf(stdout, "new signing secret: %s   (shown once; the old one also signs for 24 h)\n", secret)
	return nil
}

type attemptJSON struct {
	Attempt      int64     `json:"attempt"`
	StartedAt    time.Time `json:"startedAt"`
	LatencyMS    int64     `json:"latencyMs"`
	StatusCode   *int64    `json:"statusCode"`
	Error        *string   `json:"error,omitempty"`
	ResponseHead *string   `json:"responseHead,omitempty"`
}

type deliveryJSON struct {
	ID            uuid.UUID     `json:"id"`
	EventID       string        `json:"eventId"`
	EndpointID    uuid.UUID     `json:"endpointId"`
	Status        string        `json:"status"`
	NextAttemptAt *time.Time    `json:"nextAttemptAt,omitempty"`
	CreatedAt     time.Time     `json:"createdAt"`
	Attempts      []attemptJSON `json:"attempts"`
}

func cmdWebhooksDeliveries(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var merchant, endpoint, event *string
	var f store.DeliveryFilter
	var limit *int
	var asJSON *bool
	a, err := webhookCommand(ctx, "deliveries", args, stderr, func(fs *flag.FlagSet) {
		merchant = fs.String("merchant", "", "merchant id (required)")
		endpoint = fs.String("endpoint", "", "only this endpoint's")
		event = fs.String("event", "", "only this event's")
		limit = fs.Int("limit", 50, "at most this many, newest first")
		asJSON = fs.Bool("json", false, "print JSON")
	}, func() error {
		id, err := parseID(stderr, "deliveries", "merchant", *merchant)
		if err != nil {
			return err
		}
		f = store.DeliveryFilter{MerchantID: id, EventID: *event, Limit: *limit}
		if *endpoint != "" {
			eid, err := parseID(stderr, "deliveries", "endpoint", *endpoint)
			if err != nil {
				return err
			}
			f.EndpointID = &eid
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer a.Close()
	ds, err := a.Webhooks.Deliveries(ctx, f)
	if err != nil {
		return err
	}
	out := make([]deliveryJSON, len(ds))
	for i, d := range ds {
		out[i] = deliveryJSON{ID: d.ID, EventID: d.EventID, EndpointID: d.EndpointID, Status: string(d.Status), CreatedAt: d.CreatedAt,
			Attempts: []attemptJSON{}}
		if d.Status == store.DeliveryPending {
			next := d.NextAttemptAt
			out[i].NextAttemptAt = &next
		}
		for _, at := range d.Log {
			out[i].Attempts = append(out[i].Attempts, attemptJSON{Attempt: at.Attempt, StartedAt: at.StartedAt, LatencyMS: at.LatencyMS,
				StatusCode: at.StatusCode, Error: at.Error, ResponseHead: at.ResponseHead})
		}
	}
	if *asJSON {
		return printJSON(stdout, out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "EVENT\tENDPOINT\tSTATUS\tATTEMPTS\tLAST")
	for _, d := range out {
		last := "-"
		if n := len(d.Attempts); n > 0 {
			at := d.Attempts[n-1]
			code := "no answer"
			if at.StatusCode != nil {
				code = fmt.Sprintf("HTTP %d", *at.StatusCode)
			}
			last = fmt.Sprintf("%s %s in %d ms", at.StartedAt.Format(time.RFC3339), code, at.LatencyMS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", d.EventID, d.EndpointID, d.Status, len(d.Attempts), last)
	}
	return tw.Flush()
}

func cmdWebhooksRedeliver(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var event, endpoint *string
	var eid *uuid.UUID
	a, err := webhookCommand(ctx, "redeliver", args, stderr, func(fs *flag.FlagSet) {
		event = fs.String("event", "", "event id, evt_… (required)")
		endpoint = fs.String("endpoint", "", "only to this endpoint (default: every endpoint subscribed to it)")
	}, func() error {
		if !strings.HasPrefix(*event, "evt_") {
			fmt.Fprintln(stderr, "webhooks redeliver: --event must be an event id (evt_…)")
			return errUsage
		}
		if *endpoint != "" {
			id, err := parseID(stderr, "redeliver", "endpoint", *endpoint)
			if err != nil {
				return err
			}
			eid = &id
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer a.Close()
	ds, err := a.Webhooks.Redeliver(ctx, uuid.Nil, nil, *event, eid)
	if err != nil {
		return err
	}
	for _, d := range ds {
		fmt.Fprintf(stdout, "delivery %s of %s to endpoint %s scheduled now (same webhook-id)\n", d.ID, d.EventID, d.EndpointID)
	}
	if len(ds) == 0 {
		fmt.Fprintln(stdout, "no enabled endpoint is subscribed to this event")
	}
	return nil
}

package server

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/metrics"
)

// routeSet is the set of registered route patterns, filled once New has registered them all
// (before the server serves, so it is read-only while requests run).
type routeSet map[string]bool

// label is the route label of c: the router's pattern when it is a registered route, else
// metrics.UnmatchedRoute. Echo leaves a partial match's prefix in c.Path() on a 404; the raw
// URL is never used, so the label's cardinality is bounded by the routes.
func (s routeSet) label(c echo.Context) string {
	if p := c.Path(); s[p] {
		return p
	}
	return metrics.UnmatchedRoute
}

// observe counts every answered request, by method, route pattern and status, with its
// duration. It runs outside accessLog, which has rendered any error by the time it returns,
// so the status is the one sent. GET /metrics counts itself like any other route.
func observe(m *metrics.Metrics, routes routeSet) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if m == nil {
			return next
		}
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			m.Request(c.Request().Method, routes.label(c), c.Response().Status, time.Since(start))
			return err
		}
	}
}

package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/domain"
)

// Reading the request body from the client.

// defaultBodyReadTimeout bounds the reading of a request body when Deps.BodyReadTimeout is zero.
const defaultBodyReadTimeout = 10 * time.Second

// errorWriteTimeout is the time left to write the error answering a body that failed to arrive,
// whatever remains of the server's WriteTimeout (a long BodyReadTimeout may have used it up).
const errorWriteTimeout = 5 * time.Second

// bodyReadError is a failure to receive the request body: the client's fault, never a 5xx.
type bodyReadError struct{ err error }

func (e *bodyReadError) Error() string { return "read request body: " + e.err.Error() }
func (e *bodyReadError) Unwrap() error { return e.err }

// apiError is the error table row of the failure: 413 over the size limit, 408 when the body
// did not arrive in time, 400 when it ended early (or could not be decoded as HTTP framing).
func (e *bodyReadError) apiError() *apiError {
	var (
		maxBytes *http.MaxBytesError
		httpErr  *echo.HTTPError
		netErr   net.Error
	)
	switch {
	case errors.As(e.err, &maxBytes),
		errors.As(e.err, &httpErr) && httpErr.Code == http.StatusRequestEntityTooLarge: // middleware.BodyLimit
		return &apiError{http.StatusRequestEntityTooLarge, typeInvalidRequest, domain.CodeRequestTooLarge, "Request body too large.", ""}
	case errors.Is(e.err, os.ErrDeadlineExceeded), errors.As(e.err, &netErr) && netErr.Timeout():
		return &apiError{http.StatusRequestTimeout, typeInvalidRequest, domain.CodeRequestTimeout, "The request body was not received in time.", ""}
	case errors.Is(e.err, io.ErrUnexpectedEOF), errors.Is(e.err, syscall.ECONNRESET):
		return invalidRequest(domain.CodeParameterInvalid, "", "The request body ended before its declared length.")
	}
	return invalidRequest(domain.CodeParameterInvalid, "", "The request body could not be read.")
}

// readBody reads the whole body; a failure is a *bodyReadError.
func readBody(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, &bodyReadError{err}
	}
	return b, nil
}

// bodyReadDeadline bounds the time a client may take to send its request body: a stalled body
// is answered 408 after timeout (capped by the server's ReadTimeout) instead of holding the
// handler until ReadTimeout. The deadline is the connection's read deadline, which net/http
// manages per request: it clears it when the body has been read to its end (to watch, without a
// deadline, for the client going away while the handler runs) and sets it afresh for the next
// request of a kept-alive connection. So the deadline covers the body only, and a request
// context canceled after the body is a client that went away (see clientGone).
func bodyReadDeadline(timeout time.Duration) echo.MiddlewareFunc {
	if timeout <= 0 {
		timeout = defaultBodyReadTimeout
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.Body == nil || req.Body == http.NoBody || req.ContentLength == 0 {
				return next(c)
			}
			rc := http.NewResponseController(c.Response().Writer)
			// When ReadTimeout is the tighter bound, its deadline (from the request's start) stays.
			if srv, ok := req.Context().Value(http.ServerContextKey).(*http.Server); !ok || srv.ReadTimeout <= 0 || srv.ReadTimeout > timeout {
				_ = rc.SetReadDeadline(time.Now().Add(timeout)) // unsupported (a test recorder): no bound
			}
			err := next(c)
			var be *bodyReadError
			if errors.As(err, &be) && be.apiError().Status != http.StatusRequestEntityTooLarge {
				// The rest of the body is unknown: the connection cannot carry another request.
				// (net/http would close it too, having failed to discard the rest.)
				c.Response().Header().Set(echo.HeaderConnection, "close")
				_ = rc.SetWriteDeadline(time.Now().Add(errorWriteTimeout))
			}
			return err
		}
	}
}

// clientGone reports whether the request's context was canceled because the client went away.
// net/http cancels it when a read on the connection fails: once the body has been read, only
// the client leaving does that (a failure while reading the body is a bodyReadError, classified
// before this is asked).
func clientGone(c echo.Context) bool {
	return errors.Is(c.Request().Context().Err(), context.Canceled)
}

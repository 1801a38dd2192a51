package chaintest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func every(k, n int64) bool { return k > 0 && n%k == 0 }

func (p *FlakyProxy) serve(w http.ResponseWriter, r *http.Request) {
	n := p.n.Add(1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if every(p.dropN.Load(), n) {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler) // closes the connection without an answer
	}
	if every(p.delayN.Load(), n) {
		t := time.NewTimer(time.Duration(p.delayD.Load()))
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		case <-p.done:
			t.Stop()
			return
		}
	}
	if every(p.fail429.Load(), n) {
		if s := p.retryAfter.Load(); s >= 0 {
			w.Header().Set("Retry-After", strconv.FormatInt(s, 10))
		}
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
		return
	}
	if every(p.fail5xx.Load(), n) {
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	if every(p.failRPC.Load(), n) {
		reqs, batch, err := parse(body)
		if err != nil {
			http.Error(w, "bad JSON", http.StatusBadRequest)
			return
		}
		out := make([]response, len(reqs))
		for i, req := range reqs {
			out[i] = errorFor(req, -32005, *p.rpcMsg.Load())
		}
		if batch {
			writeJSON(w, out)
		} else {
			writeJSON(w, out[0])
		}
		return
	}
	if p.answerChainID(w, body) {
		return
	}
	if p.rangeLimit.Load() > 0 || p.failElem.Load() > 0 {
		if p.refuseSome(r.Context(), w, body) {
			return
		}
	}
	p.forward(r.Context(), w, body)
}

// refuseSome answers with an error the requests of body that RangeLimit or
// FailBatchElementEvery refuse, forwarding the rest; it returns false when nothing was refused
// (the caller forwards body).
func (p *FlakyProxy) refuseSome(ctx context.Context, w http.ResponseWriter, body []byte) bool {
	reqs, batch, err := parse(body)
	if err != nil {
		return false
	}
	lim, k := p.rangeLimit.Load(), p.failElem.Load()
	var head *uint64
	var refused []response
	var rest []request
	for i, req := range reqs {
		switch {
		case lim > 0 && req.Method == "eth_getLogs" && p.tooLong(ctx, req, lim, &head):
			refused = append(refused, errorFor(req, -32005, "query returned more than 10000 results"))
		case batch && every(k, int64(i+1)):
			refused = append(refused, errorFor(req, -32005, *p.rpcMsg.Load()))
		default:
			rest = append(rest, req)
		}
	}
	if len(refused) == 0 {
		return false
	}
	if !batch {
		writeJSON(w, refused[0])
		return true
	}
	out := make([]json.RawMessage, 0, len(reqs))
	for _, e := range refused {
		b, _ := json.Marshal(e)
		out = append(out, b)
	}
	if len(rest) > 0 {
		fwd, _ := json.Marshal(rest)
		answers, err := p.roundTrip(ctx, fwd)
		if err != nil {
			http.Error(w, "upstream: "+err.Error(), http.StatusBadGateway)
			return true
		}
		var more []json.RawMessage
		if err := json.Unmarshal(answers, &more); err != nil {
			http.Error(w, "upstream answered a batch with something else", http.StatusBadGateway)
			return true
		}
		out = append(out, more...)
	}
	writeJSON(w, out)
	return true
}

func (p *FlakyProxy) tooLong(ctx context.Context, req request, lim uint64, head **uint64) bool {
	var params []struct {
		FromBlock *string `json:"fromBlock"`
		ToBlock   *string `json:"toBlock"`
		BlockHash *string `json:"blockHash"`
	}
	if err := json.Unmarshal(req.Params, &params); err != nil || len(params) == 0 || params[0].BlockHash != nil {
		return false
	}
	resolve := func(s *string) (uint64, bool) {
		if s == nil || *s == "latest" || *s == "pending" || *s == "safe" || *s == "finalized" {
			if *head == nil {
				h, err := p.blockNumber(ctx)
				if err != nil {
					return 0, false
				}
				*head = &h
			}
			return **head, true
		}
		if *s == "earliest" {
			return 0, true
		}
		v, err := strconv.ParseUint(strings.TrimPrefix(*s, "0x"), 16, 64)
		return v, err == nil
	}
	from, ok1 := resolve(params[0].FromBlock)
	to, ok2 := resolve(params[0].ToBlock)
	return ok1 && ok2 && to >= from && to-from+1 > lim
}

func (p *FlakyProxy) blockNumber(ctx context.Context) (uint64, error) {
	b, err := p.roundTrip(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`))
	if err != nil {
		return 0, err
	}
	var resp struct {
		Result string `json:"result"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimPrefix(resp.Result, "0x"), 16, 64)
}

func (p *FlakyProxy) roundTrip(ctx context.Context, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, b)
	}
	return b, nil
}

func (p *FlakyProxy) forward(ctx context.Context, w http.ResponseWriter, body []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.target, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		http.Error(w, "upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

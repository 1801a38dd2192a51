package chaintest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
)

// NewFlakyProxyAt is NewFlakyProxy listening on addr (host:port): a URL configured before the
// proxy runs (connections refused until then) reaches it once it is started, and again after a
// Close and a new proxy on the same address.
func NewFlakyProxyAt(target, addr string) (*FlakyProxy, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p := &FlakyProxy{target: target, client: &http.Client{}, done: make(chan struct{})}
	p.retryAfter.Store(-1)
	msg := "limit exceeded"
	p.rpcMsg.Store(&msg)
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	_ = p.srv.Listener.Close()
	p.srv.Listener = l
	p.srv.Start()
	return p, nil
}

// AnswerChainID makes the proxy answer eth_chainId (a single request, not in a batch) with id
// itself, as a node of another chain would; everything else is still forwarded. 0 forwards
// eth_chainId again.
func (p *FlakyProxy) AnswerChainID(id int64) { p.chainID.Store(id) }

func (p *FlakyProxy) answerChainID(w http.ResponseWriter, body []byte) bool {
	id := p.chainID.Load()
	if id == 0 {
		return false
	}
	reqs, batch, err := parse(body)
	if err != nil || batch || len(reqs) != 1 || reqs[0].Method != "eth_chainId" {
		return false
	}
	req := reqs[0]
	if len(req.ID) == 0 {
		req.ID = []byte("null")
	}
	writeJSON(w, struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Result  string `json:"result"`
	}{"2.0", req.ID, "0x" + strconv.FormatInt(id, 16)})
	return true
}
